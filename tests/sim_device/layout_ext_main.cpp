// Numerical driver for tests/test_sim_api_layout.py: TransDataTo5HD, TransData, CastDequant,
// BilinearInterpolation and SoftmaxFlashV3 on a UB arena.
// Usage: layout_ext_main op=NAME dt=T arena=IN out=OUT [arch=2201] [key=value ...]
//   op=TransDataTo5HD form=tensor|addr|addrtensor o0=SRC sblk=BYTES od=DST dblk=BYTES
//      [dh=0 sh=0 repeat=1 drep=0 srep=0] [oa=ADDRESS_LISTS]: list entry i is base + i * blk bytes
//   op=TransData mode=ndc|fz back=0|1 n= c= d= h= w= o0=SRC od=DST [ot=TMP st=BYTES]
//   op=CastDequant dt=int8|uint8|half st=int16|int32 form=count|bit|cont n= | mask= m0= m1= repeat=
//      [dblk srcblk drep srep] vec=0|1 half=0|1 scale= offset= sign= [dscale=] o0=SRC od=DST ov=VDEQ_TENSOR
//   op=BilinearInterpolation dt=half o0=SRC0 n0=ELEMS oo=OFFSETS o1=SRC1 n1=ELEMS od=DST ot=TMP st=BYTES
//      form=bit|cont mask= m0= m1= h= v= mode=0|1 dblk= vro=
//   op=SoftmaxFlashV3 m= n= update=0|1 loop= alpha= o0=SRC od=DST om ox os oe oim oix ois [ot st]
// The arena file is copied into one UB buffer and written back after the call; cost counters go
// to stdout, diagnostics to stderr as JSON lines.
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>
#include "tiling/tiling_api.h"   // the host helpers (before the kernel headers define the DT_ macros)
#include "kernel_operator.h"

using namespace AscendC;
static std::map<std::string, std::string> A;
static bool has(const char* k) { return A.count(k) > 0; }
static long long I(const char* k, long long d = 0) { return has(k) ? std::stoll(A[k], nullptr, 0) : d; }
static uint64_t bits_arg(const char* k) { return has(k) ? std::stoull(A[k], nullptr, 0) : ~0ull; }
static TBuf<TPosition::VECCALC>* g_buf;

template <typename T> static LocalTensor<T> at(long long byte_offset) {
    return g_buf->Get<uint8_t>()[static_cast<uint32_t>(byte_offset)].template ReinterpretCast<T>();
}

template <typename T> static void trans_5hd() {
    TransDataTo5HDParams p((bool)I("dh"), (bool)I("sh"), (uint8_t)I("repeat", 1), (uint16_t)I("drep"), (uint16_t)I("srep"));
    const long long o0 = I("o0"), od = I("od"), sblk = I("sblk", 32), dblk = I("dblk", 32);
    const std::string form = has("form") ? A["form"] : "tensor";
    if (form == "tensor") {
        LocalTensor<T> d[16], s[16];
        for (int i = 0; i < 16; ++i) { d[i] = at<T>(od + i * dblk); s[i] = at<T>(o0 + i * sblk); }
        TransDataTo5HD<T>(d, s, p);
    } else if (form == "addr") {
        uint64_t d[16], s[16];
        for (int i = 0; i < 16; ++i) { d[i] = at<T>(od + i * dblk).GetPhyAddr(); s[i] = at<T>(o0 + i * sblk).GetPhyAddr(); }
        TransDataTo5HD<T>(d, s, p);
    } else {                       // the address lists in UB at oa (dst) and oa + 128 (src)
        LocalTensor<uint64_t> d = at<uint64_t>(I("oa")), s = at<uint64_t>(I("oa") + 128);
        for (int i = 0; i < 16; ++i) {
            d.SetValue(i, at<T>(od + i * dblk).GetPhyAddr());
            s.SetValue(i, at<T>(o0 + i * sblk).GetPhyAddr());
        }
        TransDataTo5HD<T>(d, s, p);
    }
}

static constexpr TransDataConfig kToNdc = {DataFormat::NCDHW, DataFormat::NDC1HWC0};
static constexpr TransDataConfig kFromNdc = {DataFormat::NDC1HWC0, DataFormat::NCDHW};
static constexpr TransDataConfig kToFz = {DataFormat::NCDHW, DataFormat::FRACTAL_Z_3D};
static constexpr TransDataConfig kFromFz = {DataFormat::FRACTAL_Z_3D, DataFormat::NCDHW};

