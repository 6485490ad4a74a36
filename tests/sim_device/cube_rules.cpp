// One scenario per cube rule (tests/test_cube.py): `./cube_rules SCENARIO ARCH` writes the
// diagnostics to stderr; the test expects the id named after the scenario's EXPECT comment.
#include "kernel_operator.h"
#include <string>

using namespace AscendC;

// EXPECT l0a_capacity: L2.L0A_CAPACITY
static void l0a_capacity() {
    TPipe pipe; TQue<TPosition::A2, 1> q;
    pipe.InitBuffer(q, 2, 40 * 1024);   // 80 KB of a 64 KB L0A
}
// EXPECT l0b_capacity: L2.L0B_CAPACITY
static void l0b_capacity() {
    TPipe pipe; TQue<TPosition::B2, 2> q;
    pipe.InitBuffer(q, 2, 33 * 1024);
}
// EXPECT l0c_capacity: L2.L0C_CAPACITY
static void l0c_capacity() {
    TPipe pipe; TQue<TPosition::CO1, 1> q;
    pipe.InitBuffer(q, 1, 128 * 1024 + 1024);   // 129 KB of a 128 KB L0C (910B2); 950PR has 256 KB
}
// EXPECT l1_capacity: L2.L1_CAPACITY
static void l1_capacity() {
    TPipe pipe; TQue<TPosition::A1, 1> qa; TQue<TPosition::B1, 1> qb;
    pipe.InitBuffer(qa, 1, 256 * 1024); pipe.InitBuffer(qb, 1, 256 * 1024);   // 512 KB > 512 KB - 256 B
}
// EXPECT mmad_dtype: L2.MMAD_DTYPE
static void mmad_dtype() {
    TPipe pipe; TQue<TPosition::A2, 1> qa; TQue<TPosition::B2, 1> qb; TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa, 1, 512); pipe.InitBuffer(qb, 1, 512); pipe.InitBuffer(qc, 1, 512);
    auto a = qa.AllocTensor<half>(); auto b = qb.AllocTensor<half>(); auto c = qc.AllocTensor<half>();
    Mmad(c, a, b, MmadParams(16, 16, 16));   // half x half -> half: not on A2/A3/950
    qa.FreeTensor(a); qb.FreeTensor(b); qc.FreeTensor(c);
}
// EXPECT mmad_position: L2.CUBE_POSITION
static void mmad_position() {
    TPipe pipe; TQue<TPosition::A1, 1> qa; TQue<TPosition::B2, 1> qb; TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa, 1, 512); pipe.InitBuffer(qb, 1, 512); pipe.InitBuffer(qc, 1, 1024);
    auto a = qa.AllocTensor<half>(); auto b = qb.AllocTensor<half>(); auto c = qc.AllocTensor<float>();
    Mmad(c, a, b, MmadParams(16, 16, 16));   // fm in L1, not L0A
    qa.FreeTensor(a); qb.FreeTensor(b); qc.FreeTensor(c);
}
// EXPECT mmad_fractal: L2.CUBE_BOUNDS
static void mmad_fractal() {
    TPipe pipe; TQue<TPosition::A2, 1> qa; TQue<TPosition::B2, 1> qb; TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa, 1, 512); pipe.InitBuffer(qb, 1, 1024); pipe.InitBuffer(qc, 1, 2048);
    auto a = qa.AllocTensor<half>(); auto b = qb.AllocTensor<half>(); auto c = qc.AllocTensor<float>();
    Mmad(c, a, b, MmadParams(16, 16, 17));   // k = 17 pads to two 16 x 16 fractals: 1 KB of A, 512 B given
}
// EXPECT mmad_align: L2.CUBE_ALIGN
static void mmad_align() {
    TPipe pipe; TQue<TPosition::A2, 1> qa; TQue<TPosition::B2, 1> qb; TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa, 1, 2048); pipe.InitBuffer(qb, 1, 512); pipe.InitBuffer(qc, 1, 1024);
    auto a = qa.AllocTensor<half>(); auto b = qb.AllocTensor<half>(); auto c = qc.AllocTensor<float>();
    Mmad(c, a[128], b, MmadParams(16, 16, 16));   // fm at byte 256: L0A operands start on 512 B
    qa.FreeTensor(a); qb.FreeTensor(b); qc.FreeTensor(c);
}
// EXPECT mmad_range: L2.CUBE_PARAMS
static void mmad_range() {
    TPipe pipe; TQue<TPosition::A2, 1> qa; TQue<TPosition::B2, 1> qb; TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa, 1, 512); pipe.InitBuffer(qb, 1, 512); pipe.InitBuffer(qc, 1, 1024);
    auto a = qa.AllocTensor<half>(); auto b = qb.AllocTensor<half>(); auto c = qc.AllocTensor<float>();
    MmadParams p(16, 16, 16); p.cmatrixSource = true;   // C from C2 without a bias operand
    Mmad(c, a, b, p);
    qa.FreeTensor(a); qb.FreeTensor(b); qc.FreeTensor(c);
}
// EXPECT loaddata_transpose: L2.CUBE_PARAMS
static void loaddata_transpose() {
    TPipe pipe; TQue<TPosition::B1, 1> q1; TQue<TPosition::B2, 1> q2;
    pipe.InitBuffer(q1, 1, 512); pipe.InitBuffer(q2, 1, 512);
    auto s = q1.AllocTensor<float>(); auto d = q2.AllocTensor<float>();
    LoadData(d, s, LoadData2DParams(0, 1, 0, 0, 0, true, 0));   // the 2-D form transposes b16 only
    q1.FreeTensor(s); q2.FreeTensor(d);
}
// EXPECT loaddata_bounds: L2.CUBE_BOUNDS
static void loaddata_bounds() {
    TPipe pipe; TQue<TPosition::A1, 1> q1; TQue<TPosition::A2, 1> q2;
    pipe.InitBuffer(q1, 1, 2048); pipe.InitBuffer(q2, 1, 1024);
    auto s = q1.AllocTensor<half>(); auto d = q2.AllocTensor<half>();
    LoadData(d, s, LoadData2DParams(0, 3, 1, 0, 0, false, 0));   // 3 fractals into a 2-fractal L0A buffer
}
// EXPECT fixpipe_quant: L2.FIXPIPE_QUANT
static void fixpipe_quant() {
    static half out[256];
    GlobalTensor<half> g; g.SetGlobalBuffer(out, 256);
    TPipe pipe; TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qc, 1, 1024);
    auto c = qc.AllocTensor<float>();
    FixpipeParamsV220 p(16, 16, 16, 16, false);   // float -> half without F322F16
    Fixpipe(g, c, p);
    qc.FreeTensor(c);
}
// EXPECT cube_queue: L2.QUEUE_PROTOCOL
static void cube_queue() {
    TPipe pipe; TQue<TPosition::A1, 1> q;
    pipe.InitBuffer(q, 1, 512);
    auto t = q.AllocTensor<half>();
    q.EnQue(t);
    (void)q.DeQue<half>();   // never freed: the L1 buffer is still held at kernel end
}
// EXPECT bt_capacity: L2.BT_CAPACITY
static void bt_capacity() {
    TPipe pipe; TQue<TPosition::C2, 1> q;
    pipe.InitBuffer(q, 1, 2048);   // 2 KB of a 1 KB bias table (910B2)
}
// EXPECT fb_capacity: L2.FB_CAPACITY
static void fb_capacity() {
    TPipe pipe; TBuf<TPosition::C2PIPE2GM> b;
    pipe.InitBuffer(b, 4096);   // 4 KB of a 2 KB fixpipe buffer (910B2)
}
// EXPECT cross_core_flag_id: L2.CROSS_CORE_FLAG
static void cross_core_flag_id() {
    CrossCoreSetFlag<0, PIPE_MTE3>(11);   // A2/A3 flag ids are 0..10
}
// EXPECT cross_core_not_mix: L2.CROSS_CORE_FLAG
static void cross_core_not_mix() {
    CrossCoreSetFlag<2, PIPE_FIX>(1);   // AIC <-> AIV in a kernel that is not MIX
}
// EXPECT core_type_ub_on_aic: L2.CORE_TYPE
static void core_type_ub_on_aic() {
    cannsim::mix::self().core = AIC;   // as the launcher sets it for a cube core
    TPipe pipe; TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 1024);
}
// EXPECT core_type_l1_on_aiv: L2.CORE_TYPE
static void core_type_l1_on_aiv() {
    cannsim::mix::self().core = AIV; cannsim::mix::self().ratio = 2;   // a vector core of a MIX kernel
    TPipe pipe; TQue<TPosition::A1, 1> q;
    pipe.InitBuffer(q, 1, 1024);
}
// EXPECT clean: none
static void clean() {
    TPipe pipe; TQue<TPosition::A2, 2> qa; TQue<TPosition::B2, 2> qb; TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa, 2, 32 * 1024); pipe.InitBuffer(qb, 2, 32 * 1024); pipe.InitBuffer(qc, 1, 128 * 1024);
}

int main(int argc, char** argv) {
    const std::string s = argc > 1 ? argv[1] : "";
    const int arch = argc > 2 ? std::atoi(argv[2]) : 2201;
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", arch == 3510 ? "950PR" : "910B2");
    c.arch = arch; c.vector_cores = 48; c.ub_bytes = 192 * 1024 - 256; c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::begin_block(0, 1);
#define S(name) if (s == #name) name();
    S(l0a_capacity) S(l0b_capacity) S(l0c_capacity) S(l1_capacity) S(mmad_dtype) S(mmad_position) S(mmad_fractal)
    S(mmad_align) S(mmad_range) S(loaddata_transpose) S(loaddata_bounds) S(fixpipe_quant) S(cube_queue) S(bt_capacity) S(fb_capacity) S(cross_core_flag_id) S(cross_core_not_mix)
    S(core_type_ub_on_aic) S(core_type_l1_on_aiv) S(clean)
    cannsim::end_block();
    return 0;
}
