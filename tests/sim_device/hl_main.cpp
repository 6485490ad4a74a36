// Numerical driver for tests/test_sim_sort_hl.py: runs one sort / library API on a UB arena.
// Usage: hl_main op=NAME dtype=float|half arena=IN out=OUT [arch=2201] [key=value ...]
// The arena file is copied into one UB buffer; operands are views at byte offsets given as
// o0, o1, o2, o3 (sources), od, oi (destinations), ot (tmp) with sizes s0.., and the arena is
// written back after the call. Diagnostics go to stderr as JSON lines.
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>
#define CANNSIM_ONE_UNIT 1   // a test driver of both halves' APIs in one file (a candidate is two units)
#include "kernel_operator.h"
#include "tiling/tiling_api.h"

using namespace AscendC;
using namespace AscendC::tiling;   // the library tiling structs
static std::map<std::string, std::string> A;
static bool has(const char* k) { return A.count(k) > 0; }
static long long I(const char* k, long long d = 0) { return has(k) ? std::stoll(A[k], nullptr, 0) : d; }
static double F(const char* k, double d = 0) { return has(k) ? std::stod(A[k]) : d; }

static TPipe* g_pipe;
static TBuf<TPosition::VECCALC>* g_buf;
static uint32_t g_bytes;

// View of the arena at byte offset `key` with `size` elements (default: to the arena's end).
template <typename T> static LocalTensor<T> at(const char* key, const char* size_key = nullptr) {
    const uint32_t off = static_cast<uint32_t>(I(key));
    LocalTensor<T> t = g_buf->Get<uint8_t>()[off].template ReinterpretCast<T>();
    if (size_key && has(size_key)) t.SetSize(static_cast<uint32_t>(I(size_key)));
    return t;
}

