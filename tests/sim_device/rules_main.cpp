// Rule scenarios for tests/test_sim_device.py. Each scenario sits between "// SCENARIO: name"
// markers; every line that must be reported carries "// EXPECT: <id>" and nothing else may be
// reported. Usage: rules_main SCENARIO ARCH DIAG_FILE
#include <fcntl.h>
#include <string>
#include "kernel_operator.h"

using namespace AscendC;
static half g_half[4096];
static float g_float[4096];
static int g_arch = 2201;

// SCENARIO: clean_double_buffer
static void clean_double_buffer() {
    TPipe pipe;
    TQue<TPosition::VECIN, 2> qx, qy;
    TQue<TPosition::VECOUT, 2> qz;
    constexpr int tile = 256;
    pipe.InitBuffer(qx, 2, tile * sizeof(half));
    pipe.InitBuffer(qy, 2, tile * sizeof(half));
    pipe.InitBuffer(qz, 2, tile * sizeof(half));
    GlobalTensor<half> x, y, z;
    x.SetGlobalBuffer(g_half, 1024); y.SetGlobalBuffer(g_half + 1024, 1024); z.SetGlobalBuffer(g_half + 2048, 1024);
    for (int i = 0; i < 4; ++i) {
        auto a = qx.AllocTensor<half>(); auto b = qy.AllocTensor<half>();
        DataCopy(a, x[i * tile], tile); DataCopy(b, y[i * tile], tile);
        qx.EnQue(a); qy.EnQue(b);
        auto a2 = qx.DeQue<half>(); auto b2 = qy.DeQue<half>();
        auto c = qz.AllocTensor<half>();
        Add(c, a2, b2, tile);
        qz.EnQue<half>(c);
        qx.FreeTensor(a2); qy.FreeTensor(b2);
        auto c2 = qz.DeQue<half>();
        DataCopy(z[i * tile], c2, tile);
        qz.FreeTensor(c2);
    }
}

// SCENARIO: clean_idioms
// Spellings found in real kernels; none of them breaks a rule.
static void clean_idioms() {
    TPipe* pipe = GetTPipePtr();
    TPipe own;
    pipe = &own;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> bind;
    TBuf<QuePosition::VECCALC> calc;
    TBuf<> work;
    pipe->InitBuffer(bind, 1, 1024);
    pipe->InitBuffer(calc, 4096);
    pipe->InitBuffer(work, 1024);
    GlobalTensor<half> xg;
    xg.SetGlobalBuffer((__gm__ half*)g_half + 16 * GetBlockIdx(), 200);
    LocalTensor<half> x = bind.AllocTensor<half>();
    DataCopyExtParams cp{1, (uint32_t)(100 * sizeof(half)), 0, 0, 0};
    DataCopyPadExtParams<half> pad{true, 0, 0, (half)0};
    DataCopyPad(x, xg, cp, pad);
    DataCopyPad(x, xg, {1, 200, 0, 0, 0}, {false, 0, 0, 0});
    bind.EnQue<half>(x);
    LocalTensor<half> xv = bind.DeQue<half>();
    LocalTensor<float> f = calc.GetWithOffset<float>(256, 0);
    LocalTensor<float> g = calc.GetWithOffset<float>(256, 1024);
    LocalTensor<float> w = work.Get<float>();
    Cast(f, xv, RoundMode::CAST_NONE, 128);
    Muls(f, f, (float)0.5, 128);
    Adds<float>(f, f, 1, 128);
    Duplicate<float>(g, 0.0f, 256);
    Max(g, f, g, 128);
    ReduceSum<float>(w, f, w, 128);
    WholeReduceSum<float>(g, f, 64, 2, 1, 1, 8);
    AscendC::PipeBarrier<PIPE_V>();
    Compares(xv.ReinterpretCast<uint8_t>(), f, 0.75f, CMPMODE::GT, 128);
    Select(g, xv.ReinterpretCast<uint8_t>(), f, 2.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 128);
    SetVectorMask<float>(0, 0xff);
    Mul<float, false>(f, f, g, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
    ResetMask();
    SetMaskCount();
    SetVectorMask<float, MaskMode::COUNTER>(0, 100);
    uint64_t placeholder[2] = {MASK_PLACEHOLDER_LIST[0], MASK_PLACEHOLDER_LIST[1]};   // the mask[] form takes a non-const array
    Add<float, false>(f, f, g, placeholder, 1, {1, 1, 1, 8, 8, 8});
    SetMaskNorm();
    ResetMask();
    Cast(xv, f, RoundMode::CAST_RINT, 128);
    event_t e = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
    SetFlag<HardEvent::V_S>(e);
    WaitFlag<HardEvent::V_S>(e);
    float first = w.GetValue(0);
    half h = xv.GetValue(1) * (half)2;
    h += 1;
    AscendC::printf("first=%f h=%f block=%ld\n", first, h, (long)GetBlockIdx());
    xv.SetValue(0, h);
    bind.FreeTensor(xv);
    DataCopyParams legacy;
    legacy.blockCount = 1;
    legacy.blockLen = 8;
    LocalTensor<float> y = calc.Get<float>(64);
    GlobalTensor<float> fg;
    fg.SetGlobalBuffer(g_float, 64);
    DataCopy(y, fg, legacy);
}

// SCENARIO: ub_capacity
static void ub_capacity() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    TBuf<TPosition::VECCALC> big;
    pipe.InitBuffer(q, 2, 64 * 1024);
    pipe.InitBuffer(big, 100 * 1024);  // EXPECT: L2.UB_CAPACITY
}

