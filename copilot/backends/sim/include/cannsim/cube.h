// The cube unit: fractal layouts, DataCopy GM -> L1 with ND2NZ, LoadData (2-D) into L0A/L0B,
// Mmad into L0C and Fixpipe L0C -> GM (NZ2ND, relu, fp32 -> fp16/bf16, int32 dequant).
// Written from the CANN 9.0.0 API reference (facts only; sources in docs/emulator-cube.md).
//
// Layouts (fractal = the unit the cube reads; C0 = 32 B / sizeof(T) elements):
//   L1 (A1/B1), as DataCopy ND2NZ writes it: "Nz", 16 x C0 fractals, row-major inside, the
//     fractals of one C0-column stacked down the rows (column-major between fractals).
//   L0A (A2) on arch 2201: "Zz", 16 x C0 fractals, row-major inside and between;
//     on arch 3510: "Nz" (as L1).
//   L0B (B2): "Zn", C0 x 16 fractals (k x n), column-major inside, row-major between.
//   L0C (CO1): "Nz", 16 x 16 fractals of fp32/int32, row-major inside, column-major between.
#pragma once
#include <cmath>
#include <type_traits>
#include "pipe.h"
#include "vec_engine.h"
#include "mix_core.h"
#include "debug.h"
#if __has_include("gm_alias.h")
#include "gm_alias.h"
#define CANNSIM_CUBE_GM(p) ::cannsim::gm_real(p)   // the emulator's address of a kernel GM address
#else
#define CANNSIM_CUBE_GM(p) (p)
#endif

namespace AscendC {

struct Nd2NzParams {
    uint16_t ndNum = 0, nValue = 0, dValue = 0, srcNdMatrixStride = 0, srcDValue = 0, dstNzC0Stride = 0,
             dstNzNStride = 0, dstNzMatrixStride = 0;
    Nd2NzParams() = default;
    Nd2NzParams(uint16_t nd, uint16_t n, uint16_t d, uint16_t srcNd, uint16_t srcD, uint16_t c0Stride,
                uint16_t nStride, uint16_t dstNd)
        : ndNum(nd), nValue(n), dValue(d), srcNdMatrixStride(srcNd), srcDValue(srcD), dstNzC0Stride(c0Stride),
          dstNzNStride(nStride), dstNzMatrixStride(dstNd) {}
};

struct LoadData2DParams {
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint8_t sid = 0;
    uint16_t dstGap = 0;
    bool ifTranspose = false;
    uint8_t addrMode = 0;
    LoadData2DParams() = default;
    LoadData2DParams(uint16_t start, uint8_t repeat, uint16_t srcStrideIn, uint8_t sidIn, uint16_t dstGapIn,
                     bool transpose, uint8_t addrModeIn)
        : startIndex(start), repeatTimes(repeat), srcStride(srcStrideIn), sid(sidIn), dstGap(dstGapIn),
          ifTranspose(transpose), addrMode(addrModeIn) {}
};

struct LoadData2dTransposeParams {
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
    LoadData2dTransposeParams() = default;
    LoadData2dTransposeParams(uint16_t start, uint8_t repeat, uint16_t srcStrideIn, uint16_t dstGapIn, uint16_t fracGap,
                              uint8_t addrModeIn = 0)
        : startIndex(start), repeatTimes(repeat), srcStride(srcStrideIn), dstGap(dstGapIn), dstFracGap(fracGap),
          addrMode(addrModeIn) {}
};

struct MmadParams {
    uint16_t m = 0, n = 0, k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false, enWinogradA = false, enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
    bool disableGemv = false;
    MmadParams() = default;
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, bool isBiasIn = false, int32_t fmOffsetIn = 0,
               bool enSsparseIn = false, bool enWinogradAIn = false, bool enWinogradBIn = false)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
};

enum class QuantMode_t : uint8_t {
    NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8
};

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
    bool isToUB = false;
};
inline constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
inline constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
inline constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct FixpipeParamsV220 {
    uint16_t nSize = 0, mSize = 0, srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1, srcNdStride = 0, dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
    FixpipeParamsV220() = default;
    FixpipeParamsV220(uint16_t n, uint16_t m, uint16_t srcStrideIn, uint32_t dstStrideIn, bool relu)
        : nSize(n), mSize(m), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(relu) {}
};

}  // namespace AscendC

