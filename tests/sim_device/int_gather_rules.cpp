// Rule scenarios of the integer, gather, fill, atomic and SyncAll APIs for
// tests/test_sim_int_gather_atomic.py. Each scenario sits between "// SCENARIO: name" markers; every
// line that must be reported carries "// EXPECT: <id>" and nothing else may be reported.
// Usage: int_gather_rules SCENARIO ARCH DIAG_FILE
#include <fcntl.h>
#include <string>
#include "kernel_operator.h"

using namespace AscendC;
static float g_float[4096];
static int32_t g_int[4096];

// SCENARIO: clean_int_gather
static void clean_int_gather() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b, o, off;
    pipe.InitBuffer(a, 1024); pipe.InitBuffer(b, 1024); pipe.InitBuffer(o, 1024); pipe.InitBuffer(off, 1024);
    LocalTensor<int16_t> x = a.Get<int16_t>(), y = b.Get<int16_t>(), z = o.Get<int16_t>();
    And(z, x, y, 512); Or(z, x, y, 512); Not(z, x, 512);
    ShiftLeft(z, x, (int16_t)16, 512); ShiftRight(z, x, (int16_t)3, 128, 4, UnaryRepeatParams{}, true);
    LocalTensor<float> f = a.Get<float>(), g = o.Get<float>();
    LocalTensor<uint32_t> offs = off.Get<uint32_t>();
    Duplicate(offs, 4u, 256);
    Gather(g, f, offs, 0, 256);
    uint64_t kept = 0;
    GatherMask(g, f, 7, false, 0, GatherMaskParams{1, 1, 8, 0}, kept);
    Brcb(g, f, 1, BrcbRepeatParams(1, 8));
    CreateVecIndex(offs.ReinterpretCast<int32_t>(), 0, 256);
    Arange(g, 0.0f, 1.0f, 256);
    AddRelu(g, f, f, 64); FusedMulAdd(g, f, f, 64); MulAddDst(g, f, f, 64); Axpy(g, f, 2.0f, 64);
    SetAtomicAdd<float>();
    GlobalTensor<float> gm;
    gm.SetGlobalBuffer(g_float, 4096);
    DataCopy(gm, g, 256);
    SetAtomicMax<float>(); DataCopy(gm, g, 256);
    SetAtomicMin<float>(); DataCopy(gm, g, 256);
    SetAtomicNone();
    SetStoreAtomicConfig<AtomicDtype::ATOMIC_F32, AtomicOp::ATOMIC_SUM>();
    uint16_t type = 9, op = 9;
    GetStoreAtomicConfig(type, op);
    if (type != 1 || op != 0) std::printf("bad store atomic config %u %u\n", type, op);
    DataCopy(gm, g, 256);
    SetStoreAtomicConfig<AtomicDtype::ATOMIC_NONE, AtomicOp::ATOMIC_SUM>();
    GetStoreAtomicConfig(type, op);
    if (type != 0) std::printf("bad store atomic config %u\n", type);
    SyncAll();
}

// SCENARIO: shift_range
static void shift_range() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, o;
    pipe.InitBuffer(a, 1024); pipe.InitBuffer(o, 1024);
    LocalTensor<int16_t> x = a.Get<int16_t>(), z = o.Get<int16_t>();
    ShiftLeft(z, x, (int16_t)17, 512);  // EXPECT: L2.SHIFT_RANGE
    ShiftRight(z, x, (int16_t)-1, 512);  // EXPECT: L2.SHIFT_RANGE
    LocalTensor<int32_t> xi = a.Get<int32_t>(), zi = o.Get<int32_t>();
    ShiftRight(zi, xi, 32, 256);
    ShiftRight(zi, xi, 33, 256);  // EXPECT: L2.SHIFT_RANGE
}

// SCENARIO: int_dtype
// A2 bitwise ops take 16-bit integers only; Compare on int32 only EQ.
static void int_dtype() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, o, m;
    pipe.InitBuffer(a, 1024); pipe.InitBuffer(o, 1024); pipe.InitBuffer(m, 256);
    LocalTensor<int32_t> x = a.Get<int32_t>(), z = o.Get<int32_t>();
    And(z, x, x, 256);  // EXPECT: L2.DTYPE_UNSUPPORTED
    LocalTensor<uint8_t> mask = m.Get<uint8_t>();
    Compare(mask, x, x, CMPMODE::EQ, 64);
    Compare(mask, x, x, CMPMODE::LT, 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
    LocalTensor<float> f = a.Get<float>();
    Brcb(f.ReinterpretCast<int8_t>(), f.ReinterpretCast<int8_t>(), 1, BrcbRepeatParams(1, 8));  // EXPECT: L2.DTYPE_UNSUPPORTED
    LocalTensor<int16_t> s16 = a.Get<int16_t>();
    FusedMulAdd(s16, s16, s16, 128);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: int_3510
// On the 950 the same calls are accepted.
static void int_3510() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, o;
    pipe.InitBuffer(a, 1024); pipe.InitBuffer(o, 1024);
    LocalTensor<int32_t> x = a.Get<int32_t>(), z = o.Get<int32_t>();
    And(z, x, x, 256);
    ShiftLeft(z, x, 40, 256);
    LocalTensor<int64_t> x8 = a.Get<int64_t>(), z8 = o.Get<int64_t>();
    Ors(z8, x8, (int64_t)5, 128);
}

