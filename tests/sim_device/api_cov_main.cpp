// Numerical driver for tests/test_sim_api_cov.py: runs one of the compound-cast, Copy, PairReduceSum,
// system, layout and normalization APIs on a UB arena.
// Usage: api_cov_main op=NAME [dt=T] [st=U] arena=IN out=OUT [arch=2201] [key=value ...]
// The arena file is copied into one UB buffer; operands are views at byte offsets o0, o1, ... (sources),
// od, oi, ... (destinations), ot (tmp, `st` bytes); the arena is written back after the call.
// Scalar results go to stdout as `key=value`; diagnostics to stderr as JSON lines.
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>
#include "kernel_operator.h"

using namespace AscendC;
using namespace AscendC::tiling;
static std::map<std::string, std::string> A;
static bool has(const char* k) { return A.count(k) > 0; }
static long long I(const char* k, long long d = 0) { return has(k) ? std::stoll(A[k], nullptr, 0) : d; }
static double F(const char* k, double d = 0) { return has(k) ? std::stod(A[k]) : d; }
static TBuf<TPosition::VECCALC>* g_buf;

template <typename T> static LocalTensor<T> at(const char* key, const char* size_key = nullptr) {
    LocalTensor<T> t = g_buf->Get<uint8_t>()[static_cast<uint32_t>(I(key))].template ReinterpretCast<T>();
    if (size_key && has(size_key)) t.SetSize(static_cast<uint32_t>(I(size_key)));
    return t;
}
static BinaryRepeatParams brp() {
    return BinaryRepeatParams(1, 1, 1, (uint8_t)I("drep", 8), (uint8_t)I("srep", 8), (uint8_t)I("srep", 8));
}

// ---- compound casts: dst type T, source type U ----
template <typename T, typename U> static void fused(const std::string& op) {
    auto d = at<T>("od"); auto a = at<U>("o0"); auto b = at<U>("o1");
    const std::string form = has("form") ? A["form"] : "count";
    uint64_t bits[2] = {(uint64_t)I("m0", -1), (uint64_t)I("m1", -1)};
    const uint64_t mask = (uint64_t)I("mask", 0);
    const uint8_t rep = (uint8_t)I("repeat", 1);
    const uint32_t n = (uint32_t)I("n");
#define FC(NAME)                                                                          \
    if (op == #NAME) {                                                                    \
        if (form == "count") NAME(d, a, b, n);                                            \
        else if (form == "bit") NAME(d, a, b, bits, rep, brp());                          \
        else NAME(d, a, b, mask, rep, brp());                                             \
        return;                                                                           \
    }
    FC(AddReluCast) FC(SubReluCast) FC(MulCast)
#undef FC
    std::fprintf(stderr, "unknown fused op %s\n", op.c_str());
    std::exit(3);
}

