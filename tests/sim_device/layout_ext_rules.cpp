// Rule scenarios of TransDataTo5HD, TransData, CastDequant, BilinearInterpolation and SoftmaxFlashV3 for tests/test_sim_api_layout.py. Each scenario sits
// after a "// SCENARIO: name" marker; every line that must be reported carries "// EXPECT: <id>"
// and nothing else may be reported.
// Usage: layout_ext_rules SCENARIO ARCH
#include <string>
#include "kernel_operator.h"

using namespace AscendC;

struct Ub {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b, t;
    Ub() { pipe.InitBuffer(a, 16384); pipe.InitBuffer(b, 16384); pipe.InitBuffer(t, 16384); }
};

template <typename T> static void lists(Ub& u, LocalTensor<T> (&d)[16], LocalTensor<T> (&s)[16], uint32_t skew = 0) {
    const uint32_t per = 32 / sizeof(T);
    for (int i = 0; i < 16; ++i) { d[i] = u.b.Get<T>()[per * i + (i == 5 ? skew : 0)]; s[i] = u.a.Get<T>()[per * i]; }
}

static constexpr TransDataConfig kToNdc = {DataFormat::NCDHW, DataFormat::NDC1HWC0};
static constexpr TransDataConfig kToFz = {DataFormat::NCDHW, DataFormat::FRACTAL_Z_3D};
static constexpr TransDataConfig kNdToNz = {DataFormat::ND, DataFormat::NZ};

// SCENARIO: clean_calls
static void clean_calls() {
    Ub u;
    LocalTensor<half> d[16], s[16];
    lists(u, d, s);
    TransDataTo5HD<half>(d, s, {false, false, 4, 16, 16});
    LocalTensor<int8_t> d8[16], s8[16];
    lists(u, d8, s8);
    TransDataTo5HD<int8_t>(d8, s8, {true, true, 1, 0, 0});
    uint64_t da[16], sa[16];
    for (int i = 0; i < 16; ++i) { da[i] = u.b.Get<float>()[8 * i].GetPhyAddr(); sa[i] = u.a.Get<float>()[8 * i].GetPhyAddr(); }
    TransDataTo5HD<float>(da, sa, {false, false, 2, 16, 16});
    auto ncdhw = MakeLayout(MakeShape(2, 20, 1, 3, 5), MakeStride());
    auto ndc = MakeLayout(MakeShape(2, 1, 2, 3, 5, 16), MakeStride());
    TransDataParams<decltype(ncdhw), decltype(ndc)> p = {ncdhw, ndc};
    TransData<kToNdc>(u.b.Get<half>(), u.a.Get<half>(), u.t.Get<uint8_t>(), p);
    TransData<kToNdc>(u.b.Get<half>(), u.a.Get<half>(), p);
}

// SCENARIO: t5hd_align
static void t5hd_align() {
    Ub u;
    LocalTensor<half> d[16], s[16];
    lists(u, d, s, 8);
    TransDataTo5HD<half>(d, s, {false, false, 1, 0, 0});  // EXPECT: L2.ALIGN_32B
}

