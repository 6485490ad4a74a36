// Shared machinery of the vector APIs: operand geometry, count form vs mask/repeat form,
// the mask register, the checks every vector call runs, and element load/store.
#pragma once
#include <algorithm>
#include "pipe.h"
#include "dtype_table.h"

namespace cannsim {

template <typename T> inline T ld(const uint8_t* p) { T v; std::memcpy(&v, p, sizeof(T)); return v; }
template <typename T> inline void st(uint8_t* p, T v) { std::memcpy(p, &v, sizeof(T)); }

// The per-element loops of the count form are compiled optimised and vectorised whatever the
// candidate's -O level (g++): element by element IEEE arithmetic without contraction or fast-math,
// so the results are those of the plain loop. The per-lane functions they call are always inlined.
#if defined(__GNUC__) && !defined(__clang__)
#define CANNSIM_HOT_LOOP __attribute__((optimize("O2", "tree-vectorize")))
#else
#define CANNSIM_HOT_LOOP
#endif
#define CANNSIM_LANE __attribute__((always_inline))

// Arithmetic domain of an element type: integers in int64, floating types in float.
template <typename T> using Calc = std::conditional_t<std::is_integral_v<T>, int64_t, float>;
template <typename T> CANNSIM_LANE inline Calc<T> to_calc(T v) {
    if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(v);
    else return static_cast<float>(v);
}
template <typename T> CANNSIM_LANE inline T from_calc(Calc<T> v) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(v);
    else return T(v);
}

// Check `dtype` against one API x dtype x arch row (rows of dtype_table.h or of a family header).
inline void check_dtype_row(const char* api, const ApiDtypes* r, uint32_t dtype, const SrcLoc& loc) {
    if (!r) return;
    const uint32_t m = api_dtype_mask(*r);
    if (m == 0) {
        report("L4.API_UNKNOWN", Severity::Error, api, loc.line(),
               fmt("%s is not provided on arch %d (%s)", api, arch(), chip().name));
        return;
    }
    if (m & dtype) return;
    std::string ok;
    for (uint32_t b = 1; b < DT_OTHER; b <<= 1)
        if (m & b) { if (!ok.empty()) ok += ", "; ok += dtype_name(b); }
    report("L2.DTYPE_UNSUPPORTED", Severity::Error, api, loc.line(),
           fmt("%s does not support %s on arch %d (%s); supported: %s", api, dtype_name(dtype), arch(),
               chip().name, ok.c_str()));
}

inline void check_dtype(const char* api, uint32_t dtype, const SrcLoc& loc) {
    check_dtype_row(api, find_api_dtypes(api), dtype, loc);
}

// The row of `api` in a family header's own table.
template <size_t N> inline const ApiDtypes* row_of(const ApiDtypes (&table)[N], const char* api) {
    for (const auto& r : table) if (std::strcmp(r.api, api) == 0) return &r;
    return nullptr;
}

// One UB operand of a vector instruction: where it starts and how it is strided.
struct Operand {
    const char* name;
    uint64_t addr;
    int slot;
    uint32_t gen;
    uint32_t esize;     // bytes per element
    uint32_t blk = 1;   // data-block stride (blocks of 32 B) inside a repeat
    uint32_t rep = 8;   // repeat stride (blocks of 32 B) between repeats
    bool is_dst = false;
};

template <typename T>
inline Operand operand(const char* name, const AscendC::LocalTensor<T>& t, bool is_dst = false) {
    return Operand{name, t.addr_, t.slot_, t.gen_, static_cast<uint32_t>(sizeof(T)), 1, 8, is_dst};
}

// Which lanes a call processes: the first `count` elements (count form) or `repeat` repeats with a
// lane mask (mask form; counter mode = `count` elements spread over repeats).
struct Lanes {
    bool count_form = true;
    uint64_t count = 0;
    bool counter_mode = false;
    int repeat = 0;
    int lanes_per_repeat = 0;
    uint64_t lo = 0, hi = 0;

    bool active(int r, int e) const {
        if (counter_mode) return static_cast<uint64_t>(r) * lanes_per_repeat + e < count;
        return e < 64 ? ((lo >> e) & 1u) : ((hi >> (e - 64)) & 1u);
    }
};

inline uint64_t element_index(const Operand& o, const Lanes& L, int r, int e) {
    if (L.count_form) return static_cast<uint64_t>(e);
    const uint32_t epb = 32 / o.esize;
    return static_cast<uint64_t>(r) * o.rep * epb + static_cast<uint64_t>(e / epb) * o.blk * epb + e % epb;
}