// SCENARIO: buffer_count_total
static void buffer_count_total() {
    TPipe pipe;
    static TBuf<TPosition::VECCALC> bufs[65];
    for (int i = 0; i < 65; ++i) pipe.InitBuffer(bufs[i], 32);  // EXPECT: L2.BUFFER_COUNT
}

// SCENARIO: buffer_count_position
static void buffer_count_position() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q1, q2;
    pipe.InitBuffer(q1, 4, 1024);
    pipe.InitBuffer(q2, 5, 1024);  // EXPECT: L2.BUFFER_COUNT
}

// SCENARIO: align_32b
static void align_32b() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<half> t = b.Get<half>();
    Add(t, t[3], t, 64);  // EXPECT: L2.ALIGN_32B
    Add(t, t[16], t, 64);
}

// SCENARIO: datacopy_32b
static void datacopy_32b() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<half> t = b.Get<half>();
    GlobalTensor<half> g; g.SetGlobalBuffer(g_half, 64);
    for (int i = 0; i < 64; ++i) g_half[i] = half(1.0f);
    Duplicate(t, half(0), 64);
    PipeBarrier<PIPE_ALL>();
    DataCopy(t, g, 20);  // EXPECT: L2.DATACOPY_32B
    PipeBarrier<PIPE_ALL>();
    // the chip copies 32 B = 16 halfs: element 16 stays 0
    if (static_cast<float>(t.GetValue(15)) != 1.0f || static_cast<float>(t.GetValue(16)) != 0.0f) std::_Exit(3);
}

// SCENARIO: repeat_limit
static void repeat_limit() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 64 * 1024);
    LocalTensor<half> t = b.Get<half>();
    // The level-0 vector forms take a uint8_t repeatTime (a wider count is a build-time finding);
    // the whole-row reductions take an int32_t one, checked when they run.
    WholeReduceSum(t, t, 128, 300, 1, 1, 0);  // EXPECT: L2.REPEAT_LIMIT
}

// SCENARIO: mask_range
static void mask_range() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    LocalTensor<half> h = b.Get<half>();
    LocalTensor<float> f = b.Get<float>();
    Add(h, h, h, 129, 1, {1, 1, 1, 8, 8, 8});  // EXPECT: L2.MASK_RANGE
    Add(f, f, f, 64, 1, {1, 1, 1, 8, 8, 8});
    Mul(f, f, f, 65, 1, {1, 1, 1, 8, 8, 8});  // EXPECT: L2.MASK_RANGE
    uint64_t zero[2] = {0, 0};
    Sub(h, h, h, zero, 1, {1, 1, 1, 8, 8, 8});  // EXPECT: L2.MASK_RANGE
}

