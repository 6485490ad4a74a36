// LoadData's 3-D form (img2col into L0A) on numpy data (tests/test_cube_img2col.py).
//   op=img2col dtype=half|bf16|float|int8 c= h= w= fh= fw= [sh= sw= dh= dw= pl= pr= pt= pb=] [kstart= kext=
//     mstart= mext=] [padv=] x=FILE out=FILE: the feature map x (h*w rows x c channels, NHWC) goes to L1
//     with DataCopy ND2NZ (= C1 x h x w x C0), LoadData3DParamsV2 builds the window in L0A, `out` gets L0A's
//     bytes (Zz fractals, or Nz on arch=3510).
//   op=conv ... n= wt=FILE y=FILE: the same L0A matrix times the weights (n x K, K in (c1, kh, kw, c0) order,
//     given n x k) through LoadData 2-D, Mmad into L0C, Fixpipe: y gets the M x n fp32 result.
//   op=rule name=SCENARIO: one breaking call per rule id (the EXPECT lines below); diagnostics on stderr.
#include "kernel_operator.h"
#include <map>
#include <string>
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
template <typename T> static void save(const std::string& path, const T* p, size_t n) {
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(p, sizeof(T), n, f);
    std::fclose(f);
}

template <typename T>
static void run(bool conv) {
    constexpr int c0 = 32 / sizeof(T);
    const int c = iarg("c"), h = iarg("h"), w = iarg("w"), fh = iarg("fh"), fw = iarg("fw");
    const int sh = iarg("sh", 1), sw = iarg("sw", 1), dh = iarg("dh", 1), dw = iarg("dw", 1);
    uint8_t pads[4] = {uint8_t(iarg("pl")), uint8_t(iarg("pr")), uint8_t(iarg("pt")), uint8_t(iarg("pb"))};
    const int ho = (h + pads[2] + pads[3] - dh * (fh - 1) - 1) / sh + 1, wo = (w + pads[0] + pads[1] - dw * (fw - 1) - 1) / sw + 1;
    const int kfull = (c + c0 - 1) / c0 * fh * fw * c0, mfull = ho * wo;
    const int kstart = iarg("kstart"), kext = iarg("kext", kfull - kstart);
    const int mstart = iarg("mstart"), mext = iarg("mext", mfull - mstart);
    const int mb = (mext + 15) / 16, kb = (kext + c0 - 1) / c0, c1 = (c + c0 - 1) / c0;
    std::vector<T> x = load<T>(sarg("x"), size_t(h) * w * c);
    GlobalTensor<T> gx;
    gx.SetGlobalBuffer(x.data(), x.size());
    TPipe pipe;
    TQue<TPosition::A1, 1> qa1; TQue<TPosition::A2, 1> qa2;
    pipe.InitBuffer(qa1, 1, c1 * h * w * c0 * sizeof(T));
    pipe.InitBuffer(qa2, 1, mb * kb * 512);
    LocalTensor<T> a1 = qa1.AllocTensor<T>();
    DataCopy(a1, gx, Nd2NzParams(1, h * w, c, 0, c, h * w, 1, 0));   // NHWC rows -> C1 x (h w) x C0
    qa1.EnQue(a1);
    a1 = qa1.DeQue<T>();
    LocalTensor<T> a2 = qa2.AllocTensor<T>();
    LoadData3DParamsV2<T> p(pads, h, w, c, kext, mext, kstart, mstart, sw, sh, fw, fh, dw, dh, false, false,
                            T(std::atof(sarg("padv", "0").c_str())));
    LoadData(a2, a1, p);
    qa1.FreeTensor(a1);
    if (!conv) {
        save(sarg("out"), reinterpret_cast<const T*>(cannsim::arena_at(a2.addr_)), size_t(mb) * kb * 512 / sizeof(T));
        qa2.FreeTensor(a2);
        return;
    }
    using ACC = std::conditional_t<sizeof(T) == 1, int32_t, float>;
    const int n = iarg("n"), np = (n + 15) / 16 * 16, nb = np / 16;
    std::vector<T> wt = load<T>(sarg("wt"), size_t(n) * kext);
    std::vector<ACC> y(size_t(mext) * n);
    GlobalTensor<T> gw; GlobalTensor<ACC> gy;
    gw.SetGlobalBuffer(wt.data(), wt.size()); gy.SetGlobalBuffer(y.data(), y.size());
    TQue<TPosition::B1, 1> qb1; TQue<TPosition::B2, 1> qb2; TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qb1, 1, kb * nb * 512); pipe.InitBuffer(qb2, 1, kb * nb * 512);
    pipe.InitBuffer(qc, 1, mb * nb * 256 * sizeof(ACC));
    LocalTensor<T> b1 = qb1.AllocTensor<T>();
    DataCopy(b1, gw, Nd2NzParams(1, n, kext, 0, kext, np, 1, 0));   // W (n x k) in Nz: the Zn of W^T
    qb1.EnQue(b1);
    b1 = qb1.DeQue<T>();
    LocalTensor<T> b2 = qb2.AllocTensor<T>();
    LoadData(b2, b1, LoadData2DParams(0, kb * nb, 1, 0, 0, false, 0));
    qb1.FreeTensor(b1);
    qa2.EnQue(a2); qb2.EnQue(b2);
    a2 = qa2.DeQue<T>(); b2 = qb2.DeQue<T>();
    LocalTensor<ACC> co1 = qc.AllocTensor<ACC>();
    Mmad(co1, a2, b2, MmadParams(mext, n, kext));
    qa2.FreeTensor(a2); qb2.FreeTensor(b2);
    qc.EnQue(co1);
    co1 = qc.DeQue<ACC>();
    FixpipeParamsV220 fp;
    fp.nSize = n; fp.mSize = mext; fp.srcStride = mb * 16; fp.dstStride = n;
    Fixpipe(gy, co1, fp);
    qc.FreeTensor(co1);
    save(sarg("y"), y.data(), y.size());
}