inline int max_mask_lanes(uint32_t esize) { return std::min<int>(256 / static_cast<int>(esize), 128); }

inline Lanes count_lanes(int64_t count) {
    Lanes L; L.count_form = true; L.count = count > 0 ? static_cast<uint64_t>(count) : 0; return L;
}

inline int checked_repeat(const char* api, int64_t repeat, bool uint8_param, const SrcLoc& loc) {
    if (repeat > 255) {
        report("L2.REPEAT_LIMIT", Severity::Error, api, loc.line(),
               fmt("%s repeatTime %lld exceeds the limit 255 (8-bit field)%s", api, (long long)repeat,
                   uint8_param ? "; the chip silently keeps the low 8 bits" : ""));
        return uint8_param ? static_cast<int>(repeat & 0xff) : static_cast<int>(repeat);
    }
    return repeat < 0 ? 0 : static_cast<int>(repeat);
}

// Lanes of a mask-form call with a continuous mask.
inline Lanes mask_lanes(const char* api, uint64_t mask, int64_t repeat, bool isSetMask, uint32_t esize,
                        bool uint8_repeat, const SrcLoc& loc) {
    auto& s = detail::state();
    Lanes L; L.count_form = false;
    const int maxl = max_mask_lanes(esize);
    L.lanes_per_repeat = 256 / static_cast<int>(esize);
    if (s.mask_counter_mode) {
        L.counter_mode = true;
        L.count = isSetMask ? mask : s.mask_lo;
        L.lanes_per_repeat = maxl;
        L.repeat = static_cast<int>((L.count + maxl - 1) / maxl);
        return L;
    }
    L.repeat = checked_repeat(api, repeat, uint8_repeat, loc);
    if (!isSetMask) { L.lo = s.mask_lo; L.hi = s.mask_hi; return L; }
    if (mask < 1 || mask > static_cast<uint64_t>(maxl)) {
        report("L2.MASK_RANGE", Severity::Error, api, loc.line(),
               fmt("%s continuous mask %llu is outside 1..%d for %u-byte elements", api, (unsigned long long)mask,
                   maxl, esize));
        mask = std::min<uint64_t>(mask, static_cast<uint64_t>(maxl));
    }
    L.lo = mask >= 64 ? ~0ull : ((1ull << mask) - 1);
    L.hi = mask > 64 ? (mask >= 128 ? ~0ull : ((1ull << (mask - 64)) - 1)) : 0;
    return L;
}

// Lanes of a mask-form call with a bit mask: mask[0] = lanes 0..63, mask[1] = lanes 64..127.
inline Lanes mask_lanes(const char* api, const uint64_t mask[], int64_t repeat, bool isSetMask, uint32_t esize,
                        bool uint8_repeat, const SrcLoc& loc) {
    auto& s = detail::state();
    if (s.mask_counter_mode) return mask_lanes(api, mask[0], repeat, isSetMask, esize, uint8_repeat, loc);
    Lanes L; L.count_form = false;
    L.lanes_per_repeat = 256 / static_cast<int>(esize);
    L.repeat = checked_repeat(api, repeat, uint8_repeat, loc);
    if (!isSetMask) { L.lo = s.mask_lo; L.hi = s.mask_hi; return L; }
    L.lo = mask[0];
    L.hi = esize == 2 || esize == 1 ? mask[1] : 0;
    if (L.lo == 0 && L.hi == 0)
        report("L2.MASK_RANGE", Severity::Error, api, loc.line(),
               esize >= 4 ? fmt("%s bit mask mask[0] is 0 for %u-byte elements: no lane is active", api, esize)
                          : fmt("%s bit mask words mask[0] and mask[1] are both 0: no lane is active", api));
    return L;
}

