// The high-level Matmul API on one cube core (ASCENDC_CUBE_ONLY), tiled by the host's MatmulApiTiling:
// `./matmul_main dtype=half m=.. n=.. k=.. ta=0 tb=1 bias=1 mode=iter out=same a=A.bin b=B.bin bias_file=..
// c=C.bin [fix=baseM,baseN,baseK]` writes C (row-major M x N); tests/test_cube_matmul.py compares it with torch.
// With `rule=NAME` it runs one misuse scenario instead (the EXPECT lines below).
#define ASCENDC_CUBE_ONLY
#include "tiling/tiling_api.h"   // the host half first: the device headers end with dtype macros
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace AscendC;

static std::map<std::string, std::string> g_args;
static int iarg(const char* k, int d = 0) { return g_args.count(k) ? std::atoi(g_args[k].c_str()) : d; }
static std::string sarg(const char* k, const char* d = "") { return g_args.count(k) ? g_args[k] : d; }

template <typename T>
static std::vector<T> load(const std::string& path, size_t n) {
    std::vector<T> v(n);
    if (FILE* f = std::fopen(path.c_str(), "rb")) { size_t got = std::fread(v.data(), sizeof(T), n, f); (void)got; std::fclose(f); }
    return v;
}

// (ge::DataType numbers: the device headers' dtype macros hide the names in this file)
template <typename T> constexpr matmul_tiling::DataType dt_of() {
    if constexpr (std::is_same_v<T, half>) return static_cast<matmul_tiling::DataType>(1);
    else if constexpr (std::is_same_v<T, bfloat16_t>) return static_cast<matmul_tiling::DataType>(27);
    else if constexpr (std::is_same_v<T, float>) return static_cast<matmul_tiling::DataType>(0);
    else if constexpr (std::is_same_v<T, int8_t>) return static_cast<matmul_tiling::DataType>(2);
    else return static_cast<matmul_tiling::DataType>(3);
}

template <typename A, typename C, typename BIAS>
static TCubeTiling host_tiling(int m, int n, int k, bool ta, bool tb, bool bias) {
    matmul_tiling::MatmulApiTiling t;
    t.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt_of<A>(), ta);
    t.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt_of<A>(), tb);
    t.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt_of<C>());
    t.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt_of<BIAS>());
    t.SetShape(m, n, k);
    t.SetOrgShape(m, n, k);
    t.SetBias(bias);
    t.SetBufferSpace(-1, -1, -1);
    if (g_args.count("fix")) {
        int bm = 0, bn = 0, bk = 0;
        std::sscanf(g_args["fix"].c_str(), "%d,%d,%d", &bm, &bn, &bk);
        t.SetFixSplit(bm, bn, bk);
    }
    TCubeTiling out;
    if (t.GetTiling(out) == -1) std::fprintf(stderr, "GetTiling failed\n");
    return out;
}

template <typename A, typename C, typename BIAS>
static void run(int m, int n, int k) {
    const bool ta = iarg("ta"), tb = iarg("tb"), bias = iarg("bias");
    TCubeTiling tiling = host_tiling<A, C, BIAS>(m, n, k, ta, tb, bias);
    std::printf("{\"baseM\":%d,\"baseN\":%d,\"baseK\":%d,\"stepKa\":%d,\"depthA1\":%d,\"dbL0C\":%d}\n", tiling.baseM,
                tiling.baseN, tiling.baseK, tiling.stepKa, tiling.depthA1, tiling.dbL0C);
    std::vector<A> a = load<A>(sarg("a"), size_t(m) * k), b = load<A>(sarg("b"), size_t(k) * n);
    std::vector<BIAS> bv = load<BIAS>(sarg("bias_file"), size_t(n));
    std::vector<C> c(size_t(m) * n);
    GlobalTensor<A> ga, gb; GlobalTensor<BIAS> gbias; GlobalTensor<C> gc;
    ga.SetGlobalBuffer(a.data(), a.size()); gb.SetGlobalBuffer(b.data(), b.size());
    gbias.SetGlobalBuffer(bv.data(), bv.size()); gc.SetGlobalBuffer(c.data(), c.size());
    TPipe pipe;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, A, true>, MatmulType<TPosition::GM, CubeFormat::ND, A, true>,
           MatmulType<TPosition::GM, CubeFormat::ND, C>, MatmulType<TPosition::GM, CubeFormat::ND, BIAS>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    mm.SetTensorA(ga, ta);
    mm.SetTensorB(gb, tb);
    if (bias) mm.SetBias(gbias);
    if (sarg("mode") == "iter") {
        while (mm.Iterate()) mm.GetTensorC(gc);   // each tile lands at its own place in C
    } else {
        mm.IterateAll(gc);
    }
    mm.End();
    if (FILE* f = std::fopen(sarg("c").c_str(), "wb")) { std::fwrite(c.data(), sizeof(C), c.size(), f); std::fclose(f); }
}

