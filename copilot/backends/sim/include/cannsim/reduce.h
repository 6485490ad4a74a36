// Reductions: ReduceSum/Max/Min (count and mask forms, shared tmp buffer), WholeReduce* and
// BlockReduce*, and their newer names ReduceRepeat / ReduceDataBlock.
#pragma once
#include "vec_engine.h"

namespace cannsim {

// Sum in the element type: pairwise (binary tree) inside a repeat, each add rounded to T.
template <typename T>
inline T tree_sum(std::vector<T>& v) {
    if (v.empty()) return T(0);
    size_t n = v.size();
    while (n > 1) {
        size_t m = 0;
        for (size_t i = 0; i + 1 < n; i += 2) v[m++] = from_calc<T>(to_calc(v[i]) + to_calc(v[i + 1]));
        if (n % 2) v[m++] = v[n - 1];
        n = m;
    }
    return v[0];
}

template <typename T> inline T index_as(uint32_t idx) {
    T out{};
    if constexpr (sizeof(T) == 2) { const uint16_t b = static_cast<uint16_t>(idx); std::memcpy(&out, &b, 2); }
    else if constexpr (sizeof(T) == 4) std::memcpy(&out, &idx, 4);
    return out;
}

// Minimum shared tmp buffer, in elements, following the ReduceSum/ReduceMax docs
// ("关键特性说明"): firstMaxRepeat = repeatTime (mask form) or count / elementsPerRepeat
// (count form, at least 1); each round's output is rounded up to a 32 B block.
inline uint64_t round_up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

inline uint64_t reduce_tmp_elements(bool is_sum, bool count_form, uint64_t first_max_repeat, bool cal_index,
                                    uint32_t esize) {
    const uint64_t epb = 32 / esize, epr = 256 / esize;
    if (is_sum) {
        if (count_form && arch() == 2201) return 0;   // A2/A3 count form sums repeats in order, no tmp
        return round_up(first_max_repeat, epb);
    }
    uint64_t out = first_max_repeat * 2;
    uint64_t total = round_up(out, epb);
    if (!cal_index) return total;
    while (out > 2) {
        out = (out + epr - 1) / epr * 2;
        total += round_up(out, epb);
    }
    return total;
}

template <typename T>
inline void check_tmp(const char* api, const AscendC::LocalTensor<T>& tmp, uint64_t need, const SrcLoc& loc) {
    if (need == 0) return;
    const uint64_t have = tmp.size_;
    if (have < need)
        report("L2.TMP_BUFFER", Severity::Error, api, loc.line(),
               fmt("%s sharedTmpBuffer holds %llu elements (%llu B) but needs %llu (%llu B) by the documented "
                   "rule (firstMaxRepeat outputs per round, each rounded up to 32 B)",
                   api, (unsigned long long)have, (unsigned long long)(have * sizeof(T)), (unsigned long long)need,
                   (unsigned long long)(need * sizeof(T))));
}

enum class RKind { Sum, Max, Min };

// The special register GetReduceRepeatSumSpr reads: the last count-form ReduceSum result.
inline double& reduce_sum_spr() { static double v = 0; return v; }

// Reduce the active lanes of src to dst[0] (and dst[1] = index for Max/Min with calIndex).
template <typename T>
inline void reduce_to_scalar(const char* api, RKind kind, const AscendC::LocalTensor<T>& dst,
                             const AscendC::LocalTensor<T>& src, const Lanes& L, uint32_t src_rep_stride,
                             bool cal_index, const SrcLoc& loc) {
    check_dtype(api, dtype_of<T>(), loc);
    Operand ops[1] = {operand("src", src)};
    ops[0].rep = src_rep_stride;
    const uint64_t lanes = check_operands(api, ops, 1, L, loc);
    check_live(api, dst.slot_, dst.gen_, loc);
    const uint32_t nout = (kind != RKind::Sum && cal_index) ? 2 : 1;
    check_ub_range(api, "dst", dst.slot_, dst.addr_, dst.addr_ + nout * sizeof(T), loc);
    if (lanes == 0) return;   // documented: count/repeat 0 is a no-op
    if (count_only()) {
        mark_written(dst.slot_, PIPE_V);
        record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T));
        return;
    }
    const uint8_t* s = ub_at(src.addr_);
    const int epr = 256 / static_cast<int>(sizeof(T));
    T result{};
    uint64_t best_idx = 0;
    if (kind == RKind::Sum) {
        std::vector<T> chunk, partial;
        int cur_rep = -1;
        auto flush = [&]() { if (!chunk.empty()) { partial.push_back(tree_sum(chunk)); chunk.clear(); } };
        if (L.count_form) {
            for (uint64_t k = 0; k < L.count; ++k) {
                if (static_cast<int>(k / epr) != cur_rep) { flush(); cur_rep = static_cast<int>(k / epr); }
                chunk.push_back(ld<T>(s + k * sizeof(T)));
            }
        } else {
            for (int r = 0; r < L.repeat; ++r) {
                flush();
                for (int e = 0; e < L.lanes_per_repeat; ++e)
                    if (L.active(r, e)) chunk.push_back(ld<T>(s + element_index(ops[0], L, r, e) * sizeof(T)));
            }
        }
        flush();
        if (L.count_form && arch() == 2201) {        // repeats accumulated in order
            Calc<T> acc = to_calc(partial[0]);
            for (size_t i = 1; i < partial.size(); ++i) acc = to_calc(from_calc<T>(acc + to_calc(partial[i])));
            result = from_calc<T>(acc);
        } else {
            result = tree_sum(partial);
        }
    } else {
        bool first = true;
        Calc<T> best{};
        uint64_t pos = 0;
        for_lanes<1>(ops, L, [&](uint64_t i) {
            const Calc<T> v = to_calc(ld<T>(s + i * sizeof(T)));
            // A NaN wins and stays (the first one's index), as Max/Min propagate NaN element-wise.
            const bool better = v != v ? best == best : (best == best && (kind == RKind::Max ? v > best : v < best));
            if (first || better) { best = v; best_idx = pos; first = false; }
            ++pos;
        });
        result = from_calc<T>(best);
    }
    uint8_t* d = ub_at(dst.addr_);
    st<T>(d, result);
    if (kind == RKind::Sum && L.count_form) reduce_sum_spr() = static_cast<double>(to_calc(result));
    if (kind != RKind::Sum && cal_index) st<T>(d + sizeof(T), index_as<T>(static_cast<uint32_t>(best_idx)));
    mark_written(dst.slot_, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T));
}