// Run the shared checks for a call; returns the number of lanes that will be touched.
inline uint64_t check_operands(const char* api, Operand* ops, int n, const Lanes& L, const SrcLoc& loc) {
    for (int i = 0; i < n; ++i) {
        check_live(api, ops[i].slot, ops[i].gen, loc);
        check_align32(api, ops[i].name, ops[i].addr, loc);
        cost::note_operand(ops[i].slot, ops[i].is_dst);
    }
    uint64_t lanes = 0;
    if (L.count_form) {
        lanes = L.count;
        for (int i = 0; i < n; ++i)
            check_ub_range(api, ops[i].name, ops[i].slot, ops[i].addr, ops[i].addr + L.count * ops[i].esize, loc);
        return lanes;
    }
    // Mask form. Strides are unsigned, so an operand's highest index lies in the last repeat with an
    // active lane; the lanes of one or two repeats give it without visiting every lane.
    uint64_t maxidx[4] = {0, 0, 0, 0};
    bool any = false;
    const uint64_t lpr = static_cast<uint64_t>(std::max(L.lanes_per_repeat, 0));
    const uint64_t reps = static_cast<uint64_t>(std::max(L.repeat, 0));
    auto widest = [&](int i, uint64_t r, uint64_t lane_end) {   // highest index of lanes [0, lane_end) in repeat r
        for (uint64_t e = 0; e < lane_end; ++e)
            if (L.counter_mode || L.active(0, static_cast<int>(e)))
                maxidx[i] = std::max(maxidx[i], element_index(ops[i], L, static_cast<int>(r), static_cast<int>(e)));
    };
    if (L.counter_mode) {                 // lanes k = r * lpr + e below count are active
        const uint64_t k = std::min<uint64_t>(L.count, reps * lpr);
        if (k > 0) {
            any = true; lanes = k;
            const uint64_t last = (k - 1) / lpr;
            for (int i = 0; i < n; ++i) {
                widest(i, last, k - last * lpr);
                if (last > 0) widest(i, last - 1, lpr);
            }
        }
    } else {                              // the same lanes are active in every repeat
        uint64_t per = 0;
        for (uint64_t e = 0; e < lpr; ++e) per += L.active(0, static_cast<int>(e)) ? 1 : 0;
        if (per > 0 && reps > 0) {
            any = true; lanes = per * reps;
            for (int i = 0; i < n; ++i) widest(i, reps - 1, lpr);
        }
    }
    if (any)
        for (int i = 0; i < n; ++i)
            check_ub_range(api, ops[i].name, ops[i].slot, ops[i].addr, ops[i].addr + (maxidx[i] + 1) * ops[i].esize,
                           loc);
    return lanes;
}

// Visit every active lane: f(index of operand 0, index of operand 1, ...).
template <int N, typename F>
inline void for_lanes(const Operand* ops, const Lanes& L, F&& f) {
    if (L.count_form) {
        for (uint64_t k = 0; k < L.count; ++k) {
            if constexpr (N == 1) f(k);
            else if constexpr (N == 2) f(k, k);
            else f(k, k, k);
        }
        return;
    }
    for (int r = 0; r < L.repeat; ++r)
        for (int e = 0; e < L.lanes_per_repeat; ++e) {
            if (!L.active(r, e)) continue;
            if constexpr (N == 1) f(element_index(ops[0], L, r, e));
            else if constexpr (N == 2) f(element_index(ops[0], L, r, e), element_index(ops[1], L, r, e));
            else f(element_index(ops[0], L, r, e), element_index(ops[1], L, r, e), element_index(ops[2], L, r, e));
        }
}

inline uint8_t* ub_at(uint64_t addr) { return detail::ub_real() + addr; }

}  // namespace cannsim

namespace AscendC {

// Mask register control (normal mode: lane bits; counter mode: element count).
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow) {
    auto& s = cannsim::detail::state();
    if (mode == MaskMode::COUNTER || s.mask_counter_mode) { s.mask_lo = maskLow; s.mask_hi = 0; return; }
    s.mask_lo = maskLow; s.mask_hi = maskHigh;
}
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len) {
    auto& s = cannsim::detail::state();
    if (mode == MaskMode::COUNTER || s.mask_counter_mode) { s.mask_lo = static_cast<uint64_t>(len); s.mask_hi = 0; return; }
    const uint64_t m = static_cast<uint64_t>(len);
    s.mask_lo = m >= 64 ? ~0ull : ((1ull << m) - 1);
    s.mask_hi = m > 64 ? (m >= 128 ? ~0ull : ((1ull << (m - 64)) - 1)) : 0;
}
inline void SetMaskCount() { cannsim::detail::state().mask_counter_mode = true; }
inline void SetMaskNorm() { cannsim::detail::state().mask_counter_mode = false; }
inline void ResetMask() { auto& s = cannsim::detail::state(); s.mask_lo = ~0ull; s.mask_hi = ~0ull; }

}  // namespace AscendC
