// Rule scenarios of the compound-cast, Copy, PairReduceSum, layout and normalization APIs for
// tests/test_sim_api_cov.py. Each scenario sits after a "// SCENARIO: name" marker; every line that
// must be reported carries "// EXPECT: <id>" and nothing else may be reported.
// Usage: api_cov_rules SCENARIO ARCH
#include <string>
#include "kernel_operator.h"

using namespace AscendC;
using namespace AscendC::tiling;

struct Ub {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b, c, d, t;
    Ub() {
        pipe.InitBuffer(a, 16384); pipe.InitBuffer(b, 16384); pipe.InitBuffer(c, 16384);
        pipe.InitBuffer(d, 16384); pipe.InitBuffer(t, 32768);
    }
};

// SCENARIO: clean_basic_calls
static void clean_basic_calls() {
    Ub u;
    uint64_t bits[2] = {~0ull, ~0ull};
    AddReluCast(u.c.Get<int8_t>(), u.a.Get<half>(), u.b.Get<half>(), 256);
    SubReluCast(u.c.Get<half>(), u.a.Get<float>(), u.b.Get<float>(), bits, 2, {1, 1, 1, 4, 8, 8});
    MulCast(u.c.Get<uint8_t>(), u.a.Get<half>(), u.b.Get<half>(), 128, 2, {1, 1, 1, 4, 8, 8});
    MulAddRelu(u.c.Get<float>(), u.a.Get<float>(), u.b.Get<float>(), 64, 4, {1, 1, 1, 8, 8, 8});
    AddDeqRelu(u.c.Get<half>(), u.a.Get<int32_t>(), u.b.Get<int32_t>(), 256);
    Copy(u.c.Get<float>(), u.a.Get<float>(), 64, 4, {1, 1, 8, 8});
    PairReduceSum(u.c.Get<half>(), u.a.Get<half>(), 2, 128, 1, 1, 8);
    SetNextTaskStart();
    SetNextTaskStart<PIPE_MTE3, PIPE_FIX>();
}

