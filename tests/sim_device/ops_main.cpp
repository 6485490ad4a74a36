// Numerical driver for tests/test_sim_device.py: runs one device API on data from files.
// Usage: ops_main key=value ...   (op, dtype, n, in0, in1, out, scalar, mode, src, dst, mask, ...)
// Inputs are raw little-endian arrays; `out` holds the initial dst contents and receives the result.
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>
#include "kernel_operator.h"

using namespace AscendC;
static std::map<std::string, std::string> A;

static std::vector<uint8_t> load(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}
static void save(const std::string& path, const uint8_t* p, size_t n) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n));
}
static bool has(const char* k) { return A.count(k) > 0; }
static long long I(const char* k, long long d = 0) { return has(k) ? std::stoll(A[k], nullptr, 0) : d; }
static unsigned long long U(const char* k) { return has(k) ? std::stoull(A[k], nullptr, 0) : 0; }
static double F(const char* k, double d = 0) { return has(k) ? std::stod(A[k]) : d; }

static RoundMode round_mode() {
    const std::string m = has("mode") ? A["mode"] : "none";
    if (m == "rint") return RoundMode::CAST_RINT;
    if (m == "floor") return RoundMode::CAST_FLOOR;
    if (m == "ceil") return RoundMode::CAST_CEIL;
    if (m == "round") return RoundMode::CAST_ROUND;
    if (m == "trunc") return RoundMode::CAST_TRUNC;
    if (m == "odd") return RoundMode::CAST_ODD;
    return RoundMode::CAST_NONE;
}
static CMPMODE cmp_mode() {
    const std::string m = A["cmp"];
    if (m == "lt") return CMPMODE::LT;
    if (m == "gt") return CMPMODE::GT;
    if (m == "eq") return CMPMODE::EQ;
    if (m == "le") return CMPMODE::LE;
    if (m == "ge") return CMPMODE::GE;
    return CMPMODE::NE;
}

// Copy a host byte array into a fresh UB buffer of `bytes` (rounded up to 32 B).
template <typename T>
static LocalTensor<T> to_ub(TPipe& pipe, TBuf<TPosition::VECCALC>& buf, std::vector<uint8_t>& host, size_t bytes) {
    pipe.InitBuffer(buf, static_cast<uint32_t>(bytes));
    LocalTensor<T> t = buf.Get<T>();
    host.resize((bytes + 31) / 32 * 32);
    GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<T*>(host.data()), host.size() / sizeof(T));
    DataCopy(t, g, static_cast<uint32_t>(host.size() / sizeof(T)));
    PipeBarrier<PIPE_ALL>();
    return t;
}
template <typename T>
static void from_ub(const LocalTensor<T>& t, std::vector<uint8_t>& host) {
    PipeBarrier<PIPE_ALL>();
    GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<T*>(host.data()), host.size() / sizeof(T));
    DataCopy(g, t, static_cast<uint32_t>(host.size() / sizeof(T)));
    save(A["out"], host.data(), host.size());
}