template <typename T> static void same_type(const std::string& op) {
    const std::string form = has("form") ? A["form"] : "count";
    uint64_t bits[2] = {(uint64_t)I("m0", -1), (uint64_t)I("m1", -1)};
    const uint64_t mask = (uint64_t)I("mask", 0);
    const uint8_t rep = (uint8_t)I("repeat", 1);
    if (op == "MulAddRelu") {
        auto d = at<T>("od"); auto a = at<T>("o0"); auto b = at<T>("o1");
        if (form == "count") MulAddRelu(d, a, b, (int32_t)I("n"));
        else if (form == "bit") MulAddRelu(d, a, b, bits, rep, brp());
        else MulAddRelu(d, a, b, mask, rep, brp());
    } else if (op == "Copy") {
        CopyRepeatParams p((uint16_t)I("dblk", 1), (uint16_t)I("sblk", 1), (uint16_t)I("drep", 8), (uint16_t)I("srep", 8));
        if (I("counter")) { SetMaskCount(); SetVectorMask<T, MaskMode::COUNTER>(0, mask); }
        if (form == "count") Copy(at<T>("od"), at<T>("o0"), (uint32_t)I("n"));
        else if (form == "bit") Copy(at<T>("od"), at<T>("o0"), bits, rep, p);
        else if (I("counter")) Copy<T, false>(at<T>("od"), at<T>("o0"), mask, rep, p);
        else Copy(at<T>("od"), at<T>("o0"), mask, rep, p);
        SetMaskNorm();
    } else if (op == "CompareRegister") {   // Compare into the register, then GetCmpMask to od
        const CMPMODE mode = static_cast<CMPMODE>(I("cmp"));
        if (form == "bit") Compare(at<T>("o0"), at<T>("o1"), mode, bits, BinaryRepeatParams());
        else Compare(at<T>("o0"), at<T>("o1"), mode, mask, BinaryRepeatParams());
        GetCmpMask(at<uint8_t>("od", "sd"));
    } else if (op == "SelectRegister") {    // SetCmpMask from oi, lanes from SetVectorMask, Select into od
        SetCmpMask(at<uint8_t>("oi"));
        SetVectorMask<T>((uint64_t)I("m1", 0), (uint64_t)I("m0", -1));
        Select<T, SELMODE::VSEL_CMPMASK_SPR>(at<T>("od"), at<T>("o0"), at<T>("o1"), rep, brp());
        ResetMask();
    } else if (op == "ReduceSumSpr") {
        if constexpr (!std::is_integral_v<T>) {
            ReduceSum(at<T>("od"), at<T>("o0"), at<T>("ot"), (int32_t)I("n"));
            std::printf("spr=%.9g\n", (double)(float)GetReduceRepeatSumSpr<T>());
        }
    } else if (op == "PairReduceSum") {
        if (form == "bit") PairReduceSum(at<T>("od"), at<T>("o0"), (int32_t)rep, bits, (int32_t)I("drep", 1), 1, (int32_t)I("srep", 8));
        else PairReduceSum(at<T>("od"), at<T>("o0"), (int32_t)rep, (int32_t)mask, (int32_t)I("drep", 1), 1, (int32_t)I("srep", 8));
    } else {
        std::fprintf(stderr, "unknown op %s\n", op.c_str());
        std::exit(3);
    }
}