namespace cannsim {

// Element types each cube API takes per arch {"Api", 2201, 3510, 2002} (the reference's tables).
namespace cube_dt {
constexpr uint32_t LOAD = DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32;
}
inline const ApiDtypes kCubeDtypes[] = {
    {"LoadData", cube_dt::LOAD, cube_dt::LOAD, DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16},
    {"Mmad", DT_I8 | DT_F16 | DT_BF16 | DT_F32, DT_I8 | DT_F16 | DT_BF16 | DT_F32, DT_I8 | DT_U8 | DT_F16},
    {"Fixpipe", DT_I8 | DT_U8 | DT_F16 | DT_BF16 | DT_I32 | DT_F32, DT_I8 | DT_U8 | DT_F16 | DT_BF16 | DT_I32 | DT_F32, 0},
};

inline uint8_t* arena_at(uint64_t addr) { return detail::ub_real() + addr; }

inline const char* position_name(AscendC::TPosition p) {
    static const char* n[] = {"GM", "A1", "A2", "B1", "B2", "C1", "C2", "CO1", "CO2", "VECIN", "VECOUT",
                              "VECCALC", "SPM", "TSCM", "C2PIPE2GM", "C2PIPE2LOCAL", "MAX"};
    const int i = static_cast<int>(p);
    return i >= 0 && i < static_cast<int>(sizeof(n) / sizeof(n[0])) ? n[i] : "?";
}

// A cube operand must sit in one of the positions the API takes (L2.CUBE_POSITION).
template <typename T>
inline bool check_position(const char* api, const char* operand, const AscendC::LocalTensor<T>& t,
                           std::initializer_list<AscendC::TPosition> allowed, const SrcLoc& loc) {
    for (auto p : allowed) if (t.pos_ == p) return true;
    std::string names;
    for (auto p : allowed) { if (!names.empty()) names += "/"; names += position_name(p); }
    report("L2.CUBE_POSITION", Severity::Error, api, loc.line(),
           fmt("%s %s is a LocalTensor at TPosition %s; it must be at %s", api, operand, position_name(t.pos_),
               names.c_str()));
    return false;
}

// Start address alignment (bytes) of a cube operand inside its buffer (L2.CUBE_ALIGN).
template <typename T>
inline void check_cube_align(const char* api, const char* operand, const AscendC::LocalTensor<T>& t, uint64_t align,
                             const SrcLoc& loc) {
    const int slot = t.slot_;
    auto& s = detail::state();
    const uint64_t base = slot >= 0 && slot < static_cast<int>(s.slots.size()) ? s.mem_base[s.slots[slot].mem] : 0;
    const uint64_t off = t.addr_ - base;
    if (off % align != 0)
        report("L2.CUBE_ALIGN", Severity::Error, api, loc.line(),
               fmt("%s %s starts at byte %llu of its buffer, not a multiple of %llu B (the fractal alignment %s "
                   "needs there)",
                   api, operand, (unsigned long long)off, (unsigned long long)align, api));
}

// The bytes [first, last) an API touches through a cube operand must lie in its buffer (fatal: the
// chip reads or writes another buffer's data).
template <typename T>
inline void cube_range(const char* api, const char* operand, const AscendC::LocalTensor<T>& t, uint64_t first,
                       uint64_t last, const SrcLoc& loc) {
    check_live(api, t.slot_, t.gen_, loc);
    if (last <= first) return;
    const UbExtent e = slot_extent(t.slot_);
    if (t.addr_ + first < e.lo || t.addr_ + last > e.hi)
        report("L2.CUBE_BOUNDS", Severity::Error, api, loc.line(),
               fmt("%s %s touches bytes [%llu, %llu) of a %llu-byte buffer at %s: the fractals it reads or writes "
                   "do not fit in the tensor",
                   api, operand, (unsigned long long)(t.addr_ + first - e.lo), (unsigned long long)(t.addr_ + last - e.lo),
                   (unsigned long long)(e.hi - e.lo), position_name(t.pos_)),
               true);
    cost::note_operand(t.slot_, operand[0] == 'd');
}

inline void check_cube_dtype(const char* api, uint32_t dtype, const SrcLoc& loc) {
    for (const auto& r : kCubeDtypes)
        if (std::strcmp(r.api, api) == 0) { check_dtype_row(api, &r, dtype, loc); return; }
}

template <typename T> constexpr uint32_t c0_of() { return 32 / sizeof(T); }

// ---- fractal index maps (element offsets), shared by the APIs and the tests ----
// Nz of a (rows x cols) matrix, rows padded to `rows_pad` (a multiple of 16), C0 columns per fractal.
inline uint64_t nz_offset(uint64_t r, uint64_t c, uint64_t rows_pad, uint64_t c0) {
    return (c / c0) * rows_pad * c0 + r * c0 + c % c0;
}
// Zz: fractals of 16 x c0, row-major between (`cols_blocks` fractals per fractal row).
inline uint64_t zz_offset(uint64_t r, uint64_t c, uint64_t cols_blocks, uint64_t c0) {
    return ((r / 16) * cols_blocks + c / c0) * 16 * c0 + (r % 16) * c0 + c % c0;
}
// Zn of a (k x n) matrix: fractals of c0 x 16, row-major between, column-major inside.
inline uint64_t zn_offset(uint64_t kk, uint64_t nn, uint64_t n_blocks, uint64_t c0) {
    return ((kk / c0) * n_blocks + nn / 16) * 16 * c0 + (nn % 16) * c0 + kk % c0;
}

// Mmad's dtype combinations (fm, filter, dst) per arch: the reference's tables for A2/A3 and Atlas 350.
template <typename D, typename A, typename B>
inline bool mmad_combo_ok() {
    constexpr bool i8 = std::is_same_v<A, int8_t> && std::is_same_v<B, int8_t> && std::is_same_v<D, int32_t>;
    constexpr bool f16 = std::is_same_v<A, half> && std::is_same_v<B, half> && std::is_same_v<D, float>;
    constexpr bool bf16 = std::is_same_v<A, bfloat16_t> && std::is_same_v<B, bfloat16_t> && std::is_same_v<D, float>;
    constexpr bool f32 = std::is_same_v<A, float> && std::is_same_v<B, float> && std::is_same_v<D, float>;
    const int a = arch();
    if (a == 2002) {
        constexpr bool u8 = (std::is_same_v<A, uint8_t> || std::is_same_v<A, int8_t>) &&
                            (std::is_same_v<B, uint8_t> || std::is_same_v<B, int8_t>) && std::is_same_v<D, int32_t>;
        constexpr bool hh = std::is_same_v<A, half> && std::is_same_v<B, half> && std::is_same_v<D, half>;
        return u8 || f16 || hh;
    }
    return i8 || f16 || bf16 || f32;
}


inline float deq_scale_of(uint64_t word) {
    const uint32_t bits = static_cast<uint32_t>(word & 0xffffffffu);
    float f; std::memcpy(&f, &bits, 4);
    return f;
}

// The inner product loop of Mmad, optimised whatever the candidate's build flags: row += a * b.
__attribute__((optimize("O3"))) inline void axpy(int32_t* row, int32_t a, const int32_t* b, uint64_t n) {
    for (uint64_t j = 0; j < n; ++j) row[j] += a * b[j];
}
__attribute__((optimize("O3"))) inline void axpy(float* row, float a, const float* b, uint64_t n) {
    for (uint64_t j = 0; j < n; ++j) row[j] += a * b[j];
}

// The source unit a load's repeat r reads (addrMode: decreasing addresses), and the lowest and highest
// over its repeats; a walk before the start of src is fatal.
template <typename P>
inline int64_t load_index(const P& p, int64_t r) {
    return p.addrMode ? int64_t(p.startIndex) - r * p.srcStride : int64_t(p.startIndex) + r * p.srcStride;
}
template <typename P>
inline void load_span(const char* api, const P& p, int64_t& lo, int64_t& hi, const SrcLoc& loc) {
    lo = hi = p.startIndex;
    for (int64_t r = 0; r < p.repeatTimes; ++r) { lo = std::min(lo, load_index(p, r)); hi = std::max(hi, load_index(p, r)); }
    if (lo < 0)
        report("L2.CUBE_BOUNDS", Severity::Error, api, loc.line(),
               fmt("%s with a decreasing address (addrMode) walks before the start of src", api), true);
}

// Cube cost classes: the MACs per cycle depend on the element size of the inputs.
template <typename T> constexpr int cube_kind() { return sizeof(T) == 1 ? 1 : sizeof(T) == 2 ? 0 : 2; }

}  // namespace cannsim

