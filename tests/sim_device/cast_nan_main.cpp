// Probes for tests/test_cast_nan_semantics.py: the Cast pair table per arch, the scalar Casts and
// the NaN readings of Max/Min/Relu/ReduceMax. Usage: cast_nan_main PROBE ARCH DIAG_FILE; prints
// one JSON object.
#include <fcntl.h>
#include <cmath>
#include <cstdio>
#include <string>
#include "kernel_operator.h"

using namespace AscendC;

// Every (src, dst, mode) triple, accepted (1) or not (0), as one string "src>dst:mode=0|1;...".
static void cast_table() {
    using namespace cannsim;
    const uint32_t types[] = {dtype_of<int8_t>(), dtype_of<uint8_t>(), dtype_of<int16_t>(), dtype_of<uint16_t>(),
                              dtype_of<half>(), dtype_of<bfloat16_t>(), dtype_of<int32_t>(), dtype_of<uint32_t>(),
                              dtype_of<float>(), dtype_of<int64_t>(), dtype_of<double>()};
    std::string out;
    for (uint32_t s : types)
        for (uint32_t d : types)
            for (int m = 0; m <= 6; ++m) {
                bool known = false;
                if (cannsim::cast_supported(s, d, m, &known)) {
                    out += cannsim::dtype_name(s); out += ">"; out += cannsim::dtype_name(d);
                    out += ":" + std::to_string(m) + ";";
                }
            }
    std::printf("{\"accepted\": \"%s\"}\n", out.c_str());
}

static void scalar_casts() {
    const half h = Cast<float, half, RoundMode::CAST_ODD>(3.14159f);
    const int32_t r = Cast<float, int32_t, RoundMode::CAST_ROUND>(2.5f);
    const int32_t e = Cast<float, int32_t, RoundMode::CAST_RINT>(2.5f);
    const int32_t c = Cast<float, int32_t, RoundMode::CAST_CEIL>(1.5f);
    const int32_t f = Cast<float, int32_t, RoundMode::CAST_FLOOR>(-1.5f);
    const bfloat16_t b = Cast(3.14159f);
    const float back = Cast(b);
    std::printf("{\"odd_half\": %.9g, \"round\": %d, \"rint\": %d, \"ceil\": %d, \"floor\": %d, \"bf16\": %.9g, "
                "\"bf16_back\": %.9g}\n", static_cast<float>(h), r, e, c, f, static_cast<float>(b), back);
}

// A Cast call the arch does not list: half -> int8 with CAST_NONE (A2 yes, 950 no), int8 -> int32
// (950 yes, A2 no).
static void cast_calls() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 8192);
    LocalTensor<half> h = b.GetWithOffset<half>(128, 0);
    LocalTensor<int8_t> i8 = b.GetWithOffset<int8_t>(128, 1024);
    LocalTensor<int32_t> i32 = b.GetWithOffset<int32_t>(128, 2048);
    Duplicate(h, half(1.0f), 128);
    Cast(i8, h, RoundMode::CAST_NONE, 128);
    Cast(i32, i8, RoundMode::CAST_NONE, 128);
    std::printf("{}\n");
}

static void nan_reductions() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 8192);
    LocalTensor<float> x = b.GetWithOffset<float>(64, 0);
    LocalTensor<float> y = b.GetWithOffset<float>(64, 256);
    LocalTensor<float> out = b.GetWithOffset<float>(64, 512);
    LocalTensor<float> work = b.GetWithOffset<float>(64, 1024);
    auto to_vector = [] { SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0); };
    auto to_scalar = [] { SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0); };
    for (int i = 0; i < 64; ++i) { x.SetValue(i, static_cast<float>(i % 7)); y.SetValue(i, 3.0f); }
    x.SetValue(9, NAN); x.SetValue(20, NAN); y.SetValue(1, NAN);
    to_vector();
    ReduceMax<float>(out, x, work, 64, true);
    to_scalar();
    const float mx = out.GetValue(0);
    const uint32_t mxi = out.ReinterpretCast<uint32_t>().GetValue(1);
    ReduceMin<float>(out, x, work, 64, true);
    to_scalar();
    const float mn = out.GetValue(0);
    const uint32_t mni = out.ReinterpretCast<uint32_t>().GetValue(1);
    x.SetValue(9, 2.0f); x.SetValue(20, 2.0f);
    to_vector();
    ReduceMax<float>(out, x, work, 64, true);
    to_scalar();
    const float clean = out.GetValue(0);
    Max(out, x, y, 64);
    to_scalar();
    const float max_b_nan = out.GetValue(1), max_plain = out.GetValue(2);
    x.SetValue(4, NAN);
    to_vector();
    Relu(out, x, 64);
    to_scalar();
    const float relu_nan = out.GetValue(4);
    Min(out, x, y, 64);
    to_scalar();
    const float min_a_nan = out.GetValue(4);
    std::printf("{\"max\": \"%g\", \"max_index\": %u, \"min\": \"%g\", \"min_index\": %u, \"clean_max\": %g, "
                "\"max_b_nan\": \"%g\", \"max_plain\": %g, \"relu_nan\": \"%g\", \"min_a_nan\": \"%g\"}\n",
                mx, mxi, mn, mni, clean, max_b_nan, max_plain, relu_nan, min_a_nan);
}

int main(int argc, char** argv) {
    const std::string s = argc > 1 ? argv[1] : "";
    const int arch = argc > 2 ? std::atoi(argv[2]) : 2201;
    const int fd = argc > 3 ? ::open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644) : 2;
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", arch == 3510 ? "950PR" : "910B2");
    c.arch = arch; c.vector_cores = 48; c.ub_bytes = 192 * 1024 - 256 - 8 * 1024;
    c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::set_diag_fd(fd);
    cannsim::begin_block(0, 1);
    if (s == "cast_table") cast_table();
    if (s == "scalar_casts") scalar_casts();
    if (s == "cast_calls") cast_calls();
    if (s == "nan_reductions") nan_reductions();
    cannsim::end_block();
    return 0;
}
