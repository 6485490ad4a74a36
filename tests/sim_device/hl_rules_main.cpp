// Rule scenarios of the sort instructions and the library APIs for tests/test_sim_sort_hl.py. Each
// scenario sits between "// SCENARIO: name" markers; every line that must be reported carries
// "// EXPECT: <id>" and nothing else may be reported. Usage: hl_rules_main SCENARIO ARCH
#include <string>
#define CANNSIM_ONE_UNIT 1   // a test driver of both halves' APIs in one file (a candidate is two units)
#include "kernel_operator.h"
#include "tiling/tiling_api.h"

using namespace AscendC;
using namespace AscendC::tiling;   // the library tiling structs

struct Ub {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b, c, d, t;
    Ub() {
        pipe.InitBuffer(a, 16384); pipe.InitBuffer(b, 16384); pipe.InitBuffer(c, 16384);
        pipe.InitBuffer(d, 16384); pipe.InitBuffer(t, 32768);
    }
};

static TopkTiling topk_tiling(int inner, int outter, int k, bool small = false) {
    fe::PlatFormInfos pi;
    platform_ascendc::PlatformAscendC plat(&pi);
    TopkTiling t;
    TopKTilingFunc(plat, inner, outter, k, 4, false, small ? TopKMode::TOPK_NSMALL : TopKMode::TOPK_NORMAL, true, t);
    return t;
}

// SCENARIO: clean_library_calls
static void clean_library_calls() {
    Ub u;
    auto s = u.a.Get<float>(); auto i = u.b.Get<uint32_t>(); auto d = u.c.Get<float>(); auto tmp = u.t.Get<float>();
    Sort32(d, s, i, 4);
    Sort<float, true>(d, s, i, tmp, 4);
    Extract(s, i, d, 4);
    MrgSortSrcList<float> l(d[0], d[64], d[128], d[192]);
    MrgSort4Info p; p.elementLengths[0] = p.elementLengths[1] = p.elementLengths[2] = p.elementLengths[3] = 32;
    p.validBit = 15;
    MrgSort(u.d.Get<float>(), l, p);
    TopKInfo info{2, 64, 64};
    LocalTensor<bool> fin;
    TopK<float>(u.d.Get<float>(), u.b.Get<int32_t>(), s, u.b.Get<int32_t>(), fin, u.t.Get<uint8_t>(), 8,
                topk_tiling(64, 2, 8), info);
}

// SCENARIO: sort32_repeat
static void sort32_repeat() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b, d;
    pipe.InitBuffer(a, 32768); pipe.InitBuffer(b, 32768); pipe.InitBuffer(d, 65536);
    Sort32(d.Get<float>(), a.Get<float>(), b.Get<uint32_t>(), 256);  // EXPECT: L2.REPEAT_LIMIT
}

// SCENARIO: sort32_align
static void sort32_align() {
    Ub u;
    Sort32(u.c.Get<float>()[4], u.a.Get<float>(), u.b.Get<uint32_t>(), 1);  // EXPECT: L2.ALIGN_32B
}