template <typename T>
static void run_typed() {
    const std::string op = A["op"];
    const int32_t n = static_cast<int32_t>(I("n"));
    TPipe pipe;
    TBuf<TPosition::VECCALC> b0, b1, bo, bt;
    auto h0 = load(A["in0"]);
    auto hout = load(A["out"]);
    LocalTensor<T> x = to_ub<T>(pipe, b0, h0, h0.size());
    std::vector<uint8_t> h1 = has("in1") ? load(A["in1"]) : std::vector<uint8_t>(32, 0);
    const T s = T(F("scalar"));
    const int64_t rep = I("repeat", 1);
    uint64_t bits[2] = {U("mask_lo"), U("mask_hi")};
    const bool bitmode = has("mask_lo");
    const uint64_t cmask = static_cast<uint64_t>(I("mask", 0));
    BinaryRepeatParams bp(I("db", 1), I("s0b", 1), I("s1b", 1), I("dr", 8), I("s0r", 8), I("s1r", 8));
    UnaryRepeatParams up(I("db", 1), I("s0b", 1), I("dr", 8), I("s0r", 8));

#define BIN(NAME, FN)                                                                             \
    if (op == NAME) {                                                                             \
        LocalTensor<T> y = to_ub<T>(pipe, b1, h1, h1.size());                                     \
        LocalTensor<T> o = to_ub<T>(pipe, bo, hout, hout.size());                                 \
        if (!has("repeat")) FN(o, x, y, n);                                                       \
        else if (bitmode) FN(o, x, y, bits, rep, bp);                                             \
        else FN(o, x, y, cmask, rep, bp);                                                         \
        return from_ub(o, hout);                                                                  \
    }
#define UN(NAME, FN)                                                                              \
    if (op == NAME) {                                                                             \
        LocalTensor<T> o = to_ub<T>(pipe, bo, hout, hout.size());                                 \
        if (!has("repeat")) FN(o, x, n);                                                          \
        else if (bitmode) FN(o, x, bits, rep, up);                                                \
        else FN(o, x, cmask, rep, up);                                                            \
        return from_ub(o, hout);                                                                  \
    }
#define SC(NAME, FN)                                                                              \
    if (op == NAME) {                                                                             \
        LocalTensor<T> o = to_ub<T>(pipe, bo, hout, hout.size());                                 \
        if (!has("repeat")) FN(o, x, s, n);                                                       \
        else if (bitmode) FN(o, x, s, bits, rep, up);                                             \
        else FN(o, x, s, cmask, rep, up);                                                         \
        return from_ub(o, hout);                                                                  \
    }
    BIN("add", Add) BIN("sub", Sub) BIN("mul", Mul) BIN("div", Div) BIN("max", Max) BIN("min", Min)
    UN("exp", Exp) UN("ln", Ln) UN("abs", Abs) UN("sqrt", Sqrt) UN("rsqrt", Rsqrt) UN("reciprocal", Reciprocal)
    UN("relu", Relu)
    SC("adds", Adds) SC("muls", Muls) SC("maxs", Maxs) SC("mins", Mins) SC("leakyrelu", LeakyRelu)
    if (op == "duplicate") {
        LocalTensor<T> o = to_ub<T>(pipe, bo, hout, hout.size());
        if (!has("repeat")) Duplicate(o, s, n);
        else Duplicate(o, s, cmask, rep, static_cast<uint16_t>(I("db", 1)), static_cast<uint8_t>(I("dr", 8)));
        return from_ub(o, hout);
    }
    if (op == "reduce_sum" || op == "reduce_max" || op == "reduce_min") {
        LocalTensor<T> o = to_ub<T>(pipe, bo, hout, hout.size());
        std::vector<uint8_t> ht(static_cast<size_t>(I("tmp_bytes", 4096)), 0);
        LocalTensor<T> tmp = to_ub<T>(pipe, bt, ht, ht.size());
        const bool ci = I("calindex", 0) != 0;
        if (op == "reduce_sum") { if (has("repeat")) ReduceSum(o, x, tmp, static_cast<int32_t>(cmask), (int32_t)rep, (int32_t)I("s0r", 8)); else ReduceSum(o, x, tmp, n); }
        if (op == "reduce_max") { if (has("repeat")) ReduceMax(o, x, tmp, static_cast<int32_t>(cmask), (int32_t)rep, (int32_t)I("s0r", 8), ci); else ReduceMax(o, x, tmp, n, ci); }
        if (op == "reduce_min") { if (has("repeat")) ReduceMin(o, x, tmp, static_cast<int32_t>(cmask), (int32_t)rep, (int32_t)I("s0r", 8), ci); else ReduceMin(o, x, tmp, n, ci); }
        return from_ub(o, hout);
    }
    if (op == "whole_sum" || op == "whole_max" || op == "whole_min" || op == "block_sum" || op == "block_max" ||
        op == "block_min" || op == "rrepeat_max" || op == "rdblock_sum") {
        LocalTensor<T> o = to_ub<T>(pipe, bo, hout, hout.size());
        const int32_t m = static_cast<int32_t>(cmask), r = static_cast<int32_t>(rep);
        const int32_t dr = (int32_t)I("dr", 1), sb = (int32_t)I("s0b", 1), sr = (int32_t)I("s0r", 8);
        const ReduceOrder ord = static_cast<ReduceOrder>(I("order", 0));
        if (op == "whole_sum") WholeReduceSum(o, x, m, r, dr, sb, sr);
        if (op == "whole_max") WholeReduceMax(o, x, m, r, dr, sb, sr, ord);
        if (op == "whole_min") WholeReduceMin(o, x, m, r, dr, sb, sr, ord);
        if (op == "block_sum") BlockReduceSum(o, x, r, m, dr, sb, sr);
        if (op == "block_max") BlockReduceMax(o, x, r, m, dr, sb, sr);
        if (op == "block_min") BlockReduceMin(o, x, r, m, dr, sb, sr);
        if (op == "rrepeat_max") ReduceRepeat<ReduceType::MAX, T>(o, x, m, r, dr, sb, sr, ord);
        if (op == "rdblock_sum") ReduceDataBlock<ReduceType::SUM, T>(o, x, m, r, dr, sb, sr);
        return from_ub(o, hout);
    }
    if (op == "compare" || op == "compares") {
        LocalTensor<uint8_t> o = to_ub<uint8_t>(pipe, bo, hout, hout.size());
        if (op == "compare") {
            LocalTensor<T> y = to_ub<T>(pipe, b1, h1, h1.size());
            if (has("repeat")) Compare(o, x, y, cmp_mode(), cmask, rep, bp); else Compare(o, x, y, cmp_mode(), n);
        } else {
            Compares(o, x, s, cmp_mode(), n);
        }
        return from_ub(o, hout);
    }
    if (op == "select") {
        LocalTensor<T> y = to_ub<T>(pipe, b1, h1, h1.size());
        auto hm = load(A["sel"]);
        LocalTensor<uint8_t> m = to_ub<uint8_t>(pipe, bt, hm, hm.size());
        LocalTensor<T> o = to_ub<T>(pipe, bo, hout, hout.size());
        const SELMODE sm = static_cast<SELMODE>(I("selmode", 2));
        if (has("scalar")) Select(o, m, x, s, sm, n);
        else if (has("repeat")) Select(o, m, x, y, sm, cmask, rep, bp);
        else Select(o, m, x, y, sm, n);
        return from_ub(o, hout);
    }
    if (op == "pad_in" || op == "copy_params_in") {
        // GM (in0) -> UB (initial contents: out) with DataCopyPad / DataCopyParams; UB written to out
        std::vector<uint8_t> hout2 = hout;
        LocalTensor<T> o = to_ub<T>(pipe, bo, hout2, hout2.size());
        GlobalTensor<T> g;
        g.SetGlobalBuffer(reinterpret_cast<T*>(h0.data()), h0.size() / sizeof(T));
        if (op == "pad_in") {
            DataCopyExtParams p(static_cast<uint16_t>(I("bc")), static_cast<uint32_t>(I("bl")),
                                static_cast<uint32_t>(I("ss")), static_cast<uint32_t>(I("ds")), 0);
            DataCopyPadExtParams<T> pad(I("ispad") != 0, static_cast<uint8_t>(I("lp")), static_cast<uint8_t>(I("rp")), s);
            if (I("legacy")) {
                DataCopyParams lp(static_cast<uint16_t>(I("bc")), static_cast<uint16_t>(I("bl")),
                                  static_cast<uint16_t>(I("ss")), static_cast<uint16_t>(I("ds")));
                uint64_t pv = 0; std::memcpy(&pv, &s, sizeof(T));
                DataCopyPad(o, g, lp, DataCopyPadParams(I("ispad") != 0, static_cast<uint8_t>(I("lp")), static_cast<uint8_t>(I("rp")), pv));
            } else {
                DataCopyPad(o, g, p, pad);
            }
        } else {
            DataCopy(o, g, DataCopyParams(static_cast<uint16_t>(I("bc")), static_cast<uint16_t>(I("bl")),
                                          static_cast<uint16_t>(I("ss")), static_cast<uint16_t>(I("ds"))));
        }
        return from_ub(o, hout2);
    }
    if (op == "pad_out" || op == "copy_params_out") {
        // UB (in0) -> GM (initial contents: out)
        GlobalTensor<T> g;
        g.SetGlobalBuffer(reinterpret_cast<T*>(hout.data()), hout.size() / sizeof(T));
        PipeBarrier<PIPE_ALL>();
        if (op == "pad_out") {
            DataCopyExtParams p(static_cast<uint16_t>(I("bc")), static_cast<uint32_t>(I("bl")),
                                static_cast<uint32_t>(I("ss")), static_cast<uint32_t>(I("ds")), 0);
            DataCopyPad(g, x, p);
        } else {
            DataCopy(g, x, DataCopyParams(static_cast<uint16_t>(I("bc")), static_cast<uint16_t>(I("bl")),
                                          static_cast<uint16_t>(I("ss")), static_cast<uint16_t>(I("ds"))));
        }
        save(A["out"], hout.data(), hout.size());
        return;
    }
    std::fprintf(stderr, "unknown op %s\n", op.c_str());
    std::exit(2);
}

