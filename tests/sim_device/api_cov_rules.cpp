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
#undef S
    cannsim::end_block();
    return 0;
}
