// Cube API semantics on numpy data (tests/test_cube.py): one call chain per `op`.
//   op=matmul dtype=half|bf16|float|int8 m= n= k= [bt=1: B given as (n x k)] [acc=1: a second Mmad
//   accumulates A x B again] [relu=1] [out=half|bf16|same] [layout=nd|nz] a=FILE b=FILE c=FILE
// GM A (m x k, ND) and B (k x n, ND, or n x k with bt=1) go to L1 with DataCopy ND2NZ, to L0A/L0B
// with LoadData (2-D), through Mmad into L0C and out with Fixpipe; c gets the result.
#include "kernel_operator.h"
#include <fcntl.h>
#include <string>
#include <map>
#include <vector>

using namespace AscendC;
static std::map<std::string, std::string> g_args;
static int iarg(const char* k, int d = 0) { auto it = g_args.find(k); return it == g_args.end() ? d : std::atoi(it->second.c_str()); }
static std::string sarg(const char* k, const char* d = "") { auto it = g_args.find(k); return it == g_args.end() ? d : it->second; }

template <typename T> static std::vector<T> load(const std::string& path, size_t n) {
    std::vector<T> v(n);
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f || std::fread(v.data(), sizeof(T), n, f) != n) { std::fprintf(stderr, "cannot read %s\n", path.c_str()); std::exit(3); }
    std::fclose(f);
    return v;
}
template <typename T> static void save(const std::string& path, const std::vector<T>& v) {
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(v.data(), sizeof(T), v.size(), f);
    std::fclose(f);
}