// The elementwise library APIs by name; `tmp=1` selects the sharedTmpBuffer form.
template <typename T> static bool run_math(const std::string& op) {
    const uint32_t n = static_cast<uint32_t>(I("n"));
    const bool tmp = I("tmp") != 0;
    auto d = at<T>("od"); auto x = at<T>("o0"); auto y = at<T>("o1");
    LocalTensor<uint8_t> t = at<uint8_t>("ot", "st");
    const T sc = T(F("scalar"));
#define U1(NAME) if (op == #NAME) { if (tmp) NAME(d, x, t, n); else NAME(d, x, n); return true; }
#define B1(NAME) if (op == #NAME) { if (tmp) NAME(d, x, y, t, n); else NAME(d, x, y, n); return true; }
    U1(Tanh) U1(Sin) U1(Cos) U1(Tan) U1(Asin) U1(Acos) U1(Atan) U1(Sinh) U1(Cosh) U1(Asinh) U1(Acosh) U1(Atanh)
    U1(Erf) U1(Erfc) U1(Frac) U1(Sign) U1(Trunc) U1(Floor) U1(Ceil) U1(Round) U1(Lgamma) U1(Digamma) U1(Sigmoid)
    U1(Gelu) U1(FasterGelu) U1(FasterGeluV2)
    B1(Fmod) B1(Power) B1(GeGLU) B1(ReGlu)
#undef U1
#undef B1
    if (op == "SoftMax" || op == "SoftMaxMixed" || op == "SimpleSoftMax" || op == "LogSoftMax") {
        const uint32_t m = static_cast<uint32_t>(I("m")), k = static_cast<uint32_t>(I("k"));
        SoftMaxShapeInfo info{m, k, static_cast<uint32_t>(I("om", m)), static_cast<uint32_t>(I("ok", k))};
        SoftMaxTiling tiling;
        SoftMaxTilingFunc(ge::Shape({(int64_t)m, (int64_t)k}), sizeof(T), 4096, tiling);
        if (I("noinfo")) info = SoftMaxShapeInfo{};
        auto sum = at<T>("o1"); auto mx = at<T>("o2");
        if (op == "SoftMax") {
            if (I("nosummax")) { if (tmp) SoftMax(d, x, t, tiling, info); else SoftMax(d, x, tiling, info); }
            else if (tmp) SoftMax(d, sum, mx, x, t, tiling, info);
            else SoftMax(d, sum, mx, x, tiling, info);
        } else if (op == "SoftMaxMixed") {
            auto fs = at<float>("o1"); auto fm = at<float>("o2");
            SoftMax<T, float>(d, fs, fm, x, t, tiling, info);
        } else if (op == "SimpleSoftMax") {
            if (tmp) SimpleSoftMax(d, sum, mx, x, t, tiling, info); else SimpleSoftMax(d, sum, mx, x, tiling, info);
        } else LogSoftMax(d, sum, mx, x, t, tiling, info);
        return true;
    }
    if (op == "RmsNorm" || op == "LayerNorm") {
        const int64_t b = I("b", 1), s = I("s", 1), h = I("h"), oh = I("oh", h);
        const T eps = T(F("eps", 1e-5));
        auto g = at<T>("o1"); auto be = at<T>("o2"); auto mean = at<T>("oi"); auto var = at<T>("o3");
        if (op == "RmsNorm") {
            RmsNormTiling tiling;
            uint32_t mx = 0, mn = 0;
            GetRmsNormMaxMinTmpSize(ge::Shape({b, s, h}), sizeof(T), mx, mn);
            GetRmsNormTilingInfo(ge::Shape({b, s, h}), ge::Shape({b, s, oh}), mn, sizeof(T), tiling);
            if (tmp) RmsNorm(d, x, g, t, eps, tiling); else RmsNorm(d, x, g, eps, tiling);
        } else {
            LayerNormTiling tiling;
            GetLayerNormNDTilingInfo(ge::Shape({b, s, h}), 8192, sizeof(T), false, tiling);
            tiling.originalHLength = static_cast<uint32_t>(oh);
            if (tmp) LayerNorm(d, mean, var, x, g, be, t, eps, tiling); else LayerNorm(d, mean, var, x, g, be, eps, tiling);
        }
        return true;
    }
    if (op == "AscendQuant") {
        auto q = at<int8_t>("od");
        if (I("perchannel")) AscendQuant(q, x, t, at<T>("o1"), at<T>("o2"), (uint32_t)I("sc"), (uint32_t)I("oc"), n);
        else if (tmp) AscendQuant(q, x, t, (float)F("scale"), (float)F("offset"), n);
        else AscendQuant(q, x, (float)F("scale"), (float)F("offset"), n);
        return true;
    }
    if (op == "AscendDequant") {
        DequantParams p{(uint32_t)I("m", 1), (uint32_t)I("ncols"), (uint32_t)I("cal")};
        AscendDequant<T, float>(d, at<int32_t>("o0"), at<float>("o1"), t, p);
        return true;
    }
    if (op == "AscendAntiQuant") {
        auto src = at<int8_t>("o0", "s0");
        if (I("scalar")) AscendAntiQuant<int8_t, T>(d, src, T(F("offset")), T(F("scale")), t, (uint32_t)I("k"));
        else AscendAntiQuant<int8_t, T>(d, src, at<T>("o1", "s1"), at<T>("o2", "s2"), t, (uint32_t)I("k"));
        return true;
    }
    if (op == "Sum" || op == "Mean") {
        SumParams p{(uint32_t)I("outter", 1), (uint32_t)I("inner"), (uint32_t)I("nvalid")};
        if (op == "Sum") { if (tmp) Sum(d, x, t, p); else Sum(d, x, p); }
        else if (tmp) Mean(d, x, t, p); else Mean(d, x, p);
        return true;
    }
    if (op.rfind("Reduce", 0) == 0 && op != "ReduceXorSum") {
        const uint32_t shape[2] = {(uint32_t)I("d0"), (uint32_t)I("d1")};
        const bool pad = I("pad") != 0, ra = I("ra") != 0;
#define RP(NAME) if (op == #NAME) { if (ra) NAME<T, Pattern::Reduce::RA>(d, x, t, shape, pad); else NAME<T, Pattern::Reduce::AR>(d, x, t, shape, pad); return true; }
        RP(ReduceSum) RP(ReduceMax) RP(ReduceMin) RP(ReduceMean) RP(ReduceProd) RP(ReduceAny) RP(ReduceAll)
#undef RP
    }
    if (op == "TransposeExt") {
        TransposeParamsExt p((uint16_t)I("N"), (uint16_t)I("C"), (uint16_t)I("H"), (uint16_t)I("W"),
                             static_cast<TransposeType>(I("type", 11)));
        Transpose(d, x, t, p);
        return true;
    }
    if (op == "RepeatReduceSum") {
        RepeatReduceSum(d, x, (int32_t)I("repeat"), (int32_t)I("mask"), 1, 1, (int32_t)I("dr", 1), (int32_t)I("sr", 8));
        return true;
    }
    if (op == "SoftmaxGrad" || op == "SoftmaxGradFront") {
        const uint32_t m = static_cast<uint32_t>(I("m")), k = static_cast<uint32_t>(I("k"));
        SoftMaxShapeInfo info{m, k, m, k};
        SoftMaxTiling tiling;
        if (op == "SoftmaxGrad") SoftmaxGrad(d, x, y, t, tiling, I("front") != 0, info);
        else SoftmaxGradFront(d, x, y, t, tiling, info);
        return true;
    }
    if (op == "CumSum") {
        CumSumInfo info{(uint32_t)I("outter"), (uint32_t)I("inner")};
        auto last = at<T>("oi");
        static constexpr CumSumConfig rows{true, false, true, CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
        static constexpr CumSumConfig cols{false, false, true, CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
        if (I("first")) CumSum<T, cols>(d, last, x, t, info); else CumSum<T, rows>(d, last, x, t, info);
        return true;
    }
    if (op == "Normalize") {
        NormalizePara p{(uint32_t)I("a"), (uint32_t)I("r"), (uint32_t)I("rp")};
        Normalize<float, T>(d, at<float>("oi"), at<float>("o1"), at<float>("o2"), x, at<float>("o3"), at<float>("o4"), t,
                            (float)F("eps", 1e-5), p);
        return true;
    }
    if (op == "Log") { Log(d, x, n); return true; }
    if (op == "Log2") { Log2(d, x, n); return true; }
    if (op == "Log10") { Log10(d, x, n); return true; }
    if (op == "ExpHL") { if (tmp) Exp<T, 10>(d, x, t, n); else Exp<T, 10>(d, x, n); return true; }
    if (op == "Silu") { Silu(d, x, n); return true; }
    if (op == "Swish") { Swish(d, x, n, sc); return true; }
    if (op == "SwiGLU") { if (tmp) SwiGLU(d, x, y, static_cast<float>(F("scalar")), t, n); else SwiGLU(d, x, y, static_cast<float>(F("scalar")), n); return true; }
    if (op == "PowerScalar") { if (tmp) Power(d, x, sc, t, n); else Power(d, x, sc, n); return true; }
    if (op == "ScalarPower") { if (tmp) Power(d, sc, x, t, n); else Power(d, sc, x, n); return true; }
    if (op == "ClampMax") { if (tmp) ClampMax(d, x, t, sc, n); else ClampMax(d, x, sc, n); return true; }
    if (op == "ClampMin") { if (tmp) ClampMin(d, x, t, sc, n); else ClampMin(d, x, sc, n); return true; }
    return false;
}

template <typename T> static void run_int() {
    const std::string op = A["op"];
    const uint32_t n = static_cast<uint32_t>(I("n"));
    if (op == "Xor") { Xor(at<T>("od"), at<T>("o0"), at<T>("o1"), n); return; }
    if (op == "Transpose16") { Transpose(at<T>("od"), at<T>("o0")); return; }
    if (op == "ReduceXorSum") { auto d = at<T>("od"); ReduceXorSum(d, at<T>("o0"), at<T>("o1"), n); return; }
    std::fprintf(stderr, "unknown op %s\n", op.c_str());
    std::exit(3);
}

template <typename T> static void run_sort() {
    if (run_math<T>(A["op"])) return;
    const std::string op = A["op"];
    const int rep = static_cast<int>(I("repeat", 1));
    if (op == "sort32") Sort32(at<T>("od"), at<T>("o0"), at<uint32_t>("o1"), rep);
    else if (op == "sort") {
        LocalTensor<T> tmp = at<T>("ot", "st");
        if (I("full")) Sort<T, true>(at<T>("od"), at<T>("o0"), at<uint32_t>("o1"), tmp, rep);
        else Sort<T, false>(at<T>("od"), at<T>("o0"), at<uint32_t>("o1"), tmp, rep);
    } else if (op == "concat") {
        LocalTensor<T> d = at<T>("od");
        Concat(d, at<T>("o0"), at<T>("ot"), rep);
    } else if (op == "extract") Extract(at<T>("od"), at<uint32_t>("oi"), at<T>("o0"), rep);
    else if (op == "mrgsort4") {
        MrgSort4Info p;
        for (int i = 0; i < 4; ++i) p.elementLengths[i] = static_cast<uint16_t>(I(("l" + std::to_string(i)).c_str()));
        p.validBit = static_cast<uint16_t>(I("valid", 15));
        p.ifExhaustedSuspension = I("exhaust") != 0;
        p.repeatTimes = static_cast<uint16_t>(rep);
        MrgSort(at<T>("od"), MrgSortSrcList<T>(at<T>("o0"), at<T>("o1"), at<T>("o2"), at<T>("o3")), p);
        uint16_t r[4];
        GetMrgSortResult(r[0], r[1], r[2], r[3]);
        std::printf("consumed %u %u %u %u\n", r[0], r[1], r[2], r[3]);
    } else if (op == "mrgsort") {
        uint16_t lens[4];
        for (int i = 0; i < 4; ++i) lens[i] = static_cast<uint16_t>(I(("l" + std::to_string(i)).c_str()));
        uint32_t sorted[4] = {0, 0, 0, 0};
        MrgSortSrcList<T> l(at<T>("o0"), at<T>("o1"), at<T>("o2"), at<T>("o3"));
        if (I("exhaust")) MrgSort<T, true>(at<T>("od"), l, lens, sorted, static_cast<uint16_t>(I("valid", 15)), rep);
        else MrgSort<T, false>(at<T>("od"), l, lens, sorted, static_cast<uint16_t>(I("valid", 15)), rep);
        std::printf("consumed %u %u %u %u\n", sorted[0], sorted[1], sorted[2], sorted[3]);
    } else if (op == "topk") {
        TopKInfo info;
        info.outter = static_cast<int32_t>(I("outter", 1));
        info.inner = static_cast<int32_t>(I("inner", 32));
        info.n = static_cast<int32_t>(I("nvalid", info.inner));
        const int32_t k = static_cast<int32_t>(I("k", 1));
        const bool largest = I("largest", 1) != 0;
        const bool small = I("small") != 0;
        const bool init = I("init") != 0, fin = I("finish") != 0;
        fe::PlatFormInfos pi;
        platform_ascendc::PlatformAscendC plat(&pi);
        TopkTiling tiling;
        const int32_t tiling_inner = static_cast<int32_t>(I("tiling_inner", info.inner));
        TopKTilingFunc(plat, tiling_inner, info.outter, k, sizeof(T), init,
                       small ? TopKMode::TOPK_NSMALL : TopKMode::TOPK_NORMAL, largest, tiling);
        uint32_t mx = 0, mn = 0;
        GetTopKMaxMinTmpSize(plat, info.inner, info.outter, false, init, small ? TopKMode::TOPK_NSMALL : TopKMode::TOPK_NORMAL,
                             largest, sizeof(T), mx, mn);
        std::printf("tmp %u %u\n", mn, mx);
        LocalTensor<uint8_t> tmp = at<uint8_t>("ot", "st");
        if (!has("st")) tmp.SetSize(mn);
        auto dv = at<T>("od"); auto di = at<int32_t>("oi"); auto s = at<T>("o0"); auto si = at<int32_t>("o1");
        auto f = at<bool>("o2");
#define TOPK_CALL(INIT, FIN, MODE) TopK<T, INIT, FIN, false, MODE>(dv, di, s, si, f, tmp, k, tiling, info, largest)
        if (small) { if (init) TOPK_CALL(true, false, TopKMode::TOPK_NSMALL); else TOPK_CALL(false, false, TopKMode::TOPK_NSMALL); }
        else if (init && fin) TOPK_CALL(true, true, TopKMode::TOPK_NORMAL);
        else if (init) TOPK_CALL(true, false, TopKMode::TOPK_NORMAL);
        else if (fin) TOPK_CALL(false, true, TopKMode::TOPK_NORMAL);
        else TOPK_CALL(false, false, TopKMode::TOPK_NORMAL);
#undef TOPK_CALL
    } else {
        std::fprintf(stderr, "unknown op %s\n", op.c_str());
        std::exit(3);
    }
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const auto eq = a.find('=');
        A[a.substr(0, eq)] = a.substr(eq + 1);
    }
    cannsim::ChipConfig c{};
    const int arch = static_cast<int>(I("arch", 2201));
    std::snprintf(c.name, sizeof c.name, "%s", arch == 3510 ? "950PR" : arch == 2002 ? "310P" : "910B2");
    c.arch = arch; c.vector_cores = 48; c.ub_bytes = 192 * 1024 - 256 - 8 * 1024; c.max_buffers = 64;
    c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::set_diag_fd(2);
    if (has("cost")) cannsim::cost::configure("clock_ghz=1.8 vector_issue_cycles=12");
    cannsim::begin_block(0, 1);
    std::ifstream fin(A["arena"], std::ios::binary);
    std::vector<uint8_t> host((std::istreambuf_iterator<char>(fin)), {});
    g_bytes = static_cast<uint32_t>((host.size() + 31) / 32 * 32);
    host.resize(g_bytes);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, g_bytes);
    g_pipe = &pipe; g_buf = &buf;
    std::memcpy(cannsim::ub_at(buf.Get<uint8_t>().addr_), host.data(), g_bytes);
    const std::string t = A["dtype"];
    if (t == "half") run_sort<half>();
    else if (t == "float") run_sort<float>();
    else if (t == "int32") run_sort<int32_t>();
    else if (t == "int16") run_int<int16_t>();
    else if (t == "uint16") run_int<uint16_t>();
    std::memcpy(host.data(), cannsim::ub_at(buf.Get<uint8_t>().addr_), g_bytes);
    std::ofstream fo(A["out"], std::ios::binary);
    fo.write(reinterpret_cast<const char*>(host.data()), static_cast<std::streamsize>(g_bytes));
    cannsim::end_block();
    std::printf("%s\n", cannsim::cost_counters_json().c_str());
    return 0;
}