// ---- layout and normalization libraries (tiling fields from the arguments, as the host helpers set them) ----
template <typename T> static bool library(const std::string& op) {
    const bool tmp = has("st");
    LocalTensor<uint8_t> t = at<uint8_t>("ot", "st");
    if (op == "Pad") {
        tiling::PadTiling pt; pt.srcHeight = (uint32_t)I("h"); pt.srcWidth = (uint32_t)I("w"); pt.srcOriWidth = (uint32_t)I("ow", I("w"));
        PadParams pp{(uint16_t)I("left"), (uint16_t)I("right"), (int32_t)I("value")};
        if (tmp) Pad(at<T>("od"), at<T>("o0"), pp, t, pt); else Pad(at<T>("od"), at<T>("o0"), pp, pt);
    } else if (op == "UnPad") {
        tiling::UnPadTiling ut; ut.srcHeight = (uint32_t)I("h"); ut.srcWidth = (uint32_t)I("w");
        UnPadParams up{0, (uint16_t)I("right")};
        if (tmp) UnPad(at<T>("od"), at<T>("o0"), up, t, ut); else UnPad(at<T>("od"), at<T>("o0"), up, ut);
    } else if (op == "Broadcast") {
        const uint32_t dsh[2] = {(uint32_t)I("d0"), (uint32_t)I("d1")}, ssh[2] = {(uint32_t)I("s0"), (uint32_t)I("s1")};
        const long long dim = I("dim", 2), axis = I("axis", 1);
        if (dim == 1) { if (tmp) Broadcast<T, 1, 0>(at<T>("od"), at<T>("o0"), dsh, ssh, t); else Broadcast<T, 1, 0>(at<T>("od"), at<T>("o0"), dsh, ssh); }
        else if (axis == 0) { if (tmp) Broadcast<T, 2, 0>(at<T>("od"), at<T>("o0"), dsh, ssh, t); else Broadcast<T, 2, 0>(at<T>("od"), at<T>("o0"), dsh, ssh); }
        else if (tmp) Broadcast<T, 2, 1>(at<T>("od"), at<T>("o0"), dsh, ssh, t);
        else Broadcast<T, 2, 1>(at<T>("od"), at<T>("o0"), dsh, ssh);
    } else if (op == "BroadcastRank") {
        const uint32_t rank = (uint32_t)I("rank");
        uint32_t dsh[9], ssh[9];
        for (uint32_t i = 0; i < rank; ++i) {
            dsh[i] = (uint32_t)I(("d" + std::to_string(i)).c_str());
            ssh[i] = (uint32_t)I(("s" + std::to_string(i)).c_str());
        }
        BroadcastTiling bt;
        GetBroadcastTilingInfo<T>(rank, dsh, ssh, false, bt);
        Broadcast<T>(at<T>("od"), at<T>("o0"), dsh, ssh, &bt);
    } else if (op == "BatchNorm") {
        tiling::BatchNormTiling bt; bt.bLength = (uint32_t)I("b"); bt.sLength = (uint32_t)I("s"); bt.hLength = (uint32_t)I("h");
        bt.originalBLength = (uint32_t)I("ob", I("b"));
        const T eps = T((float)F("eps", 1e-5));
        if (tmp) BatchNorm(at<T>("od"), at<T>("oi"), at<T>("o3"), at<T>("o0"), at<T>("o1"), at<T>("o2"), t, eps, bt);
        else BatchNorm(at<T>("od"), at<T>("oi"), at<T>("o3"), at<T>("o0"), at<T>("o1"), at<T>("o2"), eps, bt);
    } else if (op == "DeepNorm") {
        tiling::DeepNormTiling dt; dt.bLength = (uint32_t)I("b"); dt.sLength = (uint32_t)I("s"); dt.hLength = (uint32_t)I("h");
        dt.originalHLength = (uint32_t)I("oh", I("h"));
        const T eps = T((float)F("eps", 1e-5)), alpha = T((float)F("alpha", 1.0));
        if (tmp) DeepNorm(at<T>("od"), at<T>("oi"), at<T>("o5"), at<T>("o0"), at<T>("o1"), at<T>("o2"), at<T>("o3"), t, alpha, eps, dt);
        else DeepNorm(at<T>("od"), at<T>("oi"), at<T>("o5"), at<T>("o0"), at<T>("o1"), at<T>("o2"), at<T>("o3"), alpha, eps, dt);
    } else if (op == "GroupNorm") {
        tiling::GroupNormTiling gt; gt.n = (uint32_t)I("n"); gt.c = (uint32_t)I("c"); gt.hw = (uint32_t)I("hw"); gt.g = (uint32_t)I("g");
        const T eps = T((float)F("eps", 1e-5));
        if (tmp) GroupNorm(at<T>("od"), at<T>("oi"), at<T>("o3"), at<T>("o0"), at<T>("o1"), at<T>("o2"), t, eps, gt);
        else GroupNorm(at<T>("od"), at<T>("oi"), at<T>("o3"), at<T>("o0"), at<T>("o1"), at<T>("o2"), eps, gt);
    } else if (op == "LayerNormGrad") {
        tiling::LayerNormGradTiling lt; lt.bLength = (uint32_t)I("b"); lt.sLength = (uint32_t)I("s"); lt.hLength = (uint32_t)I("h");
        lt.originalHLength = lt.hLength;
        const T eps = T((float)F("eps", 1e-5));
        if (tmp) LayerNormGrad(at<T>("od"), at<T>("oi"), at<T>("o0"), at<T>("o1"), at<T>("o2"), at<T>("o3"), at<T>("o4"), t, eps, lt);
        else LayerNormGrad(at<T>("od"), at<T>("oi"), at<T>("o0"), at<T>("o1"), at<T>("o2"), at<T>("o3"), at<T>("o4"), eps, lt);
    } else if (op == "LayerNormGradBeta") {
        tiling::LayerNormGradBetaTiling lt; lt.bLength = (uint32_t)I("b"); lt.sLength = (uint32_t)I("s"); lt.hLength = (uint32_t)I("h");
        if (tmp) LayerNormGradBeta(at<T>("od"), at<T>("oi"), at<T>("o0"), at<T>("o1"), t, lt);
        else LayerNormGradBeta(at<T>("od"), at<T>("oi"), at<T>("o0"), at<T>("o1"), lt);
    } else if (op == "WelfordUpdate") {
        WelfordUpdateParam p{1, (uint32_t)I("ab"), (uint32_t)I("abc", I("ab")), (float)F("nrec", 1.0)};
        static constexpr WelfordUpdateConfig inplace = {true};
        if (I("inplace")) WelfordUpdate<T, float, false, inplace>(at<float>("od"), at<float>("oi"), at<float>("o1"), at<float>("o2"), at<T>("o0"), p);
        else if (tmp) WelfordUpdate<T, float>(at<float>("od"), at<float>("oi"), at<float>("o1"), at<float>("o2"), at<T>("o0"), t, p);
        else WelfordUpdate<T, float>(at<float>("od"), at<float>("oi"), at<float>("o1"), at<float>("o2"), at<T>("o0"), p);
    } else if (op == "WelfordFinalize") {
        WelfordFinalizePara p;
        p.rnLength = (uint32_t)I("rn"); p.abLength = (uint32_t)I("ab"); p.headCount = (uint32_t)I("hc");
        p.headCountLength = (uint32_t)I("hcl"); p.tailCount = (uint32_t)I("tc"); p.tailCountLength = (uint32_t)I("tcl");
        p.abRec = (float)F("abrec"); p.rRec = (float)F("rrec"); p.rRecWithCorrection = (float)F("rrecc");
        if (I("counts") && tmp) WelfordFinalize(at<float>("od"), at<float>("oi"), at<float>("o0"), at<float>("o1"), at<int32_t>("o2"), t, p);
        else if (I("counts")) WelfordFinalize(at<float>("od"), at<float>("oi"), at<float>("o0"), at<float>("o1"), at<int32_t>("o2"), p);
        else if (tmp) WelfordFinalize(at<float>("od"), at<float>("oi"), at<float>("o0"), at<float>("o1"), t, p);
        else WelfordFinalize(at<float>("od"), at<float>("oi"), at<float>("o0"), at<float>("o1"), p);
    } else if constexpr (std::is_integral_v<T>) {
        return false;   // the softmax and dropout libraries take floating types only
    } else if (op == "SoftmaxFlashV2" || op == "SoftmaxFlashV2Mixed") {
        const uint32_t m = (uint32_t)I("m"), k = (uint32_t)I("k");
        SoftMaxShapeInfo info{m, k, m, (uint32_t)I("ok", k)};
        const tiling::SoftMaxTiling tl = SoftMaxFlashV2TilingFunc(info, sizeof(T), op == "SoftmaxFlashV2" ? sizeof(T) : 4, 0,
                                                                  I("update") != 0);
        const SoftMaxShapeInfo none{};
        if (op == "SoftmaxFlashV2Mixed") {
            auto d = at<half>("od"); auto x = at<half>("o0"); auto em = at<half>("o3");
            auto su = at<float>("oi"); auto mx = at<float>("o4"); auto is = at<float>("o1"); auto im = at<float>("o2");
            if (I("update")) SoftmaxFlashV2<half, true>(d, su, mx, x, em, is, im, tl, none);
            else SoftmaxFlashV2<half, false>(d, su, mx, x, em, is, im, tl, none);
        } else {
            auto d = at<T>("od"); auto x = at<T>("o0"); auto em = at<T>("o3");
            auto su = at<T>("oi"); auto mx = at<T>("o4"); auto is = at<T>("o1"); auto im = at<T>("o2"); auto rm = at<T>("o5");
            const bool red = has("o5");
            if (I("update")) {
                if (red && tmp) SoftmaxFlashV2<T, true>(d, rm, su, mx, x, em, is, im, t, tl, info);
                else if (red) SoftmaxFlashV2<T, true>(d, rm, su, mx, x, em, is, im, tl, info);
                else if (tmp) SoftmaxFlashV2<T, true>(d, su, mx, x, em, is, im, t, tl, info);
                else SoftmaxFlashV2<T, true>(d, su, mx, x, em, is, im, tl, info);
            } else if (tmp) SoftmaxFlashV2<T, false>(d, su, mx, x, em, is, im, t, tl, info);
            else SoftmaxFlashV2<T, false>(d, su, mx, x, em, is, im, tl, info);
        }
    } else if (op == "SoftmaxFlash") {
        const uint32_t m = (uint32_t)I("m"), k = (uint32_t)I("k");
        SoftMaxShapeInfo info{m, k, m, k};
        tiling::SoftMaxTiling tl;
        auto d = at<T>("od"); auto x = at<T>("o0"); auto em = at<T>("o3");
        auto su = at<T>("oi"); auto mx = at<T>("o4"); auto is = at<T>("o1"); auto im = at<T>("o2");
        if (tmp) SoftmaxFlash(d, su, mx, x, em, is, im, t, tl, I("update") != 0, info);
        else SoftmaxFlash(d, su, mx, x, em, is, im, tl, I("update") != 0, info);
    } else if (op == "AdjustSoftMaxRes") {
        SoftMaxShapeInfo info{(uint32_t)I("m"), (uint32_t)I("k"), (uint32_t)I("m"), (uint32_t)I("k")};
        bool r;
        if (I("step")) r = AdjustSoftMaxRes<T, float, false, 1>(at<T>("od"), at<float>("o0"), (uint32_t)I("from"), T((float)F("to")), info);
        else r = AdjustSoftMaxRes<T, float>(at<T>("od"), at<float>("o0"), (uint32_t)I("from"), T((float)F("to")), info);
        std::printf("adjusted=%d\n", (int)r);
    } else if (op == "DropOut") {
        DropOutShapeInfo info;
        info.firstAxis = (uint32_t)I("h"); info.srcLastAxis = (uint32_t)I("w"); info.maskLastAxis = (uint32_t)I("mw");
        const float kp = (float)F("keep", 0.5);
        auto d = at<T>("od"); auto x = at<T>("o0"); auto mk = at<uint8_t>("o1");
        if (I("mode") == 3) DropOut<T, false, 3>(d, x, mk, kp, info);
        else if (I("mode") == 1) DropOut<T, false, 1>(d, x, mk, kp, info);
        else if (tmp) DropOut(d, x, mk, t, kp, info);
        else DropOut(d, x, mk, kp, info);
    } else {
        return false;
    }
    return true;
}