namespace AscendC {

// ---- DataCopy GM -> A1/B1 with ND2NZ ----
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p, CANNSIM_LOC) {
    constexpr uint64_t c0 = cannsim::c0_of<T>();
    cannsim::check_dtype("DataCopy", cannsim::dtype_of<T>(), loc);
    cannsim::check_position("DataCopy", "dst", dst, {TPosition::A1, TPosition::B1, TPosition::C1, TPosition::TSCM,
                                                     TPosition::VECIN, TPosition::VECCALC, TPosition::VECOUT}, loc);
    cannsim::check_cube_align("DataCopy", "dst", dst, 32, loc);
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) { cannsim::record_cost(PIPE_MTE2, "DataCopy", cannsim::dtype_of<T>(), 0, 0); return; }
    if (p.nValue > 16384 || p.dValue > 65535 || p.ndNum > 4095 || p.srcDValue == 0 || p.dstNzC0Stride == 0 || p.dstNzNStride == 0)
        cannsim::report("L2.CUBE_PARAMS", cannsim::Severity::Error, "DataCopy", loc.line(),
                        cannsim::fmt("DataCopy Nd2NzParams out of range: ndNum=%u (<= 4095) nValue=%u (<= 16384) "
                                     "dValue=%u srcDValue=%u (>= 1) dstNzC0Stride=%u (>= 1) dstNzNStride=%u (>= 1)",
                                     p.ndNum, p.nValue, p.dValue, p.srcDValue, p.dstNzC0Stride, p.dstNzNStride));
    const uint64_t cblocks = (p.dValue + c0 - 1) / c0;
    // extent of what is written and read, in elements
    const uint64_t last_nd = uint64_t(p.ndNum) - 1, last_r = uint64_t(p.nValue) - 1;
    const uint64_t dst_last = last_nd * p.dstNzMatrixStride + ((cblocks - 1) * p.dstNzC0Stride + last_r * p.dstNzNStride) * c0 + c0;
    cannsim::cube_range("DataCopy", "dst", dst, 0, dst_last * sizeof(T), loc);
    const uint64_t src_last = last_nd * p.srcNdMatrixStride + last_r * p.srcDValue + p.dValue;
    cannsim::gm_bytes_check("DataCopy", src, 0, src_last * sizeof(T), loc);
    cannsim::cost::set_row_shape(double(p.ndNum) * p.nValue, double(p.dValue) * sizeof(T));
    if (!cannsim::count_only()) {
        T* d = reinterpret_cast<T*>(cannsim::arena_at(dst.addr_));
        const T* s = CANNSIM_CUBE_GM(src.base_);
        for (uint64_t nd = 0; nd < p.ndNum; ++nd)
            for (uint64_t r = 0; r < p.nValue; ++r) {
                const T* row = s + nd * p.srcNdMatrixStride + r * p.srcDValue;
                for (uint64_t cb = 0; cb < cblocks; ++cb) {
                    T* out = d + nd * p.dstNzMatrixStride + (cb * p.dstNzC0Stride + r * p.dstNzNStride) * c0;
                    const uint64_t n = std::min<uint64_t>(c0, p.dValue - cb * c0);
                    std::memcpy(out, row + cb * c0, n * sizeof(T));
                    if (n < c0) std::memset(static_cast<void*>(out + n), 0, (c0 - n) * sizeof(T));
                }
            }
    }
    cannsim::mark_written(dst.slot_, PIPE_MTE2);
    cannsim::record_cost(PIPE_MTE2, "DataCopy", cannsim::dtype_of<T>(), uint64_t(p.ndNum) * p.nValue * p.dValue,
                         uint64_t(p.ndNum) * p.nValue * p.dValue * sizeof(T));
}