// In (A x B) the operands' element type IN, the L0C type ACC, the output type OUT.
template <typename IN, typename ACC, typename OUT>
static void matmul(int m, int n, int k) {
    constexpr int c0 = 32 / sizeof(IN);
    const bool bt = iarg("bt"), acc = iarg("acc"), relu = iarg("relu");
    // int8 B (k x n) goes through LoadDataWithTranspose in 32 x 32 squares: n padded to 32
    const int nq = sizeof(IN) == 1 && !bt ? 32 : 16;
    const int mp = (m + 15) / 16 * 16, np = (n + nq - 1) / nq * nq, kp = (k + c0 - 1) / c0 * c0;
    const bool nz_out = sarg("layout", "nd") == "nz";
    if (sizeof(IN) == 4 && !bt) { std::fprintf(stderr, "fp32 B must come transposed (bt=1)\n"); std::exit(2); }
    std::vector<IN> a = load<IN>(sarg("a"), size_t(m) * k), b = load<IN>(sarg("b"), size_t(k) * n);
    std::vector<OUT> c(nz_out ? size_t(np) * mp : size_t(m) * n);
    GlobalTensor<IN> ga, gb; GlobalTensor<OUT> gc;
    ga.SetGlobalBuffer(a.data(), a.size()); gb.SetGlobalBuffer(b.data(), b.size()); gc.SetGlobalBuffer(c.data(), c.size());
    TPipe pipe;
    TQue<TPosition::A1, 1> qa1; TQue<TPosition::B1, 1> qb1; TQue<TPosition::A2, 1> qa2; TQue<TPosition::B2, 1> qb2;
    TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa1, 1, mp * kp * sizeof(IN)); pipe.InitBuffer(qb1, 1, kp * np * sizeof(IN));
    pipe.InitBuffer(qa2, 1, mp * kp * sizeof(IN)); pipe.InitBuffer(qb2, 1, kp * np * sizeof(IN));
    pipe.InitBuffer(qc, 1, mp * np * sizeof(ACC));
    LocalTensor<IN> a1 = qa1.AllocTensor<IN>(), b1 = qb1.AllocTensor<IN>();
    // A (m x k) -> Nz with m padded to mp rows
    DataCopy(a1, ga, Nd2NzParams(1, m, k, 0, k, mp, 1, 0));
    // B: (k x n) -> Nz (k rows), or B^T (n x k) -> Nz (n rows)
    if (bt) DataCopy(b1, gb, Nd2NzParams(1, n, k, 0, k, np, 1, 0));
    else DataCopy(b1, gb, Nd2NzParams(1, k, n, 0, n, kp, 1, 0));
    qa1.EnQue(a1); qb1.EnQue(b1);
    a1 = qa1.DeQue<IN>(); b1 = qb1.DeQue<IN>();
    LocalTensor<IN> a2 = qa2.AllocTensor<IN>(), b2 = qb2.AllocTensor<IN>();
    const int mb = mp / 16, kb = kp / c0, nb = np / 16;
    if (cannsim::arch() == 3510) {
        LoadData(a2, a1, LoadData2DParams(0, mb * kb, 1, 0, 0, false, 0));   // L0A is Nz there: one run
    } else {
        for (int i = 0; i < mb; ++i)   // L0A Zz: fractal row i = the i-th fractal of every C0 column
            LoadData(a2[i * kb * 16 * c0], a1, LoadData2DParams(i, kb, mb, 0, 0, false, 0));
    }
    if (bt) {
        // B^T in Nz: fractal (n-block j, k-block l) at l * nb + j; row-major inside = Zn of B
        LoadData(b2, b1, LoadData2DParams(0, kb * nb, 1, 0, 0, false, 0));
    } else if constexpr (sizeof(IN) == 1) {
        // B in Nz, 32-column blocks: per block, its k/32 squares transposed into Zn fractals (kb, 2c), (kb, 2c+1)
        for (int cb = 0; cb < np / 32; ++cb)
            LoadDataWithTranspose(b2[2 * cb * 512], b1, LoadData2dTransposeParams(cb * kb, kb, 1, nb - 1, 0));
    } else {
        // B in Nz: fractal (k-block l, n-block j) at j * kb + l; Zn wants l * nb + j, transposed inside
        for (int l = 0; l < kb; ++l)
            LoadData(b2[l * nb * 16 * c0], b1, LoadData2DParams(l, nb, kb, 0, 0, sizeof(IN) == 2, 0));
    }
    qa1.FreeTensor(a1); qb1.FreeTensor(b1);
    qa2.EnQue(a2); qb2.EnQue(b2);
    a2 = qa2.DeQue<IN>(); b2 = qb2.DeQue<IN>();
    LocalTensor<ACC> co1 = qc.AllocTensor<ACC>();
    MmadParams mp_(m, nq == 32 ? np : n, k);   // B2 rows hold np columns: the cube computes them all
    Mmad(co1, a2, b2, mp_);
    if (acc) { mp_.cmatrixInitVal = false; Mmad(co1, a2, b2, mp_); }
    qa2.FreeTensor(a2); qb2.FreeTensor(b2);
    qc.EnQue(co1);
    co1 = qc.DeQue<ACC>();
    FixpipeParamsV220 fp;
    fp.nSize = n; fp.mSize = m; fp.srcStride = mp; fp.dstStride = n; fp.reluEn = relu;
    if constexpr (std::is_same_v<OUT, half> && std::is_same_v<ACC, float>) fp.quantPre = QuantMode_t::F322F16;
    if constexpr (std::is_same_v<OUT, bfloat16_t> && std::is_same_v<ACC, float>) fp.quantPre = QuantMode_t::F322BF16;
    if constexpr (std::is_same_v<OUT, half> && std::is_same_v<ACC, int32_t>) {
        fp.quantPre = QuantMode_t::DEQF16;
        float sc = std::atof(sarg("scale", "1").c_str()); uint32_t bits; std::memcpy(&bits, &sc, 4);
        fp.deqScalar = bits;
    }
    if (nz_out) {
        fp.nSize = np; fp.dstStride = mp * 16 * sizeof(OUT) / 32;
        Fixpipe<OUT, ACC, CFG_NZ>(gc, co1, fp);
    } else {
        Fixpipe(gc, co1, fp);
    }
    qc.FreeTensor(co1);
    save(sarg("c"), c);
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        const auto eq = s.find('=');
        if (eq != std::string::npos) g_args[s.substr(0, eq)] = s.substr(eq + 1);
    }
    const int arch = iarg("arch", 2201);
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", arch == 3510 ? "950PR" : "910B2");
    c.arch = arch; c.vector_cores = 48; c.ub_bytes = 192 * 1024 - 256; c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    if (g_args.count("cost")) cannsim::cost::configure(g_args["cost"].c_str());   // the timeline, as the harness sets it
    cannsim::begin_block(0, 1);
    const std::string dt = sarg("dtype"), out = sarg("out", "same");
    const int m = iarg("m"), n = iarg("n"), k = iarg("k");
    if (dt == "half" && out == "half") matmul<half, float, half>(m, n, k);
    else if (dt == "half") matmul<half, float, float>(m, n, k);
    else if (dt == "bf16" && out == "bf16") matmul<bfloat16_t, float, bfloat16_t>(m, n, k);
    else if (dt == "bf16") matmul<bfloat16_t, float, float>(m, n, k);
    else if (dt == "float") matmul<float, float, float>(m, n, k);
    else if (dt == "int8" && out == "half") matmul<int8_t, int32_t, half>(m, n, k);
    else if (dt == "int8") matmul<int8_t, int32_t, int32_t>(m, n, k);
    cannsim::end_block();
    if (g_args.count("cost")) std::printf("%s", cannsim::cost::block_json(0).c_str());
    std::printf("%s\n", cannsim::cost_counters_json().c_str());
    return cannsim::error_count() ? 1 : 0;
}