// SCENARIO: dtype_unsupported
static void dtype_unsupported() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    LocalTensor<bfloat16_t> x = b.Get<bfloat16_t>();
    LocalTensor<float> f = b.Get<float>();
    LocalTensor<half> h = b.Get<half>();
    LocalTensor<int32_t> i32 = b.Get<int32_t>();
    Add(x, x, x, 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
    Exp(x, x, 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
    Cast(f, x, RoundMode::CAST_NONE, 64);
    Cast(i32, h, RoundMode::CAST_NONE, 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: dtype_3510
static void dtype_3510() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    LocalTensor<bfloat16_t> x = b.Get<bfloat16_t>();
    Add(x, x, x, 64);
    Exp(x, x, 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: deque_empty
static void deque_empty() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    auto t = q.DeQue<half>();  // EXPECT: L2.QUEUE_PROTOCOL
    (void)t;
}

// SCENARIO: alloc_beyond
static void alloc_beyond() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    auto a = q.AllocTensor<half>();
    auto b = q.AllocTensor<half>();  // EXPECT: L2.QUEUE_PROTOCOL
    (void)a; (void)b;
}

// SCENARIO: queue_misuse
static void queue_misuse() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    TQue<TPosition::VECOUT, 1> o;
    pipe.InitBuffer(q, 2, 256);
    pipe.InitBuffer(o, 1, 256);
    auto a = q.AllocTensor<half>();
    auto b = q.AllocTensor<half>();
    q.EnQue(a);
    q.EnQue(b);  // EXPECT: L2.QUEUE_PROTOCOL
    auto a2 = q.DeQue<half>();
    auto b2 = q.DeQue<half>();
    q.FreeTensor(a2);
    q.FreeTensor(a2);  // EXPECT: L2.QUEUE_PROTOCOL
    Abs(b2, a2, 64);  // EXPECT: L2.QUEUE_PROTOCOL
    q.FreeTensor(b2);
    auto held = o.AllocTensor<half>();  // EXPECT: L2.QUEUE_PROTOCOL
    (void)held;
}

// SCENARIO: gm_bounds
static void gm_bounds() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096);
    LocalTensor<float> t = b.Get<float>();
    GlobalTensor<float> g; g.SetGlobalBuffer(g_float, 100);
    DataCopy(t, g, 96);
    DataCopy(t, g[64], 64);  // EXPECT: L2.GM_BOUNDS
}

// SCENARIO: gm_bounds_value
static void gm_bounds_value() {
    GlobalTensor<float> g; g.SetGlobalBuffer(g_float, 100);
    g.SetValue(99, 1.0f);
    float v = g.GetValue(100);  // EXPECT: L2.GM_BOUNDS
    (void)v;
}

// SCENARIO: ub_bounds
static void ub_bounds() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b, c;
    pipe.InitBuffer(b, 1024);
    pipe.InitBuffer(c, 1024);
    LocalTensor<float> t = b.Get<float>();
    Muls(t, t, 2.0f, 256);
    Muls(t, t, 2.0f, 257);  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: ub_bounds_value
static void ub_bounds_value() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 64);
    LocalTensor<float> t = b.Get<float>();
    t.SetValue(15, 1.0f);
    t.SetValue(16, 1.0f);  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: sync_wait_without_set
static void sync_wait_without_set() {
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);  // EXPECT: L2.SYNC_PAIRING
}

// SCENARIO: sync_left_set
static void sync_left_set() {
    TPipe pipe;
    event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
    SetFlag<HardEvent::V_S>(e);  // EXPECT: L2.SYNC_PAIRING
    int id = pipe.AllocEventID<HardEvent::MTE3_MTE2>();
    SetFlag<HardEvent::MTE3_MTE2>(id);
    WaitFlag<HardEvent::MTE3_MTE2>(id);
    pipe.ReleaseEventID<HardEvent::MTE3_MTE2>(id);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID2);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID2);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID3);  // EXPECT: L2.SYNC_PAIRING
    SetFlag<HardEvent::S_V>(EVENT_ID4);
    SetFlag<HardEvent::S_V>(EVENT_ID4);  // EXPECT: L2.SYNC_PAIRING
    WaitFlag<HardEvent::S_V>(EVENT_ID4);
}