// ---- LoadData, 2-D form: 512-byte fractals, L1 -> L0A/L0B (MTE1) ----
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p, CANNSIM_LOC) {
    (void)cannsim::mix::CubeUse<sizeof(T)>::registered;   // dependent: only a kernel that calls it registers
    cannsim::check_cube_dtype("LoadData", cannsim::dtype_of<T>(), loc);
    cannsim::check_position("LoadData", "src", src, {TPosition::A1, TPosition::B1}, loc);
    cannsim::check_position("LoadData", "dst", dst, {TPosition::A2, TPosition::B2}, loc);
    cannsim::check_cube_align("LoadData", "src", src, 32, loc);
    cannsim::check_cube_align("LoadData", "dst", dst, 512, loc);
    if (p.repeatTimes == 0)
        cannsim::report("L2.CUBE_PARAMS", cannsim::Severity::Error, "LoadData", loc.line(),
                        "LoadData2DParams.repeatTimes is 0; its range is [1, 255] (one 512 B fractal per repeat)");
    if (p.ifTranspose && sizeof(T) != 2)
        cannsim::report("L2.CUBE_PARAMS", cannsim::Severity::Error, "LoadData", loc.line(),
                        cannsim::fmt("LoadData with ifTranspose on %u-byte elements: the 2-D form transposes b16 "
                                     "fractals only", (unsigned)sizeof(T)));
    const int64_t n = p.repeatTimes;
    int64_t first = 0, last = 0;
    cannsim::load_span("LoadData", p, first, last, loc);
    if (n > 0) {
        cannsim::cube_range("LoadData", "src", src, uint64_t(first) * 512, uint64_t(last + 1) * 512, loc);
        cannsim::cube_range("LoadData", "dst", dst, 0, uint64_t((n - 1) * (1 + p.dstGap) + 1) * 512, loc);
    }
    if (!cannsim::count_only() && n > 0) {
        constexpr int e = 512 / sizeof(T);
        for (int64_t r = 0; r < n; ++r) {
            const int64_t idx = cannsim::load_index(p, r);
            const uint8_t* s = cannsim::arena_at(src.addr_ + uint64_t(idx) * 512);
            uint8_t* d = cannsim::arena_at(dst.addr_ + uint64_t(r * (1 + p.dstGap)) * 512);
            if (p.ifTranspose && sizeof(T) == 2) {
                T tmp[e];
                std::memcpy(tmp, s, 512);
                T* out = reinterpret_cast<T*>(d);
                for (int i = 0; i < 16; ++i)
                    for (int j = 0; j < 16; ++j) out[j * 16 + i] = tmp[i * 16 + j];
            } else {
                std::memmove(d, s, 512);
            }
        }
    }
    cannsim::mark_written(dst.slot_, PIPE_MTE1);
    cannsim::cost::note_cube(cannsim::mem_of_position(static_cast<int>(dst.pos_)) == cannsim::MEM_L0B ? 1 : 0);
    cannsim::record_cost(PIPE_MTE1, "LoadData", cannsim::dtype_of<T>(), uint64_t(n) * 512 / sizeof(T), uint64_t(n) * 512);
}

// ---- LoadDataWithTranspose: square blocks transposed on the way to L0A/L0B (MTE1) ----
// b8: two consecutive 16 x 32 fractals form a 32 x 32 square; b16: one 16 x 16 fractal is the square.
// The transposed square splits back into its fractals: the first at r * (1 + dstGap) fractals, the
// second dstFracGap fractals after the first's end. (b32: the 16 x 8 pairing is not emulated.)
template <typename T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2dTransposeParams& p,
                                  CANNSIM_LOC) {
    (void)cannsim::mix::CubeUse<sizeof(T)>::registered;   // dependent: only a kernel that calls it registers
    if constexpr (sizeof(T) == 4) {
        cannsim::unknown_api("LoadDataWithTranspose", loc.line());
        return;
    } else {
        cannsim::check_cube_dtype("LoadData", cannsim::dtype_of<T>(), loc);
        cannsim::check_position("LoadDataWithTranspose", "src", src, {TPosition::A1, TPosition::B1}, loc);
        cannsim::check_position("LoadDataWithTranspose", "dst", dst, {TPosition::A2, TPosition::B2}, loc);
        cannsim::check_cube_align("LoadDataWithTranspose", "src", src, 32, loc);
        cannsim::check_cube_align("LoadDataWithTranspose", "dst", dst, 512, loc);
        constexpr uint64_t R = sizeof(T) == 1 ? 32 : 16;          // square side, elements
        constexpr uint64_t sq = R * R * sizeof(T);                  // square bytes
        constexpr uint64_t fr = sq / 512;                           // fractals per square
        const int64_t n = p.repeatTimes;
        int64_t lo = 0, hi = 0;
        cannsim::load_span("LoadDataWithTranspose", p, lo, hi, loc);
        auto frac_at = [&](int64_t r, uint64_t f) -> uint64_t {   // destination fractal of square r, part f
            return uint64_t(r) * (1 + p.dstGap) + f * (1 + p.dstFracGap);
        };
        if (n > 0) {
            cannsim::cube_range("LoadDataWithTranspose", "src", src, uint64_t(lo) * sq, uint64_t(hi + 1) * sq, loc);
            cannsim::cube_range("LoadDataWithTranspose", "dst", dst, 0, (frac_at(n - 1, fr - 1) + 1) * 512, loc);
        }
        if (!cannsim::count_only())
            for (int64_t r = 0; r < n; ++r) {
                const int64_t idx = cannsim::load_index(p, r);
                T s[R * R];
                std::memcpy(s, cannsim::arena_at(src.addr_ + uint64_t(idx) * sq), sq);
                constexpr uint64_t rows = R / fr;                    // rows of the square per fractal
                for (uint64_t f = 0; f < fr; ++f) {
                    T* d = reinterpret_cast<T*>(cannsim::arena_at(dst.addr_ + frac_at(r, f) * 512));
                    for (uint64_t i = 0; i < rows; ++i)
                        for (uint64_t j = 0; j < R; ++j) d[i * R + j] = s[j * R + f * rows + i];
                }
            }
        cannsim::mark_written(dst.slot_, PIPE_MTE1);
        cannsim::cost::note_cube(cannsim::mem_of_position(static_cast<int>(dst.pos_)) == cannsim::MEM_L0B ? 1 : 0);
        cannsim::record_cost(PIPE_MTE1, "LoadDataWithTranspose", cannsim::dtype_of<T>(), uint64_t(n) * sq / sizeof(T),
                             uint64_t(n) * sq);
    }
}