// One result per repeat (WholeReduce / ReduceRepeat): dst[r * dstRepStride] (pairs for Max/Min).
template <typename T>
inline void reduce_per_repeat(const char* api, RKind kind, const AscendC::LocalTensor<T>& dst,
                              const AscendC::LocalTensor<T>& src, const Lanes& L, int32_t dstRepStride,
                              int32_t srcBlkStride, int32_t srcRepStride, AscendC::ReduceOrder order,
                              const SrcLoc& loc) {
    using O = AscendC::ReduceOrder;
    check_dtype(api, dtype_of<T>(), loc);
    Operand ops[1] = {operand("src", src)};
    ops[0].blk = static_cast<uint32_t>(srcBlkStride); ops[0].rep = static_cast<uint32_t>(srcRepStride);
    const uint64_t lanes = check_operands(api, ops, 1, L, loc);
    check_live(api, dst.slot_, dst.gen_, loc);
    const bool pair = kind != RKind::Sum && (order == O::ORDER_VALUE_INDEX || order == O::ORDER_INDEX_VALUE);
    const uint32_t per = pair ? 2 : 1;
    if (L.repeat > 0)
        check_ub_range(api, "dst", dst.slot_, dst.addr_,
                       dst.addr_ + ((uint64_t)(L.repeat - 1) * dstRepStride * per + per) * sizeof(T), loc);
    const uint8_t* s = ub_at(src.addr_);
    uint8_t* d = ub_at(dst.addr_);
    for (int r = 0; r < L.repeat && !count_only(); ++r) {
        std::vector<T> vals;
        Calc<T> best{}; uint32_t bi = 0; bool first = true;
        for (int e = 0; e < L.lanes_per_repeat; ++e) {
            if (!L.active(r, e)) continue;
            const T v = ld<T>(s + element_index(ops[0], L, r, e) * sizeof(T));
            if (kind == RKind::Sum) vals.push_back(v);
            else {
                const Calc<T> c = to_calc(v);
                if (first || (kind == RKind::Max ? c > best : c < best)) { best = c; bi = static_cast<uint32_t>(e); first = false; }
            }
        }
        uint8_t* out = d + (uint64_t)r * dstRepStride * per * sizeof(T);
        if (kind == RKind::Sum) { st<T>(out, tree_sum(vals)); continue; }
        const T value = from_calc<T>(best), index = index_as<T>(bi);
        switch (order) {
            case O::ORDER_VALUE_INDEX: st<T>(out, value); st<T>(out + sizeof(T), index); break;
            case O::ORDER_INDEX_VALUE: st<T>(out, index); st<T>(out + sizeof(T), value); break;
            case O::ORDER_ONLY_VALUE: st<T>(out, value); break;
            case O::ORDER_ONLY_INDEX: st<T>(out, index); break;
        }
    }
    mark_written(dst.slot_, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T));
}