template <const TransDataConfig& config, typename T, typename L1, typename L2>
static void trans_data_call(const L1& src, const L2& dst) {
    TransDataParams<L1, L2> params = {src, dst};
    if (has("st")) {
        LocalTensor<uint8_t> t = at<uint8_t>(I("ot"));
        t.SetSize(static_cast<uint32_t>(I("st")));
        TransData<config>(at<T>(I("od")), at<T>(I("o0")), t, params);
    } else {
        TransData<config>(at<T>(I("od")), at<T>(I("o0")), params);
    }
}

template <typename T> static void trans_data() {
    const long long n = I("n"), c = I("c"), d = I("d"), h = I("h"), w = I("w");
    const long long c1 = I("c1", (c + 15) / 16), n1 = I("n1", (n + 15) / 16);
    auto ncdhw = MakeLayout(MakeShape(n, c, d, h, w), MakeStride());
    const bool back = I("back") != 0;
    if (A["mode"] == "ndc") {
        auto other = MakeLayout(MakeShape(n, d, c1, h, w, 16), MakeStride());
        if (back) trans_data_call<kFromNdc, T>(other, ncdhw); else trans_data_call<kToNdc, T>(ncdhw, other);
    } else {
        auto other = MakeLayout(MakeShape(d, c1, h, w, n1, 16, 16), MakeStride());
        if (back) trans_data_call<kFromFz, T>(other, ncdhw); else trans_data_call<kToFz, T>(ncdhw, other);
    }
}

template <typename T, typename U, bool vec, bool hb> static void cast_dequant_call() {
    const std::string form = has("form") ? A["form"] : "count";
    auto d = at<T>(I("od"));
    auto s = at<U>(I("o0"));
    UnaryRepeatParams p((uint16_t)I("dblk", 1), (uint16_t)I("srcblk", 1), (uint8_t)I("drep", 8), (uint8_t)I("srep", 8));
    uint64_t bits[2] = {bits_arg("m0"), bits_arg("m1")};
    if (form == "count") CastDequant<T, U, vec, hb>(d, s, (uint32_t)I("n"));
    else if (form == "bit") CastDequant<T, U, true, vec, hb>(d, s, bits, (uint8_t)I("repeat", 1), p);
    else CastDequant<T, U, true, vec, hb>(d, s, (int32_t)I("mask"), (uint8_t)I("repeat", 1), p);
}

template <typename T, typename U> static void cast_dequant() {
    const float scale = std::stof(has("scale") ? A["scale"] : "1");
    const float dscale = std::stof(has("dscale") ? A["dscale"] : "0");
    if (std::is_same_v<U, int32_t>) SetDeqScale(half(scale));
    else if (I("vec")) {
        float sc[16]; int16_t off[16]; bool sg[16];
        for (int g = 0; g < 16; ++g) { sc[g] = scale + g * dscale; off[g] = (int16_t)(I("offset") + g); sg[g] = I("sign") != 0; }
        SetDeqScale(at<uint64_t>(I("ov")), VdeqInfo(sc, off, sg));
    } else {
        SetDeqScale(scale, (int16_t)I("offset"), I("sign") != 0);
    }
    const bool vec = I("vec") != 0, hb = I("half", 1) != 0;
    if (vec && hb) cast_dequant_call<T, U, true, true>();
    else if (vec) cast_dequant_call<T, U, true, false>();
    else if (hb) cast_dequant_call<T, U, false, true>();
    else cast_dequant_call<T, U, false, false>();
}

template <typename T> static void bilinear() {
    auto s0 = at<T>(I("o0")); s0.SetSize((uint32_t)I("n0"));
    auto s1 = at<T>(I("o1")); s1.SetSize((uint32_t)I("n1"));
    auto t = at<uint8_t>(I("ot")); t.SetSize((uint32_t)I("st"));
    uint64_t bits[2] = {bits_arg("m0"), bits_arg("m1")};
    const auto h = (uint8_t)I("h", 1), v = (uint8_t)I("v", 1);
    const bool mode = I("mode") != 0;
    const auto blk = (uint16_t)I("dblk", 1), vro = (uint16_t)I("vro", 128);
    if (A["form"] == "bit") BilinearInterpolation(at<T>(I("od")), s0, at<uint32_t>(I("oo")), s1, bits, h, mode, blk, vro, v, t);
    else BilinearInterpolation(at<T>(I("od")), s0, at<uint32_t>(I("oo")), s1, (uint64_t)I("mask", 128), h, mode, blk, vro, v, t);
}