// ---- Mmad: C (CO1, Nz) = [C or bias or 0] + A (A2) x B (B2) ----
template <typename T, typename U, typename S>
inline void mmad_impl(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                      const void* bias_row, bool bias_is_c2, const MmadParams& p, const cannsim::SrcLoc& loc) {
    (void)cannsim::mix::CubeUse<sizeof(T)>::registered;   // dependent: only a kernel that calls it registers
    cannsim::check_cube_dtype("Mmad", cannsim::dtype_of<U>(), loc);
    if (!cannsim::mmad_combo_ok<T, U, S>())
        cannsim::report("L2.MMAD_DTYPE", cannsim::Severity::Error, "Mmad", loc.line(),
                        cannsim::fmt("Mmad with fm %s, filter %s, dst %s is not a dtype combination of %s (arch %d): "
                                     "int8 x int8 -> int32, half x half -> float, bfloat16_t x bfloat16_t -> float, "
                                     "float x float -> float",
                                     cannsim::dtype_name(cannsim::dtype_of<U>()), cannsim::dtype_name(cannsim::dtype_of<S>()),
                                     cannsim::dtype_name(cannsim::dtype_of<T>()), cannsim::chip().name, cannsim::arch()));
    cannsim::check_position("Mmad", "dst", dst, {TPosition::CO1}, loc);
    cannsim::check_position("Mmad", "fm", fm, {TPosition::A2}, loc);
    cannsim::check_position("Mmad", "filter", filter, {TPosition::B2}, loc);
    cannsim::check_cube_align("Mmad", "dst", dst, 256 * sizeof(T), loc);
    cannsim::check_cube_align("Mmad", "fm", fm, 512, loc);
    cannsim::check_cube_align("Mmad", "filter", filter, 512, loc);
    if (p.m > 4095 || p.n > 4095 || p.k > 4095)
        cannsim::report("L2.CUBE_PARAMS", cannsim::Severity::Error, "Mmad", loc.line(),
                        cannsim::fmt("Mmad m=%u n=%u k=%u: each must be in [0, 4095]", p.m, p.n, p.k));
    constexpr uint64_t c0 = cannsim::c0_of<U>();
    const uint64_t mb = (p.m + 15) / 16, nb = (p.n + 15) / 16, kb = (p.k + c0 - 1) / c0;
    if (p.m == 0 || p.n == 0 || p.k == 0) { cannsim::record_cost(PIPE_M, "Mmad", cannsim::dtype_of<U>(), 0, 0); return; }
    cannsim::cube_range("Mmad", "fm", fm, 0, mb * kb * 512, loc);
    cannsim::cube_range("Mmad", "filter", filter, 0, kb * nb * 512, loc);
    cannsim::cube_range("Mmad", "dst", dst, 0, mb * nb * 256 * sizeof(T), loc);
    if (!cannsim::count_only()) {
        const U* A = reinterpret_cast<const U*>(cannsim::arena_at(fm.addr_));
        const S* B = reinterpret_cast<const S*>(cannsim::arena_at(filter.addr_));
        T* C = reinterpret_cast<T*>(cannsim::arena_at(dst.addr_));
        const bool a_nz = cannsim::arch() == 3510;
        using Acc = std::conditional_t<std::is_integral_v<T>, int32_t, float>;   // int32 wraps as L0C does
        // A and B as dense row-major (m x kpad) and (kpad x n) tiles of the accumulator type
        const uint64_t kpad = kb * c0, mpad = mb * 16;
        std::vector<Acc> a(mpad * kpad), b(kpad * nb * 16);
        for (uint64_t i = 0; i < mpad; ++i)
            for (uint64_t kk = 0; kk < kpad; ++kk) {
                const uint64_t off = a_nz ? cannsim::nz_offset(i, kk, mpad, c0) : cannsim::zz_offset(i, kk, kb, c0);
                a[i * kpad + kk] = static_cast<Acc>(cannsim::to_double(A[off]));
            }
        for (uint64_t kk = 0; kk < kpad; ++kk)
            for (uint64_t j = 0; j < nb * 16; ++j)
                b[kk * nb * 16 + j] = static_cast<Acc>(cannsim::to_double(B[cannsim::zn_offset(kk, j, nb, c0)]));
        std::vector<Acc> row(nb * 16);
        for (uint64_t i = 0; i < p.m; ++i) {
            for (uint64_t j = 0; j < nb * 16; ++j) {
                const uint64_t off = (j / 16) * mpad * 16 + i * 16 + j % 16;
                Acc init = 0;
                if (bias_row) init = bias_is_c2 ? static_cast<Acc>(reinterpret_cast<const T*>(bias_row)[j])
                                                : static_cast<Acc>(reinterpret_cast<const T*>(bias_row)[off]);
                else if (!p.cmatrixInitVal) init = static_cast<Acc>(C[off]);
                row[j] = init;
            }
            if constexpr (std::is_integral_v<Acc>) {
                for (uint64_t kk = 0; kk < p.k; ++kk) {
                    const Acc av = a[i * kpad + kk];
                    if (av != 0) cannsim::axpy(row.data(), av, &b[kk * nb * 16], p.n);
                }
            } else {
                // one fractal of K at a time: its products summed, then added to the fp32 accumulator
                // (UNVERIFIED: the reduction order inside the cube is not documented)
                std::vector<float> part(p.n);
                for (uint64_t k0 = 0; k0 < p.k; k0 += c0) {
                    std::fill(part.begin(), part.end(), 0.0f);
                    for (uint64_t kk = k0; kk < std::min<uint64_t>(p.k, k0 + c0); ++kk) {
                        const float av = a[i * kpad + kk];
                        if (av != 0) cannsim::axpy(part.data(), av, &b[kk * nb * 16], p.n);
                    }
                    cannsim::axpy(row.data(), 1.0f, part.data(), p.n);
                }
            }
            for (uint64_t j = 0; j < p.n; ++j) {
                const uint64_t off = (j / 16) * mpad * 16 + i * 16 + j % 16;
                C[off] = static_cast<T>(row[j]);
            }
        }
    }
    cannsim::mark_written(dst.slot_, PIPE_M);
    cannsim::cost::note_cube(cannsim::cube_kind<U>());
    const uint64_t macs = mb * 16 * nb * 16 * kb * c0;   // the cube works on whole fractals
    cannsim::record_cost(PIPE_M, "Mmad", cannsim::dtype_of<U>(), macs, 0);
}