// One result per 32 B block (BlockReduce / ReduceDataBlock): 8 results per repeat.
template <typename T>
inline void reduce_per_block(const char* api, RKind kind, const AscendC::LocalTensor<T>& dst,
                             const AscendC::LocalTensor<T>& src, const Lanes& L, int32_t dstRepStride,
                             int32_t srcBlkStride, int32_t srcRepStride, const SrcLoc& loc) {
    check_dtype(api, dtype_of<T>(), loc);
    Operand ops[1] = {operand("src", src)};
    ops[0].blk = static_cast<uint32_t>(srcBlkStride); ops[0].rep = static_cast<uint32_t>(srcRepStride);
    const uint64_t lanes = check_operands(api, ops, 1, L, loc);
    check_live(api, dst.slot_, dst.gen_, loc);
    check_align32(api, "dst", dst.addr_, loc);
    const uint64_t epb = 32 / sizeof(T);
    if (L.repeat > 0)
        check_ub_range(api, "dst", dst.slot_, dst.addr_,
                       dst.addr_ + ((uint64_t)(L.repeat - 1) * dstRepStride * epb + 8) * sizeof(T), loc);
    const uint8_t* s = ub_at(src.addr_);
    uint8_t* d = ub_at(dst.addr_);
    for (int r = 0; r < L.repeat && !count_only(); ++r) {
        for (int b = 0; b < 8; ++b) {
            std::vector<T> vals;
            for (int j = 0; j < static_cast<int>(epb); ++j) {
                const int e = b * static_cast<int>(epb) + j;
                if (e < L.lanes_per_repeat && L.active(r, e)) vals.push_back(ld<T>(s + element_index(ops[0], L, r, e) * sizeof(T)));
            }
            T res{};
            if (kind == RKind::Sum) res = tree_sum(vals);
            else if (!vals.empty()) {
                Calc<T> best = to_calc(vals[0]);
                for (auto& v : vals) { const Calc<T> c = to_calc(v); if (kind == RKind::Max ? c > best : c < best) best = c; }
                res = from_calc<T>(best);
            }
            st<T>(d + ((uint64_t)r * dstRepStride * epb + b) * sizeof(T), res);
        }
    }
    mark_written(dst.slot_, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T));
}

}  // namespace cannsim

namespace AscendC {

// ---- ReduceSum / ReduceMax / ReduceMin ----
template <typename T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, CANNSIM_LOC) {
    const uint64_t epr = 256 / sizeof(T);
    const uint64_t fmr = count > 0 ? std::max<uint64_t>(1, count / epr) : 1;
    cannsim::check_tmp("ReduceSum", sharedTmpBuffer, cannsim::reduce_tmp_elements(true, true, fmr, false, sizeof(T)), loc);
    cannsim::reduce_to_scalar("ReduceSum", cannsim::RKind::Sum, dst, src, cannsim::count_lanes(count), 8, false, loc);
}