// SCENARIO: gather_offset
static void gather_offset() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> s, o, off;
    pipe.InitBuffer(s, 1024); pipe.InitBuffer(o, 1024); pipe.InitBuffer(off, 1024);
    LocalTensor<float> src = s.Get<float>(), dst = o.Get<float>();
    LocalTensor<uint32_t> offs = off.Get<uint32_t>();
    Duplicate(offs, 6u, 64);
    Gather(dst, src, offs, 0, 64);  // EXPECT: L2.GATHER_OFFSET
    Duplicate(offs, 1024u, 64);
    Gather(dst, src, offs, 0, 64);  // EXPECT: L2.GATHER_OFFSET
    Duplicate(offs, 16u, 64);
    Gatherb(dst.ReinterpretCast<uint32_t>(), src.ReinterpretCast<uint32_t>(), offs, 1, GatherRepeatParams(1, 8));  // EXPECT: L2.GATHER_OFFSET
}

// SCENARIO: gather_ub_end
static void gather_ub_end() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> s, o, off;
    pipe.InitBuffer(s, 1024); pipe.InitBuffer(o, 1024); pipe.InitBuffer(off, 1024);
    LocalTensor<float> src = s.Get<float>(), dst = o.Get<float>();
    LocalTensor<uint32_t> offs = off.Get<uint32_t>();
    Duplicate(offs, 4000000u, 64);
    Gather(dst, src, offs, 0, 64);  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: gather_pattern
static void gather_pattern() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> s, o;
    pipe.InitBuffer(s, 1024); pipe.InitBuffer(o, 1024);
    LocalTensor<float> src = s.Get<float>(), dst = o.Get<float>();
    uint64_t kept = 0;
    GatherMask(dst, src, 8, false, 0, GatherMaskParams{1, 1, 8, 0}, kept);  // EXPECT: L2.GATHER_PATTERN
    GatherMask(dst, src, 0, false, 0, GatherMaskParams{1, 1, 8, 0}, kept);  // EXPECT: L2.GATHER_PATTERN
    LocalTensor<uint16_t> pat = s.Get<uint16_t>();
    GatherMask(dst, src, pat, false, 0, GatherMaskParams{1, 1, 8, 0}, kept);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: arange_args
static void arange_args() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> o;
    pipe.InitBuffer(o, 1024);
    LocalTensor<float> dst = o.Get<float>();
    Arange(dst, 0.0f, -1.0f, 64);  // EXPECT: L2.ARANGE_ARGS
    Arange(dst, 0.0f, 1.0f, 0);  // EXPECT: L2.ARANGE_ARGS
}

// SCENARIO: atomic_dtype
static void atomic_dtype() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> o;
    pipe.InitBuffer(o, 1024);
    LocalTensor<float> t = o.Get<float>();
    GlobalTensor<float> gm;
    gm.SetGlobalBuffer(g_float, 4096);
    SetAtomicAdd<half>();
    DataCopy(gm, t, 64);  // EXPECT: L2.ATOMIC_DTYPE
    SetAtomicAdd<uint32_t>();  // EXPECT: L2.DTYPE_UNSUPPORTED
    SetAtomicNone();
    DataCopy(gm, t, 64);
}

// SCENARIO: atomic_310p
static void atomic_310p() {
    SetAtomicAdd<float>();
    SetAtomicMax<float>();  // EXPECT: L4.API_UNKNOWN
    SetAtomicNone();
}

// SCENARIO: syncall_workspace
static void syncall_workspace() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> u;
    pipe.InitBuffer(u, 32);
    GlobalTensor<int32_t> ws;
    ws.SetGlobalBuffer(g_int, 4);
    SyncAll(ws, u.Get<int32_t>());  // EXPECT: L2.SYNCALL_WORKSPACE
    SyncAll(ws, u.Get<int32_t>(4));  // EXPECT: L2.SYNCALL_WORKSPACE
    ws.SetGlobalBuffer(g_int, 8);
    SyncAll(ws, u.Get<int32_t>(), 2);  // EXPECT: L2.SYNCALL_CORES
    IBSet(ws, u.Get<int32_t>(), 0, 3);  // EXPECT: L2.SYNCALL_WORKSPACE
    IBWait(ws, u.Get<int32_t>(), 0, 0);  // EXPECT: L2.SYNCALL_WORKSPACE
}
// SCENARIO: end

// SyncAll with more blocks than the chip has cores: run as block 0 of 64 on a 48-core chip.
static void syncall_cores() {
    SyncAll();
}

int main(int argc, char** argv) {
    const std::string s = argc > 1 ? argv[1] : "";
    const int arch = argc > 2 ? std::atoi(argv[2]) : 2201;
    const int fd = argc > 3 ? ::open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644) : 2;
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", arch == 3510 ? "950PR" : arch == 2002 ? "310P3" : "910B2");
    c.arch = arch; c.vector_cores = 48; c.ub_bytes = arch == 3510 ? 248 * 1024 : 192 * 1024 - 256 - 8 * 1024;
    c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::set_diag_fd(fd);
    cannsim::begin_block(0, s == "syncall_cores" ? 64 : 1);
#define S(name) if (s == #name) name();
    S(clean_int_gather) S(shift_range) S(int_dtype) S(int_3510) S(gather_offset) S(gather_ub_end) S(gather_pattern)
    S(arange_args) S(atomic_dtype) S(atomic_310p) S(syncall_workspace) S(syncall_cores)
    cannsim::end_block();
    std::printf("%s\n", cannsim::cost_counters_json().c_str());
    return 0;
}