template <typename S, typename D>
static void run_cast() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b0, bo;
    auto h0 = load(A["in0"]);
    auto hout = load(A["out"]);
    LocalTensor<S> x = to_ub<S>(pipe, b0, h0, h0.size());
    LocalTensor<D> o = to_ub<D>(pipe, bo, hout, hout.size());
    Cast(o, x, round_mode(), static_cast<uint32_t>(I("n")));
    from_ub(o, hout);
}

template <typename S>
static void cast_dst() {
    const std::string d = A["dst"];
    if (d == "half") return run_cast<S, half>();
    if (d == "float") return run_cast<S, float>();
    if (d == "bfloat16") return run_cast<S, bfloat16_t>();
    if (d == "int32") return run_cast<S, int32_t>();
    if (d == "int16") return run_cast<S, int16_t>();
    if (d == "int8") return run_cast<S, int8_t>();
    if (d == "uint8") return run_cast<S, uint8_t>();
    if (d == "int64") return run_cast<S, int64_t>();
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const auto eq = a.find('=');
        A[a.substr(0, eq)] = a.substr(eq + 1);
    }
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", has("chip") ? A["chip"].c_str() : "910B2");
    c.arch = static_cast<int>(I("arch", 2201));
    c.vector_cores = 48; c.ub_bytes = 1 << 20; c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::set_diag_fd(2);
    cannsim::begin_block(0, 1);
    const std::string t = A["dtype"];
    if (A["op"] == "fp") {
        // float -> half/bf16 bits for every input, and every 16-bit pattern back to float
        auto in = load(A["in0"]);
        const size_t n = in.size() / 4;
        std::vector<uint16_t> hb(n), bb(n);
        std::vector<float> hf(65536), bf(65536);
        for (size_t i = 0; i < n; ++i) {
            float f; std::memcpy(&f, &in[i * 4], 4);
            hb[i] = half(f).bits; bb[i] = bfloat16_t(f).bits;
        }
        for (uint32_t b = 0; b < 65536; ++b) {
            hf[b] = static_cast<float>(half::from_bits(static_cast<uint16_t>(b)));
            bf[b] = static_cast<float>(bfloat16_t::from_bits(static_cast<uint16_t>(b)));
        }
        save(A["out"], reinterpret_cast<uint8_t*>(hb.data()), n * 2);
        save(A["out2"], reinterpret_cast<uint8_t*>(bb.data()), n * 2);
        save(A["out3"], reinterpret_cast<uint8_t*>(hf.data()), 65536 * 4);
        save(A["out4"], reinterpret_cast<uint8_t*>(bf.data()), 65536 * 4);
    } else if (A["op"] == "cast") {
        const std::string s = A["src"];
        if (s == "half") cast_dst<half>();
        else if (s == "float") cast_dst<float>();
        else if (s == "bfloat16") cast_dst<bfloat16_t>();
        else if (s == "int32") cast_dst<int32_t>();
        else if (s == "int16") cast_dst<int16_t>();
        else if (s == "int8") cast_dst<int8_t>();
        else if (s == "uint8") cast_dst<uint8_t>();
        else if (s == "int64") cast_dst<int64_t>();
    } else if (t == "half") run_typed<half>();
    else if (t == "float") run_typed<float>();
    else if (t == "bfloat16") run_typed<bfloat16_t>();
    else if (t == "int32") run_typed<int32_t>();
    else if (t == "int16") run_typed<int16_t>();
    cannsim::end_block();
    return 0;
}