template <typename T, typename U, typename S>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const MmadParams& p, CANNSIM_LOC) {
    if (p.cmatrixSource)
        cannsim::report("L2.CUBE_PARAMS", cannsim::Severity::Error, "Mmad", loc.line(),
                        "Mmad with cmatrixSource=true takes its initial C from C2 (the bias table): use the Mmad form "
                        "with a bias tensor at C2");
    mmad_impl(dst, fm, filter, nullptr, false, p, loc);
}

template <typename T, typename U, typename S, typename V>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const LocalTensor<V>& bias, const MmadParams& p, CANNSIM_LOC) {
    static_assert(sizeof(V) == sizeof(T), "Mmad bias: the bias type must be the result type (int32_t or float)");
    cannsim::check_position("Mmad", "bias", bias, {TPosition::C2, TPosition::CO1}, loc);
    const bool c2 = bias.pos_ == TPosition::C2;
    cannsim::check_cube_align("Mmad", "bias", bias, c2 ? 64 : 256 * sizeof(T), loc);
    const uint64_t nb = (p.n + 15) / 16, mb = (p.m + 15) / 16;
    cannsim::cube_range("Mmad", "bias", bias, 0, (c2 ? nb * 16 : mb * nb * 256) * sizeof(T), loc);
    mmad_impl(dst, fm, filter, cannsim::arena_at(bias.addr_), c2, p, loc);
}