// SCENARIO: sort_dtype
static void sort_dtype() {
    Ub u;
    Sort32(u.c.Get<int32_t>(), u.a.Get<int32_t>(), u.b.Get<uint32_t>(), 1);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: sort_full_tmp
static void sort_full_tmp() {
    Ub u;
    auto tmp = u.t.Get<float>(64);
    Sort<float, true>(u.c.Get<float>(), u.a.Get<float>(), u.b.Get<uint32_t>(), tmp, 4);  // EXPECT: L2.TMP_BUFFER
}

// SCENARIO: sort_full_tmp_overlap
static void sort_full_tmp_overlap() {
    Ub u;
    auto d = u.c.Get<float>();
    auto tmp = u.c.Get<float>();
    Sort<float, true>(d, u.a.Get<float>(), u.b.Get<uint32_t>(), tmp, 4);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: mrgsort_valid_bit
static void mrgsort_valid_bit() {
    Ub u;
    auto s = u.a.Get<float>();
    MrgSortSrcList<float> l(s[0], s[64], s[128], s[192]);
    MrgSort4Info p; p.elementLengths[0] = p.elementLengths[1] = 32; p.validBit = 5;
    MrgSort(u.c.Get<float>(), l, p);  // EXPECT: L2.API_PARAM
}

// SCENARIO: mrgsort_src_align
static void mrgsort_src_align() {
    Ub u;
    auto s = u.a.Get<float>();
    MrgSortSrcList<float> l(s[1], s[64], s[128], s[192]);
    MrgSort4Info p; p.elementLengths[0] = p.elementLengths[1] = 8; p.validBit = 3;
    MrgSort(u.c.Get<float>(), l, p);  // EXPECT: L2.API_PARAM
}

// SCENARIO: mrgsort_repeat_conditions
static void mrgsort_repeat_conditions() {
    Ub u;
    auto s = u.a.Get<float>();
    const uint16_t lens[4] = {16, 16, 16, 16};
    uint32_t sorted[4];
    MrgSortSrcList<float> l(s[0], s[64], s[128], s[192]);
    MrgSort<float>(u.c.Get<float>(), l, lens, sorted, 0b1111, 2);  // EXPECT: L2.API_PARAM
}

// SCENARIO: topk_k_range
static void topk_k_range() {
    Ub u;
    TopKInfo info{1, 32, 20};
    LocalTensor<bool> fin;
    TopK<float>(u.c.Get<float>(), u.d.Get<int32_t>(), u.a.Get<float>(), u.b.Get<int32_t>(), fin,  // EXPECT: L2.API_PARAM
                u.t.Get<uint8_t>(), 21, topk_tiling(32, 1, 21), info);
}

// SCENARIO: topk_inner_not_32
static void topk_inner_not_32() {
    Ub u;
    TopKInfo info{1, 40, 40};
    LocalTensor<bool> fin;
    TopK<float>(u.c.Get<float>(), u.d.Get<int32_t>(), u.a.Get<float>(), u.b.Get<int32_t>(), fin,  // EXPECT: L2.API_PARAM
                u.t.Get<uint8_t>(), 4, topk_tiling(64, 1, 4), info);
}

// SCENARIO: topk_small_inner
static void topk_small_inner() {
    Ub u;
    TopKInfo info{2, 64, 64};
    LocalTensor<bool> fin;
    TopK<float, false, false, false, TopKMode::TOPK_NSMALL>(  // EXPECT: L2.API_PARAM
        u.c.Get<float>(), u.d.Get<int32_t>(), u.a.Get<float>(), u.b.Get<int32_t>(), fin, u.t.Get<uint8_t>(), 4,
        topk_tiling(64, 2, 4), info);
}

// SCENARIO: topk_tiling_mismatch
static void topk_tiling_mismatch() {
    Ub u;
    TopKInfo info{1, 64, 64};
    LocalTensor<bool> fin;
    TopK<float>(u.c.Get<float>(), u.d.Get<int32_t>(), u.a.Get<float>(), u.b.Get<int32_t>(), fin,  // EXPECT: L2.API_PARAM
                u.t.Get<uint8_t>(), 4, topk_tiling(128, 1, 4), info);
}

// SCENARIO: topk_tmp_small
static void topk_tmp_small() {
    Ub u;
    TopKInfo info{1, 256, 256};
    LocalTensor<bool> fin;
    TopK<float>(u.c.Get<float>(), u.d.Get<int32_t>(), u.a.Get<float>(), u.b.Get<int32_t>(), fin,  // EXPECT: L2.TMP_BUFFER
                u.t.Get<uint8_t>(1024), 4, topk_tiling(256, 1, 4), info);
}

// SCENARIO: topk_overlap
static void topk_overlap() {
    Ub u;
    TopKInfo info{1, 64, 64};
    LocalTensor<bool> fin;
    auto x = u.a.Get<float>();
    TopK<float>(x, u.d.Get<int32_t>(), x, u.b.Get<int32_t>(), fin,  // EXPECT: L2.OPERAND_OVERLAP
                u.t.Get<uint8_t>(), 4, topk_tiling(64, 1, 4), info);
}

// SCENARIO: sort_310p
static void sort_310p() {
    Ub u;
    Sort32(u.c.Get<half>(), u.a.Get<half>(), u.b.Get<uint32_t>(), 1);  // EXPECT: L4.API_UNKNOWN
}
// SCENARIO: math_tmp_small
static void math_tmp_small() {
    Ub u;
    Tanh(u.c.Get<float>(), u.a.Get<float>(), u.t.Get<uint8_t>(256), 1024);  // EXPECT: L2.TMP_BUFFER
}

// SCENARIO: math_in_place
static void math_in_place() {
    Ub u;
    auto x = u.a.Get<float>();
    Sigmoid(x, x, u.t.Get<uint8_t>(), 1024);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: math_tmp_overlap
static void math_tmp_overlap() {
    Ub u;
    Erf(u.c.Get<float>(), u.a.Get<float>(), u.a.Get<uint8_t>(), 1024);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: math_dtype
static void math_dtype() {
    Ub u;
    Gelu(u.c.Get<int32_t>(), u.a.Get<int32_t>(), 256);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: math_ub_bounds
static void math_ub_bounds() {
    Ub u;
    Sin(u.c.Get<float>(), u.a.Get<float>(), 8192);  // EXPECT: L2.UB_BOUNDS
}
// SCENARIO: softmax_unaligned_k
static void softmax_unaligned_k() {
    Ub u;
    SoftMaxTiling tiling;
    SoftMaxShapeInfo info{4, 30, 4, 30};
    SoftMax(u.c.Get<float>(), u.a.Get<float>(), u.t.Get<uint8_t>(), tiling, info);  // EXPECT: L2.API_PARAM
}

// SCENARIO: softmax_tmp_small
static void softmax_tmp_small() {
    Ub u;
    SoftMaxTiling tiling;
    SoftMaxShapeInfo info{4, 1024, 4, 1024};
    SoftMax(u.c.Get<float>(), u.a.Get<float>(), u.t.Get<uint8_t>(1024), tiling, info);  // EXPECT: L2.TMP_BUFFER
}

// SCENARIO: softmax_no_shape
static void softmax_no_shape() {
    Ub u;
    SoftMaxTiling tiling;
    SoftMax(u.c.Get<float>(), u.a.Get<float>(), tiling);  // EXPECT: L2.API_PARAM
}

// SCENARIO: rmsnorm_tmp_overlap
static void rmsnorm_tmp_overlap() {
    Ub u;
    RmsNormTiling tiling;
    GetRmsNormTilingInfo(ge::Shape({1, 8, 64}), ge::Shape({1, 8, 64}), 4096, 4, tiling);
    RmsNorm(u.c.Get<float>(), u.a.Get<float>(), u.b.Get<float>(), u.a.Get<uint8_t>(), 1e-5f, tiling);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: layernorm_no_tiling
static void layernorm_no_tiling() {
    Ub u;
    LayerNormTiling tiling;
    LayerNorm(u.c.Get<float>(), u.d.Get<float>(), u.d.Get<float>()[64], u.a.Get<float>(), u.b.Get<float>(),  // EXPECT: L2.API_PARAM
              u.b.Get<float>()[1024], 1e-5f, tiling);
}

// SCENARIO: rmsnorm_dtype
static void rmsnorm_dtype() {
    Ub u;
    RmsNormTiling tiling;
    GetRmsNormTilingInfo(ge::Shape({1, 8, 64}), ge::Shape({1, 8, 64}), 4096, 4, tiling);
    RmsNorm(u.c.Get<int32_t>(), u.a.Get<int32_t>(), u.b.Get<int32_t>(), 1, tiling);  // EXPECT: L2.DTYPE_UNSUPPORTED
}
// SCENARIO: quant_channel_count
static void quant_channel_count() {
    Ub u;
    AscendQuant(u.c.Get<int8_t>(), u.a.Get<float>(), u.b.Get<float>(), u.b.Get<float>()[64], 48, 48, 100);  // EXPECT: L2.API_PARAM
}

// SCENARIO: dequant_params
static void dequant_params() {
    Ub u;
    AscendDequant<float, float>(u.c.Get<float>(), u.a.Get<int32_t>(), u.b.Get<float>(), DequantParams{2, 12, 8});  // EXPECT: L2.API_PARAM
}
// SCENARIO: reduce_pattern_unaligned
static void reduce_pattern_unaligned() {
    Ub u;
    const uint32_t shape[2] = {4, 20};
    ReduceSum<float, Pattern::Reduce::AR>(u.c.Get<float>(), u.a.Get<float>(), u.t.Get<uint8_t>(), shape, false);  // EXPECT: L2.API_PARAM
}

// SCENARIO: reduce_sum_dtype
static void reduce_sum_dtype() {
    Ub u;
    const uint32_t shape[2] = {4, 32};
    ReduceSum<half, Pattern::Reduce::AR>(u.c.Get<half>(), u.a.Get<half>(), shape, true);  // EXPECT: L2.DTYPE_UNSUPPORTED
}
// SCENARIO: transpose_tmp_small
static void transpose_tmp_small() {
    Ub u;
    TransposeParamsExt p(1, 16, 4, 8, TransposeType::TRANSPOSE_NCHW2NHWC);
    Transpose(u.c.Get<float>(), u.a.Get<float>(), u.t.Get<uint8_t>(1024), p);  // EXPECT: L2.TMP_BUFFER
}

// SCENARIO: transpose_dtype
static void transpose_dtype() {
    Ub u;
    Transpose(u.c.Get<float>(), u.a.Get<float>());  // EXPECT: L2.DTYPE_UNSUPPORTED
}
// SCENARIO: cumsum_inner_unaligned
static void cumsum_inner_unaligned() {
    Ub u;
    auto d = u.c.Get<float>(); auto last = u.d.Get<float>();
    CumSum<float>(d, last, u.a.Get<float>(), CumSumInfo{4, 10});  // EXPECT: L2.API_PARAM
}
// SCENARIO: normalize_para
static void normalize_para() {
    Ub u;
    NormalizePara p{4, 40, 36};
    Normalize<float, float>(u.c.Get<float>(), u.d.Get<float>(), u.d.Get<float>()[64], u.d.Get<float>()[128],  // EXPECT: L2.API_PARAM
                            u.a.Get<float>(), u.b.Get<float>(), u.b.Get<float>()[64], 1e-5f, p);
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
    S(clean_library_calls) S(sort32_repeat) S(sort32_align) S(sort_dtype) S(sort_full_tmp) S(sort_full_tmp_overlap)
    S(mrgsort_valid_bit) S(mrgsort_src_align) S(mrgsort_repeat_conditions) S(topk_k_range) S(topk_inner_not_32)
    S(topk_small_inner) S(topk_tiling_mismatch) S(topk_tmp_small) S(topk_overlap) S(sort_310p)
    S(math_tmp_small) S(math_in_place) S(math_tmp_overlap) S(math_dtype) S(math_ub_bounds)
    S(softmax_unaligned_k) S(softmax_tmp_small) S(softmax_no_shape) S(rmsnorm_tmp_overlap) S(layernorm_no_tiling)
    S(rmsnorm_dtype) S(quant_channel_count) S(dequant_params) S(reduce_pattern_unaligned) S(reduce_sum_dtype)
    S(transpose_tmp_small) S(transpose_dtype) S(cumsum_inner_unaligned) S(normalize_para)
#ifdef HL_RULES_MORE
    HL_RULES_MORE
#endif
    cannsim::end_block();
    return 0;
}