// Rule scenarios: a 4 x 4 half map of 16 channels in A1, its img2col in A2.
template <typename T = half>
static void scenario(void (*edit)(LoadData3DParamsV2<T>&), TPosition dstPos = TPosition::A2) {
    TPipe pipe;
    TQue<TPosition::A1, 1> qa1; TQue<TPosition::A2, 1> qa2; TQue<TPosition::B2, 1> qb2;
    pipe.InitBuffer(qa1, 1, 16 * 16 * 32); pipe.InitBuffer(qa2, 1, 16 * 1024); pipe.InitBuffer(qb2, 1, 16 * 1024);
    LocalTensor<T> a1 = qa1.AllocTensor<T>();
    LocalTensor<T> a2 = dstPos == TPosition::B2 ? qb2.AllocTensor<T>() : qa2.AllocTensor<T>();
    uint8_t pads[4] = {1, 1, 1, 1};
    LoadData3DParamsV2<T> p(pads, 4, 4, 32 / sizeof(T), 32 / sizeof(T) * 9, 16, 0, 0, 1, 1, 3, 3, 1, 1);
    edit(p);
    LoadData(a2, a1, p);
    qa1.FreeTensor(a1);
    if (dstPos == TPosition::B2) qb2.FreeTensor(a2);
    else qa2.FreeTensor(a2);
}