// ---- Fixpipe, CO1 -> GM (FixpipeParamsV220) ----
template <typename T, typename U>
inline void fixpipe_impl(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t* vscale,
                         const FixpipeParamsV220& p, CO2Layout layout, const cannsim::SrcLoc& loc) {
    (void)cannsim::mix::CubeUse<sizeof(T)>::registered;   // dependent: only a kernel that calls it registers
    using Q = QuantMode_t;
    cannsim::check_cube_dtype("Fixpipe", cannsim::dtype_of<T>(), loc);
    cannsim::check_position("Fixpipe", "src", src, {TPosition::CO1}, loc);
    cannsim::check_cube_align("Fixpipe", "src", src, 64, loc);
    // legal (src, dst, quantPre) triples
    constexpr bool sf = std::is_same_v<U, float>, si = std::is_same_v<U, int32_t>;
    const Q q = p.quantPre;
    bool ok = false;
    if (q == Q::NoQuant) ok = std::is_same_v<T, U>;
    else if (q == Q::F322F16) ok = sf && std::is_same_v<T, half>;
    else if (q == Q::F322BF16) ok = sf && std::is_same_v<T, bfloat16_t>;
    else if (q == Q::DEQF16 || q == Q::VDEQF16) ok = si && std::is_same_v<T, half>;
    else if (q == Q::QF322B8_PRE || q == Q::VQF322B8_PRE) ok = sf && (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>);
    else if (q == Q::REQ8 || q == Q::VREQ8) ok = si && (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>);
    if (!ok)
        cannsim::report("L2.FIXPIPE_QUANT", cannsim::Severity::Error, "Fixpipe", loc.line(),
                        cannsim::fmt("Fixpipe from %s to %s with quantPre %d: no such conversion (NoQuant keeps the type; "
                                     "F322F16/F322BF16 float -> half/bfloat16_t; DEQF16/VDEQF16 int32_t -> half; "
                                     "QF322B8_PRE/VQF322B8_PRE float -> int8; REQ8/VREQ8 int32_t -> int8)",
                                     cannsim::dtype_name(cannsim::dtype_of<U>()), cannsim::dtype_name(cannsim::dtype_of<T>()),
                                     static_cast<int>(q)));
    const bool vector_q = q == Q::VDEQF16 || q == Q::VQF322B8_PRE || q == Q::VREQ8;
    if (vector_q && !vscale)
        cannsim::report("L2.FIXPIPE_QUANT", cannsim::Severity::Error, "Fixpipe", loc.line(),
                        "Fixpipe with a tensor quantPre (VDEQF16/VQF322B8_PRE/VREQ8) needs the cbufWorkspace form", true);
    if (p.nSize == 0 || p.mSize == 0 || p.nSize > 4095 || (layout == CO2Layout::NZ && p.nSize % 16 != 0) ||
        (layout == CO2Layout::ROW_MAJOR && p.mSize > 8192) || p.dstStride == 0)
        cannsim::report("L2.CUBE_PARAMS", cannsim::Severity::Error, "Fixpipe", loc.line(),
                        cannsim::fmt("Fixpipe nSize=%u mSize=%u dstStride=%u: nSize in [1, 4095] (a multiple of 16 "
                                     "without NZ2ND), mSize in [1, 8192] with NZ2ND, dstStride not 0",
                                     p.nSize, p.mSize, p.dstStride));
    if (p.mSize == 0 || p.nSize == 0) { cannsim::record_cost(PIPE_FIX, "Fixpipe", cannsim::dtype_of<T>(), 0, 0); return; }
    const uint64_t nd = std::max<uint16_t>(1, p.ndNum);
    const uint64_t nb = (p.nSize + 15) / 16;
    // source extent: nd matrices, srcStride rows of 16 between n-blocks
    const uint64_t src_nd_step = uint64_t(p.srcNdStride) * 256;
    const uint64_t src_last = (nd - 1) * src_nd_step + (nb - 1) * uint64_t(p.srcStride) * 16 + uint64_t(p.mSize) * 16;
    cannsim::cube_range("Fixpipe", "src", src, 0, src_last * sizeof(U), loc);
    auto dst_off = [&](uint64_t n_i, uint64_t mm, uint64_t nn) -> uint64_t {
        if (layout == CO2Layout::ROW_MAJOR) return n_i * p.dstNdStride + mm * p.dstStride + nn;
        if (layout == CO2Layout::COLUMN_MAJOR) return n_i * p.dstNdStride + nn * p.dstStride + mm;
        return (nn / 16) * uint64_t(p.dstStride) * (32 / sizeof(T)) + mm * 16 + nn % 16;   // NZ, dstStride in 32 B
    };
    const uint64_t dst_last = dst_off(nd - 1, p.mSize - 1, p.nSize - 1) + 1;
    cannsim::gm_bytes_check("Fixpipe", dst, 0, dst_last * sizeof(T), loc);
    cannsim::cost::set_row_shape(double(nd) * p.mSize, double(p.nSize) * sizeof(T));
    if (!cannsim::count_only()) {
        const U* s = reinterpret_cast<const U*>(cannsim::arena_at(src.addr_));
        T* d = CANNSIM_CUBE_GM(dst.base_);
        const float scalar = cannsim::deq_scale_of(p.deqScalar);
        for (uint64_t n_i = 0; n_i < nd; ++n_i)
            for (uint64_t mm = 0; mm < p.mSize; ++mm)
                for (uint64_t nn = 0; nn < p.nSize; ++nn) {
                    const U v = s[n_i * src_nd_step + (nn / 16) * uint64_t(p.srcStride) * 16 + mm * 16 + nn % 16];
                    float f = static_cast<float>(v);
                    if (q == Q::DEQF16 || q == Q::QF322B8_PRE || q == Q::REQ8) f *= scalar;
                    if (vector_q && vscale) f *= cannsim::deq_scale_of(vscale[nn]);
                    if (p.reluEn && f < 0) f = 0;
                    T out;
                    if constexpr (std::is_same_v<T, U>) {
                        out = (p.reluEn && v < U(0)) ? U(0) : v;
                    } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
                        const float lo = std::is_same_v<T, int8_t> ? -128.f : 0.f, hi = std::is_same_v<T, int8_t> ? 127.f : 255.f;
                        out = static_cast<T>(std::nearbyint(std::min(hi, std::max(lo, f))));
                    } else {
                        out = static_cast<T>(f);   // half/bfloat16_t: round to nearest even
                    }
                    d[dst_off(n_i, mm, nn)] = out;
                }
    }
    cannsim::record_cost(PIPE_FIX, "Fixpipe", cannsim::dtype_of<T>(), nd * p.mSize * p.nSize, nd * p.mSize * p.nSize * sizeof(T));
}

template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p, CANNSIM_LOC) {
    fixpipe_impl(dst, src, nullptr, p, config.format, loc);
}

template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR, typename S = uint64_t,
          typename std::enable_if<std::is_same<S, uint64_t>::value, bool>::type = true>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const LocalTensor<S>& cbufWorkspace,
                    const FixpipeParamsV220& p, CANNSIM_LOC) {
    cannsim::check_position("Fixpipe", "cbufWorkspace", cbufWorkspace, {TPosition::A1, TPosition::C1}, loc);
    cannsim::cube_range("Fixpipe", "cbufWorkspace", cbufWorkspace, 0, uint64_t(p.nSize) * 8, loc);
    fixpipe_impl(dst, src, reinterpret_cast<const uint64_t*>(cannsim::arena_at(cbufWorkspace.addr_)), p, config.format, loc);
}

}  // namespace AscendC