// ---- misuse scenarios ----
using HalfMm = Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half>, MatmulType<TPosition::GM, CubeFormat::ND, half>,
                      MatmulType<TPosition::GM, CubeFormat::ND, float>, MatmulType<TPosition::GM, CubeFormat::ND, float>>;

struct Scene {
    std::vector<half> a = std::vector<half>(64 * 64), b = std::vector<half>(64 * 64);
    std::vector<float> c = std::vector<float>(64 * 64);
    GlobalTensor<half> ga, gb; GlobalTensor<float> gc;
    TCubeTiling t = host_tiling<half, float, float>(64, 64, 64, false, false, false);
    Scene() { ga.SetGlobalBuffer(a.data(), a.size()); gb.SetGlobalBuffer(b.data(), b.size()); gc.SetGlobalBuffer(c.data(), c.size()); }
};

// EXPECT get_before_iterate: L2.MATMUL_USAGE
static void get_before_iterate() {
    Scene s; TPipe pipe; HalfMm mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &s.t);
    mm.SetTensorA(s.ga); mm.SetTensorB(s.gb);
    mm.GetTensorC(s.gc);   // no Iterate yet: no tile to take
}
// EXPECT iterate_without_b: L2.MATMUL_USAGE
static void iterate_without_b() {
    Scene s; TPipe pipe; HalfMm mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &s.t);
    mm.SetTensorA(s.ga);
    mm.IterateAll(s.gc);   // B was never set
}
// EXPECT tail_beyond_tiling: L2.MATMUL_SHAPE
static void tail_beyond_tiling() {
    Scene s; TPipe pipe; HalfMm mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &s.t);
    mm.SetTail(128, 64, 64);   // the tiling's singleCoreM is 64
}
// EXPECT base_beyond_l0a: L2.MATMUL_TILING
static void base_beyond_l0a() {
    Scene s; TPipe pipe; HalfMm mm;
    s.t.baseM = 256; s.t.baseK = 128;   // 256 x 128 x 2 B x dbL0A 2 = 128 KB of a 64 KB L0A
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &s.t);
}
// EXPECT int8_to_float: L2.MATMUL_DTYPE
static void int8_to_float() {
    TPipe pipe;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, int8_t>, MatmulType<TPosition::GM, CubeFormat::ND, int8_t>,
           MatmulType<TPosition::GM, CubeFormat::ND, float>, MatmulType<TPosition::GM, CubeFormat::ND, int32_t>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm);   // int8 x int8 gives int32 (or half), not float
}
// EXPECT clean_usage: none
static void clean_usage() {
    Scene s; TPipe pipe; HalfMm mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &s.t);
    mm.SetTensorA(s.ga); mm.SetTensorB(s.gb);
    while (mm.Iterate()) mm.GetTensorC(s.gc);
    mm.End();
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        const auto eq = s.find('=');
        if (eq != std::string::npos) g_args[s.substr(0, eq)] = s.substr(eq + 1);
    }
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", "910B2");
    c.arch = 2201; c.vector_cores = 48; c.ub_bytes = 192 * 1024 - 256; c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::begin_block(0, 1);
    const std::string rule = sarg("rule");
#define S(name) if (rule == #name) name();
    S(get_before_iterate) S(iterate_without_b) S(tail_beyond_tiling) S(base_beyond_l0a) S(int8_to_float) S(clean_usage)
    if (rule.empty()) {
        const std::string dt = sarg("dtype"), out = sarg("out", "same");
        const int m = iarg("m"), n = iarg("n"), k = iarg("k");
        if (dt == "half" && out == "half") run<half, half, float>(m, n, k);
        else if (dt == "half") run<half, float, float>(m, n, k);
        else if (dt == "bf16" && out == "bf16") run<bfloat16_t, bfloat16_t, float>(m, n, k);
        else if (dt == "bf16") run<bfloat16_t, float, float>(m, n, k);
        else if (dt == "float") run<float, float, float>(m, n, k);
        else if (dt == "int8") run<int8_t, int32_t, int32_t>(m, n, k);
    }
    cannsim::end_block();
    std::printf("%s\n", cannsim::cost_counters_json().c_str());
    return cannsim::error_count() ? 1 : 0;
}