template <bool update> static void flash_v3() {
    SoftMaxParams p((uint32_t)I("m"), (uint32_t)I("n"), (uint32_t)I("m"), (uint32_t)I("n"), (uint32_t)I("loop", 1),
                    (uint32_t)I("split", 8), std::stof(has("alpha") ? A["alpha"] : "0.9375"));
    tiling::SoftMaxTiling t{};
    auto f = [](const char* k) { return at<float>(I(k)); };
    if (has("st")) {
        auto tmp = at<uint8_t>(I("ot")); tmp.SetSize((uint32_t)I("st"));
        SoftmaxFlashV3<half, float, update>(at<half>(I("od")), f("om"), f("os"), f("ox"), at<half>(I("o0")), at<half>(I("oe")),
                                            f("oim"), f("ois"), f("oix"), tmp, t, p);
    } else {
        SoftmaxFlashV3<half, float, update>(at<half>(I("od")), f("om"), f("os"), f("ox"), at<half>(I("o0")), at<half>(I("oe")),
                                            f("oim"), f("ois"), f("oix"), t, p);
    }
}

template <typename T> static void run(const std::string& op) {
    if constexpr (std::is_same_v<T, half>) if (op == "BilinearInterpolation") { bilinear<T>(); return; }
    if constexpr (std::is_same_v<T, half>) if (op == "SoftmaxFlashV3") {
        if (I("update")) flash_v3<true>(); else flash_v3<false>();
        return;
    }
    if (op == "TransDataTo5HD") trans_5hd<T>();
    else if (op == "TransData") trans_data<T>();
    else { std::fprintf(stderr, "unknown op %s\n", op.c_str()); std::exit(3); }
}

static void host_sizes() {
    uint32_t mx = 0, mn = 0;
    const int64_t n = I("n"), c = I("c"), d = I("d"), h = I("h"), w = I("w");
    platform_ascendc::PlatformAscendC plat(nullptr);
    const bool ok = GetTransDataMaxMinTmpSize(plat, ge::Shape({n, c, d, h, w}),
                                              ge::Shape({n, d, (c + 15) / 16, h, w, I("c0", 16)}), static_cast<ge::DataType>(1),   // DT_FLOAT16 (a macro in kernel code)
                                              kToNdc, mx, mn);
    std::printf("ok=%d max=%u min=%u\n", ok ? 1 : 0, mx, mn);
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const auto eq = a.find('=');
        A[a.substr(0, eq)] = a.substr(eq + 1);
    }
    cannsim::ChipConfig c{};
    const int arch = static_cast<int>(I("arch", 2201));
    std::snprintf(c.name, sizeof c.name, "%s", arch == 3510 ? "950PR" : "910B2");
    c.arch = arch; c.vector_cores = 48; c.ub_bytes = 192 * 1024 - 256 - 8 * 1024; c.max_buffers = 64;
    c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::set_diag_fd(2);
    cannsim::begin_block(0, 1);
    if (A["op"] == "host") { host_sizes(); return 0; }
    if (A["op"] == "host_v3") {
        uint32_t mx = 0, mn = 0;
        GetSoftMaxFlashV3MaxMinTmpSize(ge::Shape({I("m"), I("n")}), 2, 4, mx, mn, I("update") != 0);
        std::printf("max=%u min=%u\n", mx, mn);
        return 0;
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
    const std::string op = A["op"], dt = A["dt"];
    if (op == "CastDequant") {
        const std::string st = A["st"];
        if (dt == "int8" && st == "int16") cast_dequant<int8_t, int16_t>();
        else if (dt == "uint8" && st == "int16") cast_dequant<uint8_t, int16_t>();
        else if (dt == "half" && st == "int32") cast_dequant<half, int32_t>();
        else { std::fprintf(stderr, "unknown pair %s %s\n", dt.c_str(), st.c_str()); return 3; }
    } else if (dt == "half") run<half>(op);
    else if (dt == "bf16") run<bfloat16_t>(op);
    else if (dt == "int16") run<int16_t>(op);
    else if (dt == "uint16") run<uint16_t>(op);
    else if (dt == "float") run<float>(op);
    else if (dt == "int32") run<int32_t>(op);
    else if (dt == "uint32") run<uint32_t>(op);
    else if (dt == "int8") run<int8_t>(op);
    else if (dt == "uint8") run<uint8_t>(op);
    else { std::fprintf(stderr, "unknown dt %s\n", dt.c_str()); return 3; }
    std::memcpy(host.data(), cannsim::ub_at(buf.Get<uint8_t>().addr_), bytes);
    std::ofstream fo(A["out"], std::ios::binary);
    fo.write(reinterpret_cast<const char*>(host.data()), static_cast<std::streamsize>(bytes));
    cannsim::end_block();
    std::printf("%s\n", cannsim::cost_counters_json().c_str());
    return 0;
}
