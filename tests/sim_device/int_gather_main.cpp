// Numerical driver for tests/test_sim_int_gather_atomic.py: integer, bitwise, shift, gather, fill and
// cast APIs on arrays from files. Usage: int_gather_main op=NAME dtype=T arch=A n=N in0=F [in1=F]
// out=F [scalar=S] [mask=M repeat=R] [pattern=P] ...; `out` holds the initial dst and gets the result.
// Extra scalar results (rsvdCnt) are printed on stdout as `key=value`.
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
static bool has(const char* k) { return A.count(k) > 0; }
static long long I(const char* k, long long d = 0) { return has(k) ? std::stoll(A[k], nullptr, 0) : d; }
static double F(const char* k, double d = 0) { return has(k) ? std::stod(A[k]) : d; }

// A UB buffer holding the host bytes (rounded up to 32 B).
template <typename T>
static LocalTensor<T> ub(TPipe& pipe, TBuf<TPosition::VECCALC>& buf, std::vector<uint8_t>& host) {
    host.resize((host.size() + 31) / 32 * 32 + 32);
    pipe.InitBuffer(buf, static_cast<uint32_t>(host.size()));
    LocalTensor<T> t = buf.Get<T>();
    std::memcpy(t.sim_data(), host.data(), host.size());
    return t;
}
template <typename T> static void save(const LocalTensor<T>& t, size_t bytes) {
    std::ofstream f(A["out"], std::ios::binary);
    f.write(reinterpret_cast<const char*>(t.sim_data()), static_cast<std::streamsize>(bytes));
}

static RoundMode round_mode() {
    const std::string m = has("mode") ? A["mode"] : "none";
    if (m == "rint") return RoundMode::CAST_RINT;
    if (m == "floor") return RoundMode::CAST_FLOOR;
    if (m == "ceil") return RoundMode::CAST_CEIL;
    if (m == "round") return RoundMode::CAST_ROUND;
    if (m == "trunc") return RoundMode::CAST_TRUNC;
    return RoundMode::CAST_NONE;
}