// SCENARIO: t5hd_repeat_past_buffer
static void t5hd_repeat_past_buffer() {
    Ub u;
    LocalTensor<half> d[16], s[16];
    lists(u, d, s);
    TransDataTo5HD<half>(d, s, {false, false, 40, 16, 16});  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: t5hd_one_repeat_starts_a_stride_in
static void t5hd_one_repeat_starts_a_stride_in() {
    Ub u;
    LocalTensor<half> d[16], s[16];
    for (int i = 0; i < 16; ++i) { d[i] = u.b.Get<half>()[16 * i]; s[i] = u.a.Get<half>()[16 * 16 * 31 + 16 * i]; }
    TransDataTo5HD<half>(s, d, {false, false, 2, 0, 16});
    TransDataTo5HD<half>(d, s, {false, false, 1, 16, 16});  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: t5hd_address_in_no_buffer
static void t5hd_address_in_no_buffer() {
    Ub u;
    uint64_t da[16], sa[16];
    for (int i = 0; i < 16; ++i) { da[i] = u.b.Get<half>()[16 * i].GetPhyAddr(); sa[i] = u.a.Get<half>()[16 * i].GetPhyAddr(); }
    sa[3] = u.t.Get<half>().GetPhyAddr() + 16384 + 4096;
    TransDataTo5HD<half>(da, sa, {false, false, 1, 0, 0});  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: t5hd_bf16_a2
static void t5hd_bf16_a2() {
    Ub u;
    LocalTensor<bfloat16_t> d[16], s[16];
    lists(u, d, s);
    TransDataTo5HD<bfloat16_t>(d, s, {false, false, 1, 0, 0});  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: t5hd_bf16_950
static void t5hd_bf16_950() {
    Ub u;
    LocalTensor<bfloat16_t> d[16], s[16];
    lists(u, d, s);
    TransDataTo5HD<bfloat16_t>(d, s, {false, false, 1, 0, 0});
}

// SCENARIO: t5hd_address_tensor_short
static void t5hd_address_tensor_short() {
    Ub u;
    LocalTensor<uint64_t> d = u.t.Get<uint64_t>()[2040], s = u.t.Get<uint64_t>()[0];
    for (int i = 0; i < 16; ++i) s.SetValue(i, u.a.Get<half>()[16 * i].GetPhyAddr());
    TransDataTo5HD<half>(d, s, {false, false, 1, 0, 0});  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: trans_data_c1_mismatch
static void trans_data_c1_mismatch() {
    Ub u;
    auto ncdhw = MakeLayout(MakeShape(1, 20, 1, 4, 4), MakeStride());
    auto ndc = MakeLayout(MakeShape(1, 1, 1, 4, 4, 16), MakeStride());
    TransDataParams<decltype(ncdhw), decltype(ndc)> p = {ncdhw, ndc};
    TransData<kToNdc>(u.b.Get<half>(), u.a.Get<half>(), u.t.Get<uint8_t>(), p);  // EXPECT: L2.API_PARAM
}

// SCENARIO: trans_data_rank
static void trans_data_rank() {
    Ub u;
    auto ncdhw = MakeLayout(MakeShape(16, 16, 1, 4, 4), MakeStride());
    auto ndc = MakeLayout(MakeShape(1, 1, 4, 4, 1, 16, 16), MakeStride());
    TransDataParams<decltype(ncdhw), decltype(ndc)> p = {ncdhw, ndc};
    TransData<kToNdc>(u.b.Get<half>(), u.a.Get<half>(), u.t.Get<uint8_t>(), p);  // EXPECT: L2.API_PARAM
}

// SCENARIO: trans_data_config
static void trans_data_config() {
    Ub u;
    auto nd = MakeLayout(MakeShape(16, 16), MakeStride());
    TransDataParams<decltype(nd), decltype(nd)> p = {nd, nd};
    TransData<kNdToNz>(u.b.Get<half>(), u.a.Get<half>(), u.t.Get<uint8_t>(), p);  // EXPECT: L2.API_PARAM
}

// SCENARIO: trans_data_overlap
static void trans_data_overlap() {
    Ub u;
    auto ncdhw = MakeLayout(MakeShape(16, 16, 1, 4, 4), MakeStride());
    auto fz = MakeLayout(MakeShape(1, 1, 4, 4, 1, 16, 16), MakeStride());
    TransDataParams<decltype(ncdhw), decltype(fz)> p = {ncdhw, fz};
    TransData<kToFz>(u.a.Get<half>()[1024], u.a.Get<half>(), u.t.Get<uint8_t>(), p);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: trans_data_tmp_small
static void trans_data_tmp_small() {
    Ub u;
    auto ncdhw = MakeLayout(MakeShape(16, 16, 1, 4, 4), MakeStride());
    auto fz = MakeLayout(MakeShape(1, 1, 4, 4, 1, 16, 16), MakeStride());
    TransDataParams<decltype(ncdhw), decltype(fz)> p = {ncdhw, fz};
    LocalTensor<uint8_t> t = u.t.Get<uint8_t>();
    t.SetSize(8192);
    TransData<kToFz>(u.b.Get<half>(), u.a.Get<half>(), t, p);
    t.SetSize(8192 - 32);
    TransData<kToFz>(u.b.Get<half>(), u.a.Get<half>(), t, p);  // EXPECT: L2.TMP_BUFFER
}

// SCENARIO: trans_data_float
static void trans_data_float() {
    Ub u;
    auto ncdhw = MakeLayout(MakeShape(1, 16, 1, 2, 4), MakeStride());
    auto ndc = MakeLayout(MakeShape(1, 1, 1, 2, 4, 16), MakeStride());
    TransDataParams<decltype(ncdhw), decltype(ndc)> p = {ncdhw, ndc};
    TransData<kToNdc>(u.b.Get<float>(), u.a.Get<float>(), u.t.Get<uint8_t>(), p);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: trans_data_dst_bounds
static void trans_data_dst_bounds() {
    Ub u;
    auto ncdhw = MakeLayout(MakeShape(16, 16, 2, 4, 8), MakeStride());
    auto fz = MakeLayout(MakeShape(2, 1, 4, 8, 1, 16, 16), MakeStride());
    TransDataParams<decltype(ncdhw), decltype(fz)> p = {ncdhw, fz};
    TransData<kToFz>(u.b.Get<half>(), u.a.Get<half>(), p);  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: cast_dequant_clean
static void cast_dequant_clean() {
    Ub u;
    SetDeqScale(0.5f, -3, true);
    CastDequant<int8_t, int16_t, false, true>(u.b.Get<int8_t>(), u.a.Get<int16_t>(), 256);
    CastDequant<int8_t, int16_t, true, false, false>(u.b.Get<int8_t>(), u.a.Get<int16_t>(), 128, 2, {1, 1, 8, 8});
    float sc[16] = {}; int16_t off[16] = {}; bool sg[16] = {};
    SetDeqScale(u.t.Get<uint64_t>(), VdeqInfo(sc, off, sg));
    uint64_t bits[2] = {~0ull, ~0ull};
    CastDequant<uint8_t, int16_t, true, true, true>(u.b.Get<uint8_t>(), u.a.Get<int16_t>(), bits, 2, {1, 1, 8, 8});
    SetDeqScale(half(2.0f));
    CastDequant<half, int32_t>(u.b.Get<half>(), u.a.Get<int32_t>(), 512);
}

// SCENARIO: cast_dequant_sign_mode
static void cast_dequant_sign_mode() {
    Ub u;
    SetDeqScale(1.0f, 0, false);
    CastDequant<int8_t, int16_t, false>(u.b.Get<int8_t>(), u.a.Get<int16_t>(), 256);  // EXPECT: L2.API_PARAM
}

// SCENARIO: cast_dequant_vector_mode_unset
static void cast_dequant_vector_mode_unset() {
    Ub u;
    SetDeqScale(1.0f, 0, false);
    CastDequant<uint8_t, int16_t>(u.b.Get<uint8_t>(), u.a.Get<int16_t>(), 256);  // EXPECT: L2.API_PARAM
}

// SCENARIO: cast_dequant_pair
static void cast_dequant_pair() {
    Ub u;
    SetDeqScale(1.0f, 0, true);
    CastDequant<int8_t, int32_t, false>(u.b.Get<int8_t>(), u.a.Get<int32_t>(), 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: cast_dequant_mask_range
static void cast_dequant_mask_range() {
    Ub u;
    SetDeqScale(half(1.0f));
    CastDequant<half, int32_t>(u.b.Get<half>(), u.a.Get<int32_t>(), 128, 1, {1, 1, 4, 8});  // EXPECT: L2.MASK_RANGE
}

// SCENARIO: cast_dequant_dst_two_bytes_per_element
static void cast_dequant_dst_two_bytes_per_element() {
    Ub u;
    SetDeqScale(1.0f, 0, true);
    CastDequant<int8_t, int16_t, false>(u.b.Get<int8_t>()[16384 - 4096], u.a.Get<int16_t>(), 2048);
    CastDequant<int8_t, int16_t, false>(u.b.Get<int8_t>()[16384 - 4096], u.a.Get<int16_t>(), 4096);  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: cast_dequant_half_310p
static void cast_dequant_half_310p() {
    Ub u;
    SetDeqScale(half(1.0f));
    CastDequant<half, int32_t>(u.b.Get<half>(), u.a.Get<int32_t>(), 64);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// SCENARIO: set_deq_scale_tensor_align
static void set_deq_scale_tensor_align() {
    Ub u;
    float sc[16] = {}; int16_t off[16] = {}; bool sg[16] = {};
    SetDeqScale(u.t.Get<uint64_t>()[1], VdeqInfo(sc, off, sg));  // EXPECT: L2.ALIGN_32B
}

// Four vertical x two horizontal iterations over src0 (64 blocks), offsets in t[0..], src1 in t[8192..].
struct Bilinear {
    Ub u;
    LocalTensor<half> src0, src1;
    LocalTensor<uint32_t> off;
    LocalTensor<uint8_t> tmp;
    TPipe p2;
    TBuf<TPosition::VECCALC> tb;
    Bilinear() {
        src0 = u.a.Get<half>(); src0.SetSize(1024);
        off = u.t.Get<uint32_t>(); off.SetSize(64);
        src1 = u.t.Get<half>()[4096]; src1.SetSize(64);
        p2.InitBuffer(tb, 1024 * 32 + 64 * 32);
        tmp = tb.Get<uint8_t>();
        for (int k = 0; k < 64; ++k) off.SetValue(k, 32u * k);
    }
};

// SCENARIO: bilinear_clean
static void bilinear_clean() {
    Bilinear b;
    BilinearInterpolation(b.u.b.Get<half>(), b.src0, b.off, b.src1, 128, 2, false, 1, 128, 4, b.tmp);
    uint64_t bits[2] = {~0ull, 1};
    BilinearInterpolation(b.u.b.Get<half>(), b.src0, b.off, b.src1, bits, 2, true, 2, 256, 4, b.tmp);
}

// SCENARIO: bilinear_vroffset
static void bilinear_vroffset() {
    Bilinear b;
    BilinearInterpolation(b.u.b.Get<half>(), b.src0, b.off, b.src1, 128, 2, false, 1, 120, 4, b.tmp);  // EXPECT: L2.API_PARAM
}

// SCENARIO: bilinear_vertical_overlap
static void bilinear_vertical_overlap() {
    Bilinear b;
    BilinearInterpolation(b.u.b.Get<half>(), b.src0, b.off, b.src1, 128, 2, false, 2, 128, 4, b.tmp);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: bilinear_tmp_small
static void bilinear_tmp_small() {
    Bilinear b;
    LocalTensor<uint8_t> t = b.tmp;
    t.SetSize(1024 * 32 + 64 * 32 - 32);
    BilinearInterpolation(b.u.b.Get<half>(), b.src0, b.off, b.src1, 128, 2, false, 1, 128, 4, t);  // EXPECT: L2.TMP_BUFFER
}

// SCENARIO: bilinear_offset_outside_src0
static void bilinear_offset_outside_src0() {
    Bilinear b;
    b.off.SetValue(9, 2048 - 16);
    BilinearInterpolation(b.u.b.Get<half>(), b.src0, b.off, b.src1, 128, 2, false, 1, 128, 4, b.tmp);  // EXPECT: L2.UB_BOUNDS
}

// SCENARIO: bilinear_sources_overlap
static void bilinear_sources_overlap() {
    Bilinear b;
    LocalTensor<half> s1 = b.src0[512];
    s1.SetSize(64);
    BilinearInterpolation(b.u.b.Get<half>(), b.src0, b.off, s1, 128, 2, false, 1, 128, 4, b.tmp);  // EXPECT: L2.OPERAND_OVERLAP
}

// SCENARIO: bilinear_float
static void bilinear_float() {
    Bilinear b;
    LocalTensor<float> s0 = b.u.a.Get<float>(), s1 = b.u.t.Get<float>()[2048];
    s0.SetSize(512); s1.SetSize(64);
    BilinearInterpolation(b.u.b.Get<float>(), s0, b.off, s1, 64, 2, false, 1, 128, 4, b.tmp);  // EXPECT: L2.DTYPE_UNSUPPORTED
}

// [8, 512] half rows, float statistics of 8 x 8.
struct FlashV3 {
    TPipe pipe;
    TBuf<TPosition::VECCALC> x, y, st, tmp;
    FlashV3() { pipe.InitBuffer(x, 8192); pipe.InitBuffer(y, 8192); pipe.InitBuffer(st, 2048); pipe.InitBuffer(tmp, 8192); }
    LocalTensor<float> stat(int i) { return st.Get<float>()[64 * i]; }
    tiling::SoftMaxTiling t{};
};

// SCENARIO: flash_v3_clean
static void flash_v3_clean() {
    FlashV3 f;
    SoftMaxParams p(8, 512, 8, 512, 2, 8, 0.9375f);
    SoftmaxFlashV3<half, float, true>(f.y.Get<half>(), f.stat(0), f.stat(1), f.stat(2), f.x.Get<half>(),
                                      f.st.Get<half>()[128 * 3], f.stat(4), f.stat(5), f.stat(6), f.tmp.Get<uint8_t>(), f.t, p);
    SoftmaxFlashV3<half, float>(f.y.Get<half>(), f.stat(0), f.stat(1), f.stat(2), f.x.Get<half>(),
                                f.st.Get<half>()[128 * 3], f.stat(4), f.stat(5), f.stat(6), f.t, p);
}

// SCENARIO: flash_v3_width
static void flash_v3_width() {
    FlashV3 f;
    SoftMaxParams p(8, 448, 8, 448, 1, 8, 0.9375f);
    SoftmaxFlashV3<half, float>(f.y.Get<half>(), f.stat(0), f.stat(1), f.stat(2), f.x.Get<half>(),  // EXPECT: L2.API_PARAM
                                f.st.Get<half>()[128 * 3], f.stat(4), f.stat(5), f.stat(6), f.t, p);
}

// SCENARIO: flash_v3_split
static void flash_v3_split() {
    FlashV3 f;
    SoftMaxParams p(8, 512, 8, 512, 1, 4, 0.9375f);
    SoftmaxFlashV3<half, float>(f.y.Get<half>(), f.stat(0), f.stat(1), f.stat(2), f.x.Get<half>(),  // EXPECT: L2.API_PARAM
                                f.st.Get<half>()[128 * 3], f.stat(4), f.stat(5), f.stat(6), f.t, p);
}

// SCENARIO: flash_v3_tmp_small
static void flash_v3_tmp_small() {
    FlashV3 f;
    SoftMaxParams p(8, 512, 8, 512, 1, 8, 0.9375f);
    LocalTensor<uint8_t> t = f.tmp.Get<uint8_t>();
    t.SetSize(3 * 2048 + 64 - 32);
    SoftmaxFlashV3<half, float>(f.y.Get<half>(), f.stat(0), f.stat(1), f.stat(2), f.x.Get<half>(),  // EXPECT: L2.TMP_BUFFER
                                f.st.Get<half>()[128 * 3], f.stat(4), f.stat(5), f.stat(6), t, f.t, p);
}

// SCENARIO: flash_v3_stats_overlap
static void flash_v3_stats_overlap() {
    FlashV3 f;
    SoftMaxParams p(8, 512, 8, 512, 1, 8, 0.9375f);
    SoftmaxFlashV3<half, float>(f.y.Get<half>(), f.stat(0), f.stat(0)[32], f.stat(2), f.x.Get<half>(),  // EXPECT: L2.OPERAND_OVERLAP
                                f.st.Get<half>()[128 * 3], f.stat(4), f.stat(5), f.stat(6), f.t, p);
}

// SCENARIO: flash_v3_float_data
static void flash_v3_float_data() {
    FlashV3 f;
    SoftMaxParams p(8, 512, 8, 512, 1, 8, 0.9375f);
    TPipe p2;
    TBuf<TPosition::VECCALC> big;
    p2.InitBuffer(big, 32768);
    SoftmaxFlashV3<float, float>(big.Get<float>(), f.stat(0), f.stat(1), f.stat(2), big.Get<float>()[4096],  // EXPECT: L2.DTYPE_UNSUPPORTED
                                 f.stat(3), f.stat(4), f.stat(5), f.stat(6), f.t, p);
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
    S(clean_calls) S(t5hd_align) S(t5hd_repeat_past_buffer) S(t5hd_one_repeat_starts_a_stride_in)
    S(t5hd_address_in_no_buffer) S(t5hd_bf16_a2) S(t5hd_bf16_950) S(t5hd_address_tensor_short)
    S(trans_data_c1_mismatch) S(trans_data_rank) S(trans_data_config) S(trans_data_overlap) S(trans_data_tmp_small)
    S(trans_data_float) S(trans_data_dst_bounds) S(cast_dequant_clean) S(cast_dequant_sign_mode)
    S(cast_dequant_vector_mode_unset) S(cast_dequant_pair) S(cast_dequant_mask_range)
    S(cast_dequant_dst_two_bytes_per_element) S(cast_dequant_half_310p) S(set_deq_scale_tensor_align)
    S(bilinear_clean) S(bilinear_vroffset) S(bilinear_vertical_overlap) S(bilinear_tmp_small)
    S(bilinear_offset_outside_src0) S(bilinear_sources_overlap) S(bilinear_float)
    S(flash_v3_clean) S(flash_v3_width) S(flash_v3_split) S(flash_v3_tmp_small) S(flash_v3_stats_overlap)
    S(flash_v3_float_data)
#undef S
    cannsim::end_block();
    return 0;
}