// EXPECT clean: none
static void clean() { scenario(+[](LoadData3DParamsV2<half>&) {}); }
// EXPECT stride_range: L2.LOAD3D_PARAMS
static void stride_range() { scenario(+[](LoadData3DParamsV2<half>& p) { p.strideW = 64; }); }
// EXPECT channel_value: L2.LOAD3D_PARAMS
static void channel_value() { scenario(+[](LoadData3DParamsV2<half>& p) { p.channelSize = 12; p.kExtension = 9 * 16; }); }
// EXPECT channel_range: L2.LOAD3D_PARAMS
static void channel_range() { scenario(+[](LoadData3DParamsV2<half>& p) { p.channelSize = 64; }); }
// EXPECT small_k: L2.LOAD3D_PARAMS
static void small_k() { scenario(+[](LoadData3DParamsV2<half>& p) { p.enSmallK = true; }); }
// EXPECT window_outside: L2.LOAD3D_PARAMS
static void window_outside() { scenario(+[](LoadData3DParamsV2<half>& p) { p.mStartPt = 16; p.mExtension = 16; }); }
// EXPECT filter_too_big: L2.LOAD3D_PARAMS
static void filter_too_big() { scenario(+[](LoadData3DParamsV2<half>& p) { p.filterH = 9; p.kExtension = 16 * 27; }); }
// EXPECT k_start_align: L2.LOAD3D_ALIGN
static void k_start_align() { scenario(+[](LoadData3DParamsV2<half>& p) { p.kStartPt = 8; p.kExtension = 16; }); }
// EXPECT k_ext_align: L2.LOAD3D_ALIGN
static void k_ext_align() { scenario(+[](LoadData3DParamsV2<half>& p) { p.kExtension = 40; }); }
// EXPECT m_ext_align: L2.LOAD3D_ALIGN
static void m_ext_align() { scenario(+[](LoadData3DParamsV2<half>& p) { p.mExtension = 8; }); }
// EXPECT m_start_align: L2.LOAD3D_ALIGN
static void m_start_align() { scenario(+[](LoadData3DParamsV2<half>& p) { p.mStartPt = 4; p.mExtension = 8; }); }
// EXPECT int8_b2: L2.LOAD3D_PARAMS
static void int8_b2() { scenario<int8_t>(+[](LoadData3DParamsV2<int8_t>&) {}, TPosition::B2); }
// EXPECT transpose: L4.API_UNKNOWN
static void transpose() { scenario(+[](LoadData3DParamsV2<half>& p) { p.enTranspose = true; }); }
// EXPECT dst_in_l1: L2.CUBE_POSITION
static void dst_in_l1() {
    TPipe pipe; TQue<TPosition::A1, 1> qa1, qb;
    pipe.InitBuffer(qa1, 1, 16 * 16 * 32); pipe.InitBuffer(qb, 1, 16 * 1024);
    LocalTensor<half> a1 = qa1.AllocTensor<half>(), d = qb.AllocTensor<half>();
    uint8_t pads[4] = {1, 1, 1, 1};
    LoadData(d, a1, LoadData3DParamsV2<half>(pads, 4, 4, 16, 144, 16, 0, 0, 1, 1, 3, 3, 1, 1));
    qa1.FreeTensor(a1); qb.FreeTensor(d);
}
// EXPECT dst_too_small: L2.CUBE_BOUNDS
static void dst_too_small() {
    TPipe pipe; TQue<TPosition::A1, 1> qa1; TQue<TPosition::A2, 1> qa2;
    pipe.InitBuffer(qa1, 1, 16 * 16 * 32); pipe.InitBuffer(qa2, 1, 4096);   // 9 fractals need 4608 B
    LocalTensor<half> a1 = qa1.AllocTensor<half>(), a2 = qa2.AllocTensor<half>();
    uint8_t pads[4] = {1, 1, 1, 1};
    LoadData(a2, a1, LoadData3DParamsV2<half>(pads, 4, 4, 16, 144, 16, 0, 0, 1, 1, 3, 3, 1, 1));
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        const auto eq = s.find('=');
        if (eq != std::string::npos) g_args[s.substr(0, eq)] = s.substr(eq + 1);
    }
    const int arch = iarg("arch", 2201);
    cannsim::ChipConfig cfg{};
    std::snprintf(cfg.name, sizeof cfg.name, "%s", arch == 3510 ? "950PR" : "910B2");
    cfg.arch = arch; cfg.vector_cores = 48; cfg.ub_bytes = 192 * 1024 - 256; cfg.max_buffers = 64; cfg.max_queue_buffers = 8;
    cannsim::configure_chip(cfg);
    cannsim::begin_block(0, 1);
    const std::string op = sarg("op"), dt = sarg("dtype");
    if (op == "rule") {
        const std::string s = sarg("name");
#define S(name) if (s == #name) name();
        S(clean) S(stride_range) S(channel_value) S(channel_range) S(small_k) S(window_outside) S(filter_too_big)
        S(k_start_align) S(k_ext_align) S(m_ext_align) S(m_start_align) S(int8_b2) S(transpose) S(dst_in_l1)
        S(dst_too_small)
#undef S
    } else {
        const bool conv = op == "conv";
        if (dt == "half") run<half>(conv);
        else if (dt == "bf16") run<bfloat16_t>(conv);
        else if (dt == "float") run<float>(conv);
        else if (dt == "int8") run<int8_t>(conv);
    }
    cannsim::end_block();
    return 0;
}