// SCENARIO: datacopypad_310p
static void datacopypad_310p() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<float> t = b.Get<float>();
    GlobalTensor<float> g; g.SetGlobalBuffer(g_float, 64);
    DataCopy(t, g, 64);
    DataCopyPad(t, g, {1, 12, 0, 0, 0}, {false, 0, 0, 0.0f});  // EXPECT: L4.API_UNKNOWN
}

// SCENARIO: sync_missing
static void sync_missing() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<float> t = b.Get<float>();
    GlobalTensor<float> g; g.SetGlobalBuffer(g_float, 256);
    DataCopy(t, g, 64);
    float v = t.GetValue(0);  // EXPECT: L2.SYNC_MISSING
    SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
    v += t.GetValue(1);
    Adds(t, t, 1.0f, 64);
    PipeBarrier<PIPE_ALL>();
    v += t.GetValue(2);
    Adds(t, t, 1.0f, 64);
    v += t.GetValue(3);  // EXPECT: L2.SYNC_MISSING
    (void)v;
}

// SCENARIO: tmp_buffer
static void tmp_buffer() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b, d, w;
    pipe.InitBuffer(b, 8192);
    pipe.InitBuffer(d, 64);
    pipe.InitBuffer(w, 64);
    LocalTensor<half> src = b.Get<half>(), dst = d.Get<half>(), tmp = w.Get<half>();
    ReduceSum(dst, src, tmp, 4096);
    ReduceMax(dst, src, tmp, 4096, true);  // EXPECT: L2.TMP_BUFFER
    ReduceMin(dst, src, tmp, 128, 1, 8, false);
}

// SCENARIO: api_unknown
static void api_unknown() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<half> t = b.Get<half>();
    Neg(t, t, 64);  // EXPECT: L4.API_UNKNOWN
}

// SCENARIO: compare_count
static void compare_count() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b, m;
    pipe.InitBuffer(b, 4096);
    pipe.InitBuffer(m, 256);
    LocalTensor<float> t = b.Get<float>();
    LocalTensor<uint8_t> mask = m.Get<uint8_t>();
    Compare(mask, t, t, CMPMODE::LT, 64);
    Compare(mask, t, t, CMPMODE::LT, 100);  // EXPECT: L2.CMP_COUNT_256B
}
// SCENARIO: end

int main(int argc, char** argv) {
    const std::string s = argc > 1 ? argv[1] : "";
    g_arch = argc > 2 ? std::atoi(argv[2]) : 2201;
    const int fd = argc > 3 ? ::open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644) : 2;
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", g_arch == 3510 ? "950PR" : "910B2");
    c.arch = g_arch; c.vector_cores = 48; c.ub_bytes = g_arch == 3510 ? 248 * 1024 : 192 * 1024 - 256 - 8 * 1024;
    c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::set_diag_fd(fd);
    cannsim::begin_block(0, 1);
#define S(name) if (s == #name) name();
    S(clean_double_buffer) S(clean_idioms) S(ub_capacity) S(buffer_count_total) S(buffer_count_position) S(align_32b)
    S(datacopy_32b) S(repeat_limit) S(mask_range) S(dtype_unsupported) S(dtype_3510) S(deque_empty)
    S(alloc_beyond) S(queue_misuse) S(gm_bounds) S(gm_bounds_value) S(ub_bounds) S(ub_bounds_value)
    S(sync_wait_without_set) S(sync_left_set) S(sync_missing) S(tmp_buffer) S(api_unknown) S(compare_count) S(datacopypad_310p)
    cannsim::end_block();
    std::printf("%s\n", cannsim::cost_counters_json().c_str());
    return 0;
}