#define CANNSIM_REDUCE_MASK_FORMS(NAME, KIND, IS_SUM)                                                           \
    template <typename T, bool isSetMask = true>                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer, \
                     const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride,                  \
                     bool calIndex = false, CANNSIM_LOC) {                                                      \
        auto L = cannsim::mask_lanes(#NAME, static_cast<uint64_t>(mask), repeatTime, isSetMask, sizeof(T), false, loc); \
        cannsim::check_tmp(#NAME, sharedTmpBuffer,                                                              \
                           cannsim::reduce_tmp_elements(IS_SUM, false, L.repeat, calIndex, sizeof(T)), loc);    \
        cannsim::reduce_to_scalar(#NAME, KIND, dst, src, L, srcRepStride, calIndex, loc);                        \
    }                                                                                                           \
    template <typename T, bool isSetMask = true>                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer, \
                     const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride,               \
                     bool calIndex = false, CANNSIM_LOC) {                                                      \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), false, loc);                \
        cannsim::check_tmp(#NAME, sharedTmpBuffer,                                                              \
                           cannsim::reduce_tmp_elements(IS_SUM, false, L.repeat, calIndex, sizeof(T)), loc);    \
        cannsim::reduce_to_scalar(#NAME, KIND, dst, src, L, srcRepStride, calIndex, loc);                        \
    }

CANNSIM_REDUCE_MASK_FORMS(ReduceSum, cannsim::RKind::Sum, true)
CANNSIM_REDUCE_MASK_FORMS(ReduceMax, cannsim::RKind::Max, false)
CANNSIM_REDUCE_MASK_FORMS(ReduceMin, cannsim::RKind::Min, false)

template <typename T, bool isSetMask = true>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false, CANNSIM_LOC) {
    const uint64_t fmr = count > 0 ? std::max<uint64_t>(1, count / (256 / sizeof(T))) : 1;
    cannsim::check_tmp("ReduceMax", sharedTmpBuffer, cannsim::reduce_tmp_elements(false, true, fmr, calIndex, sizeof(T)), loc);
    cannsim::reduce_to_scalar("ReduceMax", cannsim::RKind::Max, dst, src, cannsim::count_lanes(count), 8, calIndex, loc);
}
template <typename T, bool isSetMask = true>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false, CANNSIM_LOC) {
    const uint64_t fmr = count > 0 ? std::max<uint64_t>(1, count / (256 / sizeof(T))) : 1;
    cannsim::check_tmp("ReduceMin", sharedTmpBuffer, cannsim::reduce_tmp_elements(false, true, fmr, calIndex, sizeof(T)), loc);
    cannsim::reduce_to_scalar("ReduceMin", cannsim::RKind::Min, dst, src, cannsim::count_lanes(count), 8, calIndex, loc);
}

// ---- WholeReduce* (CANN <= 9.0) and ReduceRepeat<ReduceType> (CANN >= 9.1) ----
#define CANNSIM_WHOLE_REDUCE(NAME, KIND, DEFAULT_ORDER)                                                         \
    template <typename T, bool isSetMask = true>                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,                  \
                     const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,          \
                     const int32_t srcRepStride, ReduceOrder order = DEFAULT_ORDER, CANNSIM_LOC) {              \
        auto L = cannsim::mask_lanes(#NAME, static_cast<uint64_t>(mask), repeatTime, isSetMask, sizeof(T), false, loc); \
        cannsim::reduce_per_repeat(#NAME, KIND, dst, src, L, dstRepStride, srcBlkStride, srcRepStride, order, loc); \
    }                                                                                                           \
    template <typename T, bool isSetMask = true>                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],               \
                     const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,          \
                     const int32_t srcRepStride, ReduceOrder order = DEFAULT_ORDER, CANNSIM_LOC) {              \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), false, loc);                \
        cannsim::reduce_per_repeat(#NAME, KIND, dst, src, L, dstRepStride, srcBlkStride, srcRepStride, order, loc); \
    }

CANNSIM_WHOLE_REDUCE(WholeReduceSum, cannsim::RKind::Sum, ReduceOrder::ORDER_ONLY_VALUE)
CANNSIM_WHOLE_REDUCE(WholeReduceMax, cannsim::RKind::Max, ReduceOrder::ORDER_VALUE_INDEX)
CANNSIM_WHOLE_REDUCE(WholeReduceMin, cannsim::RKind::Min, ReduceOrder::ORDER_VALUE_INDEX)