template <typename T>
static void run() {
    const std::string op = A["op"];
    const int32_t n = static_cast<int32_t>(I("n"));
    TPipe pipe;
    TBuf<TPosition::VECCALC> b0, b1, bo;
    auto h0 = load(A["in0"]);
    auto h1 = has("in1") ? load(A["in1"]) : std::vector<uint8_t>(64, 0);
    auto ho = load(A["out"]);
    const size_t out_bytes = ho.size();
    LocalTensor<T> x = ub<T>(pipe, b0, h0);
    LocalTensor<T> o = ub<T>(pipe, bo, ho);
    const bool masked = has("repeat");
    const uint64_t mask = static_cast<uint64_t>(I("mask", 0));
    const int64_t rep = I("repeat", 1);
    const T s = static_cast<T>(I("scalar", 0));
    UnaryRepeatParams up;
    BinaryRepeatParams bp;
    if constexpr (std::is_integral_v<T>) {
        LocalTensor<T> y = ub<T>(pipe, b1, h1);
        if (op == "and") masked ? And(o, x, y, mask, rep, bp) : And(o, x, y, n);
        else if (op == "or") masked ? Or(o, x, y, mask, rep, bp) : Or(o, x, y, n);
        else if (op == "not") masked ? Not(o, x, mask, rep, up) : Not(o, x, n);
        else if (op == "shl") masked ? ShiftLeft(o, x, s, mask, rep, up) : ShiftLeft(o, x, s, n);
        else if (op == "shr") masked ? ShiftRight(o, x, s, mask, rep, up, I("round", 0) != 0) : ShiftRight(o, x, s, n);
        else if (op == "add") Add(o, x, y, n);
        else if (op == "sub") Sub(o, x, y, n);
        else if (op == "mul") Mul(o, x, y, n);
        else if (op == "max") Max(o, x, y, n);
        else if (op == "min") Min(o, x, y, n);
        else if (op == "adds") Adds(o, x, s, n);
        else if (op == "muls") Muls(o, x, s, n);
        else if (op == "maxs") Maxs(o, x, s, n);
        else if (op == "mins") Mins(o, x, s, n);
        else if (op == "abs") Relu(o, x, n);
        else if (op == "dup") masked ? Duplicate(o, s, mask, rep, 1, 8) : Duplicate(o, s, n);
    }
    if constexpr (!std::is_integral_v<T>) {
        LocalTensor<T> y = ub<T>(pipe, b1, h1);
        if (op == "fma") FusedMulAdd(o, x, y, n);
        else if (op == "muladddst") MulAddDst(o, x, y, n);
        else if (op == "axpy") Axpy(o, x, static_cast<T>(F("scalar")), n);
        else if (op == "addrelu") AddRelu(o, x, y, n);
        else if (op == "subrelu") masked ? SubRelu(o, x, y, mask, rep, bp) : SubRelu(o, x, y, n);
    } else if (op == "addrelu") {
        LocalTensor<T> y = ub<T>(pipe, b1, h1);
        AddRelu(o, x, y, n);
    }
    if (op == "atomic") {   // GM (the out file) combined with x by the atomic mode, via DataCopyPad
        GlobalTensor<T> gm;
        std::vector<uint8_t> g = ho;
        gm.SetGlobalBuffer(reinterpret_cast<T*>(g.data()), g.size() / sizeof(T));
        const std::string how = A["how"];
        if (how == "add") SetAtomicAdd<T>();
        else if (how == "max") SetAtomicMax<T>();
        else SetAtomicMin<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(gm, x, cp);
        SetAtomicNone();
        std::memcpy(o.sim_data(), g.data(), g.size());
    }
    if (op == "bits") {
        const uint64_t v = static_cast<uint64_t>(std::stoull(A["value"], nullptr, 0));
        std::printf("ones=%lld zeros=%lld clz=%lld sign=%lld sff1=%lld sff0=%lld\n", (long long)GetBitCount<1>(v),
                    (long long)GetBitCount<0>(v), (long long)CountLeadingZero(v),
                    (long long)CountBitsCntSameAsSignBit(static_cast<int64_t>(v)), (long long)GetSFFValue<1>(v),
                    (long long)GetSFFValue<0>(v));
    }
    if (op == "relu") Relu(o, x, n);
    else if (op == "brcb") Brcb(o, x, static_cast<uint8_t>(rep), BrcbRepeatParams(I("blk", 1), I("rep", 8)));
    else if (op == "vecindex") {
        if (masked) CreateVecIndex(o, static_cast<T>(F("scalar")), mask, static_cast<uint8_t>(rep), 1, 8);
        else CreateVecIndex(o, static_cast<T>(F("scalar")), static_cast<uint32_t>(n));
    } else if (op == "arange") Arange(o, static_cast<T>(F("scalar")), static_cast<T>(F("step")), n);
    else if (op == "gather" || op == "gatherb") {
        LocalTensor<uint32_t> offs = ub<uint32_t>(pipe, b1, h1);
        const uint32_t base = static_cast<uint32_t>(I("base", 0));
        if (op == "gatherb") Gatherb(o, x, offs, static_cast<uint8_t>(rep), GatherRepeatParams(I("blk", 1), I("rep", 8)));
        else if (masked) Gather(o, x, offs, base, mask, static_cast<uint8_t>(rep), static_cast<uint16_t>(I("dstrep", 8)));
        else Gather(o, x, offs, base, static_cast<uint32_t>(n));
    } else if (op == "gathermask") {
        uint64_t kept = 0;
        GatherMaskParams p(static_cast<uint8_t>(I("blk", 1)), static_cast<uint16_t>(rep), static_cast<uint16_t>(I("rep", 8)),
                           static_cast<uint8_t>(I("patrep", 0)));
        const bool reduce = I("reduce", 0) != 0;
        if (has("pattern")) {
            GatherMask(o, x, static_cast<uint8_t>(I("pattern")), reduce, static_cast<uint32_t>(mask), p, kept);
        } else {
            using P = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
            LocalTensor<P> pat = ub<P>(pipe, b1, h1);
            GatherMask(o, x, pat, reduce, static_cast<uint32_t>(mask), p, kept);
        }
        std::printf("rsvdCnt=%llu\n", (unsigned long long)kept);
    } else if (op == "cast_ff") {
        if constexpr (std::is_same_v<T, float>) Cast(o, x, round_mode(), static_cast<uint32_t>(n));
    } else if (op == "cmp_eq") {
        if constexpr (std::is_same_v<T, int32_t>) {
            LocalTensor<T> y = ub<T>(pipe, b1, h1);
            LocalTensor<uint8_t> m = o.template ReinterpretCast<uint8_t>();
            Compare(m, x, y, has("cmp") ? CMPMODE::LT : CMPMODE::EQ, static_cast<uint32_t>(n));
        }
    }
    save(o, out_bytes);
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const auto eq = a.find('=');
        if (eq != std::string::npos) A[a.substr(0, eq)] = a.substr(eq + 1);
    }
    const int arch = static_cast<int>(I("arch", 2201));
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", arch == 3510 ? "950PR" : "910B2");
    c.arch = arch; c.vector_cores = 48; c.ub_bytes = arch == 3510 ? 248 * 1024 : 192 * 1024 - 256 - 8 * 1024;
    c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::begin_block(0, 1);
    const std::string t = A["dtype"];
    if (t == "int8") run<int8_t>();
    else if (t == "uint8") run<uint8_t>();
    else if (t == "int16") run<int16_t>();
    else if (t == "uint16") run<uint16_t>();
    else if (t == "int32") run<int32_t>();
    else if (t == "uint32") run<uint32_t>();
    else if (t == "int64") run<int64_t>();
    else if (t == "uint64") run<uint64_t>();
    else if (t == "half") run<half>();
    else if (t == "float") run<float>();
    cannsim::end_block();
    return 0;
}