namespace cannsim::mix {

// The processes of one launch a group flag reaches: every core of a type (mode 0) or the AIVs of
// this core (mode 1).
inline std::vector<uint32_t> same_type_procs(bool whole_launch) {
    const Identity& id = self();
    std::vector<uint32_t> out;
    const int r = std::max(1, id.ratio);
    for (int64_t b = whole_launch ? 0 : id.block; b < (whole_launch ? id.blocks : id.block + 1); ++b) {
        if (id.ratio < 0) out.push_back(static_cast<uint32_t>(b));
        else if (id.core == AIC) out.push_back(proc_of(b, AIC, 0));
        else for (int sb = 0; sb < r; ++sb) out.push_back(proc_of(b, AIV, sb));
    }
    return out;
}

inline bool check_cross_core(const char* api, int mode, int flag, const SrcLoc& loc) {
    const Identity& id = self();
    if (flag < 0 || flag > 10) {
        report("L2.CROSS_CORE_FLAG", Severity::Error, api, loc.line(),
               fmt("%s flagId %d: A2/A3 cross-core flags are 0..10", api, flag));
        return false;
    }
    if (mode != 0 && mode != 1 && mode != 2) {
        report("L2.CROSS_CORE_FLAG", Severity::Error, api, loc.line(),
               fmt("%s modeId %d: the modes are 0 (all cores of a type), 1 (the AIVs of a core), 2 (AIC <-> AIV)%s",
                   api, mode, mode == 4 ? "; mode 4 is Atlas 350 only" : ""));
        return false;
    }
    if ((mode == 1 || mode == 2) && id.ratio <= 0) {
        report("L2.CROSS_CORE_FLAG", Severity::Error, api, loc.line(),
               fmt("%s mode %d synchronises an AIC with its AIVs, but the kernel is not a MIX kernel with AIVs "
                   "(KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2))", api, mode));
        return false;
    }
    if (mode == 1 && id.core == AIC) {
        report("L2.CROSS_CORE_FLAG", Severity::Error, api, loc.line(), fmt("%s mode 1 is among the AIVs of a core; called on the AIC", api));
        return false;
    }
    return true;
}

// A set: mode 2 from the AIC reaches each of its AIVs; from an AIV it counts towards the AIC's flag,
// which is delivered once every AIV has set it; modes 1 and 0 deliver to the whole group once every
// member has set.
inline void cross_core_set(int mode, int flag, const SrcLoc& loc) {
    if (!check_cross_core("CrossCoreSetFlag", mode, flag, loc)) return;
    record_cost(PIPE_S, "CrossCoreSetFlag", 0, 0, 0);
    Shared* sh = shared();
    const Identity& id = self();
    if (!sh || id.proc >= sh->procs) return;
    auto deliver = [&](const std::vector<uint32_t>& to) { for (uint32_t p : to) if (p < sh->procs) sh->inbox[p][flag].fetch_add(1); };
    if (mode == 2 && id.core == AIC) {
        for (int sb = 0; sb < id.ratio; ++sb) deliver({proc_of(id.block, AIV, sb)});
    } else if (mode == 2) {
        const uint32_t aic = proc_of(id.block, AIC, 0);
        if ((sh->group2[aic][flag].fetch_add(1) + 1) % static_cast<uint32_t>(id.ratio) == 0) deliver({aic});
    } else {
        const std::vector<uint32_t> group = same_type_procs(mode == 0);
        std::atomic<uint32_t>& g = mode == 1 ? sh->group1[group[0]][flag] : sh->group0[id.core == AIC][flag];
        if ((g.fetch_add(1) + 1) % static_cast<uint32_t>(group.size()) == 0) deliver(group);
    }
}

// Every other core of the launch has ended or is itself blocked in a wait nobody will satisfy.
inline bool nobody_can_set(const Shared* sh, uint32_t me) {
    for (uint32_t p = 0; p < sh->procs; ++p) {
        if (p == me || sh->ended[p].load()) continue;
        const uint32_t w = sh->waiting[p].load();
        if (w == 0 || sh->inbox[p][w - 1].load() >= sh->wait_target[p].load()) return false;
    }
    return true;
}

// A wait consumes one delivered flag of this core (whatever mode set it); with none to come (every
// other core of the launch ended or blocked) the chip would hang.
inline void cross_core_wait(int mode, int flag, const SrcLoc& loc) {
    if (!check_cross_core("CrossCoreWaitFlag", 0, flag, loc)) return;
    (void)mode;
    record_cost(PIPE_S, "CrossCoreWaitFlag", 0, 0, 0);
    static uint32_t consumed[kFlags] = {};
    const uint32_t target = ++consumed[flag];
    Shared* sh = shared();
    const uint32_t me = self().proc;
    if (count_only() || !sh || me >= sh->procs) return;
    sh->wait_target[me].store(target);
    sh->waiting[me].store(static_cast<uint32_t>(flag) + 1);
    int stuck = 0;
    while (sh->inbox[me][flag].load() < target) {
        stuck = nobody_can_set(sh, me) ? stuck + 1 : 0;
        if (stuck >= 20)   // stable over 20 polls (1 ms): not a core between its wake-up and its next set
            report("L2.CROSS_CORE_FLAG", Severity::Error, "CrossCoreWaitFlag", loc.line(),
                   fmt("CrossCoreWaitFlag(%d) waits for flag number %u but only %u were set, and every other core has "
                       "ended or waits too: on the chip the kernel hangs (each wait needs its CrossCoreSetFlag)",
                       flag, target, sh->inbox[me][flag].load()),
                   true);
        pause_briefly();
    }
    sh->waiting[me].store(0);
}

}  // namespace cannsim::mix

namespace AscendC {

template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId, CANNSIM_LOC) {
    (void)cannsim::mix::CrossCoreUse<modeId>::registered;
    cannsim::mix::cross_core_set(modeId, flagId, loc);
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId, CANNSIM_LOC) {
    (void)cannsim::mix::CrossCoreUse<modeId>::registered;
    cannsim::mix::cross_core_wait(modeId, flagId, loc);
}

}  // namespace AscendC

using AscendC::QuantMode_t;