// Fill writes GM before any UB buffer exists: a host array of `n` elements stands for GM.
template <typename T> static void fill_gm() {
    std::vector<T> gm((size_t)I("n"), T(0));
    GlobalTensor<T> g;
    g.SetGlobalBuffer(gm.data(), (uint64_t)I("n"));
    Fill(g, (uint64_t)I("size"), T((float)F("value")));
    for (const T& v : gm) std::printf("%g ", (double)(float)v);
    std::printf("\n");
}

static void system_queries() {
    std::printf("block=%d\n", (int)GetDataBlockSizeInBytes());
    std::printf("icache=%lld\n", (long long)GetICachePreloadStatus());
    std::printf("pc=%lld\n", (long long)GetProgramCounter());
    SetMaskCount();
    SetVectorMask<float, MaskMode::COUNTER>(0, 5);
    SetAtomicAdd<float>();
    SetDeqScale(half(2.0f));
    InitSocState();
    const auto& s = cannsim::detail::state();
    std::printf("counter=%d lo=%llu atomic=%d deq=%g\n", (int)s.mask_counter_mode, (unsigned long long)s.mask_lo,
                s.atomic_op, s.deq_scale);
}

static void dispatch() {
    const std::string op = A["op"], dt = A["dt"], st = has("st") ? A["st"] : dt;
    if (op == "system") { system_queries(); return; }
    if (op == "Fill") return;   // run before InitBuffer in main
    if (op == "AddReluCast" || op == "SubReluCast" || op == "MulCast") {
        if (dt == "int8" && st == "half") return fused<int8_t, half>(op);
        if (dt == "uint8" && st == "half") return fused<uint8_t, half>(op);
        if (dt == "half" && st == "float") return fused<half, float>(op);
        if (dt == "int8" && st == "int16") return fused<int8_t, int16_t>(op);
        if (dt == "float" && st == "int64") return fused<float, int64_t>(op);
        if (dt == "half" && st == "half") return fused<half, half>(op);
    }
    if (op == "AddDeqRelu") {
        SetDeqScale(half((float)F("deq", 1.0)));
        auto d = at<half>("od"); auto a = at<int32_t>("o0"); auto b = at<int32_t>("o1");
        if (has("mask")) AddDeqRelu(d, a, b, (uint64_t)I("mask"), (uint8_t)I("repeat", 1), brp());
        else AddDeqRelu(d, a, b, (int32_t)I("n"));
        return;
    }
    if (dt == "half" && library<half>(op)) return;
    if (dt == "float" && library<float>(op)) return;
    if (dt == "int16" && library<int16_t>(op)) return;
    if (dt == "int32" && library<int32_t>(op)) return;
    if (dt == "uint8" && library<uint8_t>(op)) return;
    if (dt == "int8" && library<int8_t>(op)) return;
    if (dt == "half") return same_type<half>(op);
    if (dt == "float") return same_type<float>(op);
    if (dt == "int16") return same_type<int16_t>(op);
    if (dt == "int32") return same_type<int32_t>(op);
    std::fprintf(stderr, "unknown op/dtype %s %s %s\n", op.c_str(), dt.c_str(), st.c_str());
    std::exit(3);
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
    cannsim::begin_block(0, 1);
    if (A["op"] == "Fill") {
        if (A["dt"] == "float") fill_gm<float>(); else if (A["dt"] == "int32") fill_gm<int32_t>(); else fill_gm<half>();
        if (I("after_init")) {
            TPipe p2; TBuf<TPosition::VECCALC> b2; p2.InitBuffer(b2, 1024);
            if (A["dt"] == "float") fill_gm<float>(); else fill_gm<half>();
        }
    }
    std::ifstream fin(A["arena"], std::ios::binary);
    std::vector<uint8_t> host((std::istreambuf_iterator<char>(fin)), {});
    const uint32_t bytes = static_cast<uint32_t>((host.size() + 31) / 32 * 32);
    host.resize(bytes);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, bytes);
    g_buf = &buf;
    std::memcpy(cannsim::ub_at(buf.Get<uint8_t>().addr_), host.data(), bytes);
    dispatch();
    std::memcpy(host.data(), cannsim::ub_at(buf.Get<uint8_t>().addr_), bytes);
    std::ofstream fo(A["out"], std::ios::binary);
    fo.write(reinterpret_cast<const char*>(host.data()), static_cast<std::streamsize>(bytes));
    cannsim::end_block();
    std::printf("%s\n", cannsim::cost_counters_json().c_str());
    return 0;
}