#define CANNSIM_BLOCK_REDUCE(NAME, KIND)                                                                        \
    template <typename T, bool isSetMask = true>                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,            \
                     const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,                \
                     const int32_t srcRepStride, CANNSIM_LOC) {                                                 \
        auto L = cannsim::mask_lanes(#NAME, static_cast<uint64_t>(mask), repeatTime, isSetMask, sizeof(T), false, loc); \
        cannsim::reduce_per_block(#NAME, KIND, dst, src, L, dstRepStride, srcBlkStride, srcRepStride, loc);     \
    }                                                                                                           \
    template <typename T, bool isSetMask = true>                                                                \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,            \
                     const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,             \
                     const int32_t srcRepStride, CANNSIM_LOC) {                                                 \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), false, loc);                \
        cannsim::reduce_per_block(#NAME, KIND, dst, src, L, dstRepStride, srcBlkStride, srcRepStride, loc);     \
    }

CANNSIM_BLOCK_REDUCE(BlockReduceSum, cannsim::RKind::Sum)
CANNSIM_BLOCK_REDUCE(BlockReduceMax, cannsim::RKind::Max)
CANNSIM_BLOCK_REDUCE(BlockReduceMin, cannsim::RKind::Min)

namespace detail_reduce {
constexpr cannsim::RKind kind_of(ReduceType t) {
    return t == ReduceType::SUM ? cannsim::RKind::Sum : (t == ReduceType::MAX ? cannsim::RKind::Max : cannsim::RKind::Min);
}
constexpr const char* repeat_name(ReduceType t) {
    return t == ReduceType::SUM ? "WholeReduceSum" : (t == ReduceType::MAX ? "WholeReduceMax" : "WholeReduceMin");
}
constexpr const char* block_name(ReduceType t) {
    return t == ReduceType::SUM ? "BlockReduceSum" : (t == ReduceType::MAX ? "BlockReduceMax" : "BlockReduceMin");
}
}  // namespace detail_reduce

template <ReduceType type, typename T, typename U = T, bool isSetMask = true>
inline void ReduceRepeat(const LocalTensor<U>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime,
                         const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                         ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, CANNSIM_LOC) {
    auto L = cannsim::mask_lanes("ReduceRepeat", static_cast<uint64_t>(mask), repeatTime, isSetMask, sizeof(T), false, loc);
    cannsim::reduce_per_repeat(detail_reduce::repeat_name(type), detail_reduce::kind_of(type), dst.template ReinterpretCast<T>(),
                               src, L, dstRepStride, srcBlkStride, srcRepStride, order, loc);
}
template <ReduceType type, typename T, typename U = T, bool isSetMask = true>
inline void ReduceRepeat(const LocalTensor<U>& dst, const LocalTensor<T>& src, const uint64_t mask[], const int32_t repeatTime,
                         const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                         ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, CANNSIM_LOC) {
    auto L = cannsim::mask_lanes("ReduceRepeat", mask, repeatTime, isSetMask, sizeof(T), false, loc);
    cannsim::reduce_per_repeat(detail_reduce::repeat_name(type), detail_reduce::kind_of(type), dst.template ReinterpretCast<T>(),
                               src, L, dstRepStride, srcBlkStride, srcRepStride, order, loc);
}
template <ReduceType type, typename T, typename U = T, bool isSetMask = true>
inline void ReduceDataBlock(const LocalTensor<U>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime,
                            const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, CANNSIM_LOC) {
    auto L = cannsim::mask_lanes("ReduceDataBlock", static_cast<uint64_t>(mask), repeatTime, isSetMask, sizeof(T), false, loc);
    cannsim::reduce_per_block(detail_reduce::block_name(type), detail_reduce::kind_of(type), dst.template ReinterpretCast<T>(),
                              src, L, dstRepStride, srcBlkStride, srcRepStride, loc);
}
template <ReduceType type, typename T, typename U = T, bool isSetMask = true>
inline void ReduceDataBlock(const LocalTensor<U>& dst, const LocalTensor<T>& src, const uint64_t mask[], const int32_t repeatTime,
                            const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, CANNSIM_LOC) {
    auto L = cannsim::mask_lanes("ReduceDataBlock", mask, repeatTime, isSetMask, sizeof(T), false, loc);
    cannsim::reduce_per_block(detail_reduce::block_name(type), detail_reduce::kind_of(type), dst.template ReinterpretCast<T>(),
                              src, L, dstRepStride, srcBlkStride, srcRepStride, loc);
}

}  // namespace AscendC