// SCENARIO: fused_cast_pair
static void fused_cast_pair() {
    Ub u;
    AddReluCast(u.c.Get<int8_t>(), u.a.Get<float>(), u.b.Get<float>(), 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: fused_cast_src_dtype
static void fused_cast_src_dtype() {
    Ub u;
    MulCast(u.c.Get<int8_t>(), u.a.Get<float>(), u.b.Get<float>(), 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: fused_cast_int64_950
static void fused_cast_int64_950() {
    Ub u;
    AddReluCast(u.c.Get<float>(), u.a.Get<int64_t>(), u.b.Get<int64_t>(), 64);
    AddReluCast(u.c.Get<float>(), u.a.Get<int64_t>(), u.b.Get<int64_t>(), 32, 1, {1, 1, 1, 8, 8, 8});  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: fused_cast_align
static void fused_cast_align() {
    Ub u;
    AddReluCast(u.c.Get<int8_t>()[16], u.a.Get<half>(), u.b.Get<half>(), 64);  // EXPECT: L2.ALIGN_32B
}

// SCENARIO: fused_cast_mask_range
static void fused_cast_mask_range() {
    Ub u;
    AddReluCast(u.c.Get<int8_t>(), u.a.Get<half>(), u.b.Get<half>(), 129, 1, {1, 1, 1, 4, 8, 8});  // EXPECT: L2.MASK_RANGE
}

// SCENARIO: mul_add_relu_dtype
static void mul_add_relu_dtype() {
    Ub u;
    MulAddRelu(u.c.Get<int16_t>(), u.a.Get<int16_t>(), u.b.Get<int16_t>(), 128);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: add_deq_relu_ub_bounds
static void add_deq_relu_ub_bounds() {
    Ub u;
    AddDeqRelu(u.c.Get<half>(), u.a.Get<int32_t>(), u.b.Get<int32_t>(), 8192);  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: copy_count_a2
static void copy_count_a2() {
    Ub u;
    Copy(u.c.Get<float>(), u.a.Get<float>(), 64);  // EXPECT: L4.API_UNKNOWN
}

// SCENARIO: copy_dtype
static void copy_dtype() {
    Ub u;
    Copy(u.c.Get<int8_t>(), u.a.Get<int8_t>(), 128, 1, {1, 1, 8, 8});  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: copy_repeat_size
static void copy_repeat_size() {
    Ub u;
    Copy(u.c.Get<float>(), u.a.Get<float>(), 64, 1, {1, 1, 4096, 8});  // EXPECT: L2.API_PARAM
}

// SCENARIO: pair_reduce_dtype
static void pair_reduce_dtype() {
    Ub u;
    PairReduceSum(u.c.Get<int32_t>(), u.a.Get<int32_t>(), 1, 64, 1, 1, 8);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: pair_reduce_mask
static void pair_reduce_mask() {
    Ub u;
    PairReduceSum(u.c.Get<float>(), u.a.Get<float>(), 1, 65, 1, 1, 8);  // EXPECT: L2.MASK_RANGE
}

// SCENARIO: pair_reduce_dst_bounds
static void pair_reduce_dst_bounds() {
    Ub u;
    PairReduceSum(u.c.Get<float>()[4072], u.a.Get<float>(), 2, 64, 1, 1, 8);  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: clean_library_calls
static void clean_library_calls() {
    Ub u;
    PadParams pp{0, 1, 0};
    tiling::PadTiling pt; pt.srcHeight = 16; pt.srcWidth = 15; pt.srcOriWidth = 15;
    Pad(u.c.Get<half>(), u.a.Get<half>(), pp, pt);
    UnPadParams up{0, 1};
    tiling::UnPadTiling ut; ut.srcHeight = 16; ut.srcWidth = 16;
    UnPad(u.c.Get<half>(), u.a.Get<half>(), up, ut);
    const uint32_t ds[2] = {16, 32}, ss[2] = {16, 1};
    Broadcast<float, 2, 1>(u.c.Get<float>(), u.a.Get<float>(), ds, ss);
    tiling::GroupNormTiling gt; gt.n = 2; gt.c = 8; gt.hw = 8; gt.g = 4;
    GroupNorm(u.c.Get<float>(), u.d.Get<float>(), u.d.Get<float>()[64], u.a.Get<float>(), u.b.Get<float>(), u.b.Get<float>()[64],
              1e-5f, gt);
    WelfordUpdateParam wp{1, 64, 64, 1.0f};
    WelfordUpdate<float, float>(u.c.Get<float>(), u.c.Get<float>()[64], u.a.Get<float>(), u.a.Get<float>()[64],
                                u.b.Get<float>(), u.t.Get<uint8_t>(), wp);
}

// SCENARIO: pad_width_over
static void pad_width_over() {
    Ub u;
    PadParams pp{1, 2, 0};
    tiling::PadTiling pt; pt.srcHeight = 16; pt.srcWidth = 15; pt.srcOriWidth = 15;
    Pad(u.c.Get<half>(), u.a.Get<half>(), pp, pt);  // EXPECT: L2.API_PARAM
}

// SCENARIO: pad_tmp_small
static void pad_tmp_small() {
    Ub u;
    PadParams pp{0, 1, 0};
    tiling::PadTiling pt; pt.srcHeight = 16; pt.srcWidth = 15; pt.srcOriWidth = 15;
    Pad(u.c.Get<half>(), u.a.Get<half>(), pp, u.t.Get<uint8_t>()[0].template ReinterpretCast<uint8_t>(), pt);
    LocalTensor<uint8_t> small = u.t.Get<uint8_t>();
    small.SetSize(32);
    Pad(u.c.Get<half>(), u.a.Get<half>(), pp, small, pt);  // EXPECT: L2.TMP_BUFFER
}

// SCENARIO: unpad_right_range
static void unpad_right_range() {
    Ub u;
    UnPadParams up{0, 16};
    tiling::UnPadTiling ut; ut.srcHeight = 16; ut.srcWidth = 32;
    UnPad(u.c.Get<half>(), u.a.Get<half>(), up, ut);  // EXPECT: L2.API_PARAM
}

// SCENARIO: broadcast_shape
static void broadcast_shape() {
    Ub u;
    const uint32_t ds[2] = {16, 32}, ss[2] = {16, 2};
    Broadcast<float, 2, 1>(u.c.Get<float>(), u.a.Get<float>(), ds, ss);  // EXPECT: L2.API_PARAM
}

// SCENARIO: broadcast_dtype
static void broadcast_dtype() {
    Ub u;
    const uint32_t ds[2] = {16, 32}, ss[2] = {16, 1};
    Broadcast<int32_t, 2, 1>(u.c.Get<int32_t>(), u.a.Get<int32_t>(), ds, ss);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: broadcast_overlap
static void broadcast_overlap() {
    Ub u;
    const uint32_t ds[2] = {16, 32}, ss[2] = {16, 1};
    Broadcast<float, 2, 1>(u.a.Get<float>()[8], u.a.Get<float>(), ds, ss);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: broadcast_rank_a2
static void broadcast_rank_a2() {
    Ub u;
    const uint32_t ds[3] = {2, 4, 8}, ss[3] = {2, 1, 8};
    BroadcastTiling bt;
    GetBroadcastTilingInfo<float>(3, ds, ss, false, bt);  // EXPECT: L4.API_UNKNOWN
}

// SCENARIO: broadcast_rank_range_950
static void broadcast_rank_range_950() {
    uint32_t ds[10] = {}, ss[10] = {};
    BroadcastTiling bt;
    GetBroadcastTilingInfo<float>(10, ds, ss, false, bt);  // EXPECT: L2.API_PARAM
}

// SCENARIO: fill_after_init_buffer
static void fill_after_init_buffer() {
    static float gm[64];
    GlobalTensor<float> g;
    g.SetGlobalBuffer(gm, 64);
    Fill(g, 64, 0.0f);
    Ub u;
    Fill(g, 64, 1.0f);  // EXPECT: L2.API_PARAM
}

// SCENARIO: batch_norm_no_tiling
static void batch_norm_no_tiling() {
    Ub u;
    tiling::BatchNormTiling bt;
    BatchNorm(u.c.Get<float>(), u.d.Get<float>(), u.d.Get<float>()[256], u.a.Get<float>(), u.b.Get<float>(),  // EXPECT: L2.API_PARAM
              u.b.Get<float>()[64], 1e-5f, bt);
}

// SCENARIO: deep_norm_h_limit
static void deep_norm_h_limit() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> x, gx, o, bg, mv;
    pipe.InitBuffer(x, 8192); pipe.InitBuffer(gx, 8192); pipe.InitBuffer(o, 8192); pipe.InitBuffer(bg, 16384);
    pipe.InitBuffer(mv, 64);
    tiling::DeepNormTiling dt; dt.bLength = 1; dt.sLength = 1; dt.hLength = 2048; dt.originalHLength = 2048;
    auto m = mv.Get<float>(); auto p = bg.Get<float>();
    DeepNorm(o.Get<float>(), m, m[8], x.Get<float>(), gx.Get<float>(), p, p[2048], 1.0f, 1e-5f, dt);  // EXPECT: L2.API_PARAM
}

// SCENARIO: group_norm_groups
static void group_norm_groups() {
    Ub u;
    tiling::GroupNormTiling gt; gt.n = 2; gt.c = 6; gt.hw = 8; gt.g = 4;
    GroupNorm(u.c.Get<float>(), u.d.Get<float>(), u.d.Get<float>()[64], u.a.Get<float>(), u.b.Get<float>(),  // EXPECT: L2.API_PARAM
              u.b.Get<float>()[64], 1e-5f, gt);
}

// SCENARIO: layer_norm_grad_tmp_overlap
static void layer_norm_grad_tmp_overlap() {
    Ub u;
    tiling::LayerNormGradTiling lt; lt.bLength = 1; lt.sLength = 8; lt.hLength = 16; lt.originalHLength = 16;
    LocalTensor<uint8_t> tmp = u.a.Get<uint8_t>();
    LayerNormGrad(u.c.Get<float>(), u.c.Get<float>()[128], u.a.Get<float>(), u.b.Get<float>(), u.d.Get<float>(),  // EXPECT: L2.OPERAND_OVERLAP
                  u.d.Get<float>()[64], u.d.Get<float>()[128], tmp, 1e-5f, lt);
}

// SCENARIO: layer_norm_grad_beta_unaligned
static void layer_norm_grad_beta_unaligned() {
    Ub u;
    tiling::LayerNormGradBetaTiling lt; lt.bLength = 1; lt.sLength = 8; lt.hLength = 12; lt.originalHLength = 12;
    LayerNormGradBeta(u.c.Get<float>(), u.c.Get<float>()[64], u.a.Get<float>(), u.b.Get<float>(), lt);  // EXPECT: L2.API_PARAM
}

// SCENARIO: welford_update_overlap
static void welford_update_overlap() {
    Ub u;
    WelfordUpdateParam wp{1, 64, 64, 1.0f};
    WelfordUpdate<float, float>(u.a.Get<float>(), u.c.Get<float>()[64], u.a.Get<float>(), u.a.Get<float>()[64],  // EXPECT: L2.OPERAND_OVERLAP
                                u.b.Get<float>(), wp);
}

// SCENARIO: welford_update_param
static void welford_update_param() {
    Ub u;
    WelfordUpdateParam wp{1, 60, 60, 1.0f};
    WelfordUpdate<float, float>(u.c.Get<float>(), u.c.Get<float>()[64], u.a.Get<float>(), u.a.Get<float>()[64],  // EXPECT: L2.API_PARAM
                                u.b.Get<float>(), wp);
}

// SCENARIO: welford_update_mean_dtype
static void welford_update_mean_dtype() {
    Ub u;
    WelfordUpdateParam wp{1, 64, 64, 1.0f};
    WelfordUpdate<half, half>(u.c.Get<half>(), u.c.Get<half>()[64], u.a.Get<half>(), u.a.Get<half>()[64],  // EXPECT: L2.DTYPE_UNSUPPORTED
                              u.b.Get<half>(), wp);
}

// SCENARIO: welford_finalize_counts
static void welford_finalize_counts() {
    Ub u;
    WelfordFinalizePara p; p.rnLength = 2; p.abLength = 64; p.headCount = 2; p.headCountLength = 32; p.rRec = 1.0f / 128;
    WelfordFinalize(u.c.Get<float>(), u.c.Get<float>()[8], u.a.Get<float>(), u.b.Get<float>(), p);  // EXPECT: L2.API_PARAM
}

// SCENARIO: welford_finalize_correction
static void welford_finalize_correction() {
    Ub u;
    static constexpr WelfordFinalizeConfig corr = {true};
    WelfordFinalizePara p; p.rnLength = 2; p.abLength = 64; p.headCount = 2; p.headCountLength = 64; p.rRec = 1.0f / 128;
    WelfordFinalize<false, corr>(u.c.Get<float>(), u.c.Get<float>()[8], u.a.Get<float>(), u.b.Get<float>(), p);  // EXPECT: L2.API_PARAM
}

// SCENARIO: flash_v2_unaligned_k
static void flash_v2_unaligned_k() {
    Ub u;
    SoftMaxShapeInfo info{4, 12, 4, 12};
    const tiling::SoftMaxTiling t = SoftMaxFlashV2TilingFunc(info, 4, 4, 0);
    auto b = u.b.Get<float>();
    SoftmaxFlashV2<float, false>(u.c.Get<float>(), b, b[64], u.a.Get<float>(), b[128], b[192], b[256], t, info);  // EXPECT: L2.API_PARAM
}

// SCENARIO: flash_v2_tmp_small
static void flash_v2_tmp_small() {
    Ub u;
    SoftMaxShapeInfo info{4, 64, 4, 64};
    const tiling::SoftMaxTiling t = SoftMaxFlashV2TilingFunc(info, 4, 4, 0);
    auto b = u.b.Get<float>();
    LocalTensor<uint8_t> tmp = u.t.Get<uint8_t>();
    tmp.SetSize(64);
    SoftmaxFlashV2<float, true>(u.c.Get<float>(), b, b[64], u.a.Get<float>(), b[128], b[192], b[256], tmp, t, info);  // EXPECT: L2.TMP_BUFFER
}

// SCENARIO: flash_v2_sum_overlaps_max
static void flash_v2_sum_overlaps_max() {
    Ub u;
    SoftMaxShapeInfo info{4, 64, 4, 64};
    const tiling::SoftMaxTiling t = SoftMaxFlashV2TilingFunc(info, 4, 4, 0);
    auto b = u.b.Get<float>();
    SoftmaxFlashV2<float, false>(u.c.Get<float>(), b, b[16], u.a.Get<float>(), b[128], b[192], b[256], t, info);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: adjust_softmax_res_shape
static void adjust_softmax_res_shape() {
    Ub u;
    SoftMaxShapeInfo info{4, 10, 4, 10};
    AdjustSoftMaxRes<float, float>(u.c.Get<float>(), u.a.Get<float>(), 0xFF7FFFFFu, 0.0f, info);  // EXPECT: L2.API_PARAM
}

// SCENARIO: dropout_keep_prob
static void dropout_keep_prob() {
    Ub u;
    DropOutShapeInfo info; info.firstAxis = 4; info.srcLastAxis = 64; info.maskLastAxis = 64;
    DropOut(u.c.Get<float>(), u.a.Get<float>(), u.b.Get<uint8_t>(), 1.0f, info);  // EXPECT: L2.API_PARAM
}

// SCENARIO: dropout_dtype
static void dropout_dtype() {
    Ub u;
    DropOutShapeInfo info; info.firstAxis = 4; info.srcLastAxis = 64; info.maskLastAxis = 64;
    DropOut(u.c.Get<int32_t>(), u.a.Get<int32_t>(), u.b.Get<uint8_t>(), 0.5f, info);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: dropout_bit_mask_short
static void dropout_bit_mask_short() {
    Ub u;
    DropOutShapeInfo info; info.firstAxis = 4; info.srcLastAxis = 64; info.maskLastAxis = 4;
    DropOut(u.c.Get<float>(), u.a.Get<float>(), u.b.Get<uint8_t>(), 0.5f, info);  // EXPECT: L2.API_PARAM
}

// SCENARIO: softmax_flash_no_shape
static void softmax_flash_no_shape() {
    Ub u;
    tiling::SoftMaxTiling t;
    auto b = u.b.Get<float>();
    SoftmaxFlash(u.c.Get<float>(), b, b[64], u.a.Get<float>(), b[128], b[192], b[256], t, true);  // EXPECT: L2.API_PARAM
}

// SCENARIO: get_cmp_mask_small_dst
static void get_cmp_mask_small_dst() {
    Ub u;
    Compare(u.a.Get<float>(), u.b.Get<float>(), CMPMODE::LT, 64, BinaryRepeatParams());
    LocalTensor<uint8_t> d = u.c.Get<uint8_t>();
    d.SetSize(64);
    GetCmpMask(d);  // EXPECT: L2.API_PARAM
}

// SCENARIO: set_cmp_mask_align
static void set_cmp_mask_align() {
    Ub u;
    SetCmpMask(u.c.Get<uint8_t>()[8]);  // EXPECT: L2.API_PARAM
}

// SCENARIO: compare_register_dtype
static void compare_register_dtype() {
    Ub u;
    Compare(u.a.Get<int32_t>(), u.b.Get<int32_t>(), CMPMODE::EQ, 64, BinaryRepeatParams());  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: select_register_mode
static void select_register_mode() {
    Ub u;
    Select<float, SELMODE::VSEL_TENSOR_SCALAR_MODE>(u.c.Get<float>(), u.a.Get<float>(), u.b.Get<float>(), 1,  // EXPECT: L2.API_PARAM
                                                    BinaryRepeatParams());
}

// SCENARIO: end
int main(int argc, char** argv) {
    const std::string s = argc > 1 ? argv[1] : "";
    const int arch = argc > 2 ? std::atoi(argv[2]) : 2201;
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", arch == 3510 ? "950PR" : arch == 2002 ? "310P" : "910B2");
    c.arch = arch; c.vector_cores = 48; c.ub_bytes = arch == 3510 ? 248 * 1024 : 192 * 1024 - 256 - 8 * 1024;
    c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::set_diag_fd(2);
    cannsim::begin_block(0, 1);
#define S(name) if (s == #name) name();
    S(clean_basic_calls) S(fused_cast_pair) S(fused_cast_src_dtype) S(fused_cast_int64_950) S(fused_cast_align)
    S(fused_cast_mask_range) S(mul_add_relu_dtype) S(add_deq_relu_ub_bounds) S(copy_count_a2) S(copy_dtype)
    S(copy_repeat_size) S(pair_reduce_dtype) S(pair_reduce_mask) S(pair_reduce_dst_bounds)
    S(clean_library_calls) S(pad_width_over) S(pad_tmp_small) S(unpad_right_range) S(broadcast_shape) S(broadcast_dtype)
    S(broadcast_overlap) S(broadcast_rank_a2) S(broadcast_rank_range_950) S(fill_after_init_buffer) S(batch_norm_no_tiling)
    S(deep_norm_h_limit) S(group_norm_groups) S(layer_norm_grad_tmp_overlap) S(layer_norm_grad_beta_unaligned)
    S(welford_update_overlap) S(welford_update_param) S(welford_update_mean_dtype) S(welford_finalize_counts)
    S(welford_finalize_correction) S(flash_v2_unaligned_k) S(flash_v2_tmp_small) S(flash_v2_sum_overlaps_max)
    S(adjust_softmax_res_shape) S(dropout_keep_prob) S(dropout_dtype) S(dropout_bit_mask_short) S(softmax_flash_no_shape)
    S(get_cmp_mask_small_dst) S(set_cmp_mask_align) S(compare_register_dtype) S(select_register_mode)
#undef S
    cannsim::end_block();
    return 0;
}
