// Sorting: the instructions Sort32, MrgSort (MrgSort4Info form) and GetMrgSortResult, and the
// library APIs Concat, Sort, Extract, MrgSort (element-count form), GetSortOffset/GetSortLen and
// TopK (Normal and Small modes).
//
// Layout (A2/A3 and 950, "layout one"): a sorted element is an 8-byte structure, the score in the
// low bytes (a float in bytes 0..3, or a half in bytes 0..1 with bytes 2..3 reserved, written 0
// here) and the uint32 index in bytes 4..7. Order: descending score; equal scores keep their input
// order (documented); NaN sorts before every number (the TopK docs place NaN first in both
// directions; the instructions' docs say nothing, so the same order is used: UNVERIFIED); inf is
// the largest number. The region-proposal layout of 310P-class chips is not emulated.
#pragma once
#include <algorithm>
#include "hl_common.h"
#include "hl_types.h"

namespace cannsim {

struct SortItem {
    uint8_t raw[8];
    float score;
};

template <typename T> inline SortItem load_item(const uint8_t* p) {
    SortItem it;
    std::memcpy(it.raw, p, 8);
    it.score = static_cast<float>(ld<T>(p));
    return it;
}
template <typename T> inline SortItem make_item(T score, uint32_t index) {
    SortItem it;
    std::memset(it.raw, 0, 8);
    st<T>(it.raw, score);
    st<uint32_t>(it.raw + 4, index);
    it.score = static_cast<float>(score);
    return it;
}

// a goes before b: NaN first, then larger scores.
inline bool sorts_before(float a, float b) {
    const bool an = std::isnan(a), bn = std::isnan(b);
    if (an || bn) return an && !bn;
    return a > b;
}

inline void stable_desc(std::vector<SortItem>& v) {
    std::stable_sort(v.begin(), v.end(), [](const SortItem& a, const SortItem& b) { return sorts_before(a.score, b.score); });
}

inline bool sort_supported(const char* api, const SrcLoc& loc) {
    if (arch() != 2002) return true;
    report("L4.API_UNKNOWN", Severity::Error, api, loc.line(),
           fmt("%s: the region-proposal layout of arch 2002 (%s) is not emulated", api, chip().name));
    return false;
}

inline int sort_repeat(const char* api, int64_t repeat, int64_t lo, const SrcLoc& loc) {
    if (repeat > 255 || repeat < lo) {
        report("L2.REPEAT_LIMIT", Severity::Error, api, loc.line(),
               fmt("%s repeatTime %lld is outside [%lld, 255]", api, (long long)repeat, (long long)lo));
        return static_cast<int>(std::clamp<int64_t>(repeat, 0, 255));
    }
    return static_cast<int>(repeat);
}

// Merge up to four sorted queues of 8-byte structures. Ties go to the lower-numbered queue (the
// earlier input). With `exhaust`, merging stops when a queue runs out. Returns structures written.
template <typename T>
inline uint32_t merge_queues(uint8_t* dst, const uint8_t* const src[4], const uint32_t len[4], int nq, bool exhaust,
                             uint32_t consumed[4]) {
    std::vector<SortItem> q[4];
    for (int i = 0; i < nq; ++i) {
        q[i].reserve(len[i]);
        for (uint32_t j = 0; j < len[i]; ++j) q[i].push_back(load_item<T>(src[i] + uint64_t(j) * 8));
    }
    uint32_t pos[4] = {0, 0, 0, 0}, out = 0;
    std::vector<SortItem> res;
    while (true) {
        int best = -1;
        bool any_empty = false;
        for (int i = 0; i < nq; ++i) {
            if (pos[i] >= len[i]) { any_empty = true; continue; }
            if (best < 0 || sorts_before(q[i][pos[i]].score, q[best][pos[best]].score)) best = i;
        }
        if (best < 0 || (exhaust && any_empty)) break;
        res.push_back(q[best][pos[best]++]);
    }
    for (const SortItem& it : res) std::memcpy(dst + uint64_t(out++) * 8, it.raw, 8);
    for (int i = 0; i < 4; ++i) consumed[i] = i < nq ? pos[i] : 0;
    return out;
}

inline uint32_t (&mrg_sort_result())[4] {
    static uint32_t r[4] = {0, 0, 0, 0};
    return r;
}

inline int valid_queues(const char* api, uint16_t validBit, const SrcLoc& loc) {
    switch (validBit) {
        case 0b11: return 2;
        case 0b111: return 3;
        case 0b1111: return 4;
        default:
            hl_param_error(api, loc, fmt("%s validBit %u is not one of 0b11, 0b111, 0b1111 (2, 3 or 4 valid queues)",
                                         api, static_cast<unsigned>(validBit)));
            return validBit & 0b1000 ? 4 : validBit & 0b100 ? 3 : 2;
    }
}

// Shared body of both MrgSort forms.
template <typename T>
inline void mrg_sort(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>* srcs,
                     const uint16_t lengths[4], uint16_t validBit, bool exhaust, int64_t repeat, uint32_t* sortedNum,
                     uint32_t src_align, const SrcLoc& loc) {
    hl_check_dtype(api, dtype_of<T>(), loc);
    if (!sort_supported(api, loc)) return;
    const int nq = valid_queues(api, validBit, loc);
    uint32_t len[4] = {0, 0, 0, 0}, total = 0;
    for (int i = 0; i < nq; ++i) {
        len[i] = lengths[i];
        if (lengths[i] > 4095)
            hl_param_error(api, loc, fmt("%s queue %d length %u exceeds 4095 structures", api, i + 1, lengths[i]));
        total += len[i];
    }
    int reps = sort_repeat(api, repeat, 1, loc);
    if (reps > 1) {
        const uint64_t step = uint64_t(len[0]) * 8;
        bool ok = nq == 4 && !exhaust;
        for (int i = 1; i < nq && ok; ++i)
            ok = len[i] == len[0] && srcs[i].addr_ == srcs[0].addr_ + i * step;
        if (!ok) {
            hl_param_error(api, loc, fmt("%s repeatTime %d takes effect only with four valid queues of equal length "
                                         "stored back to back and no exhausted suspension; this call merges once",
                                         api, reps));
            reps = 1;
        }
    }
    for (int i = 0; i < nq; ++i) {
        const uint64_t bytes = uint64_t(len[i]) * 8;
        hl_check_spans(api, {HlSpan{"src", srcs[i].addr_, bytes, srcs[i].slot_, srcs[i].gen_, false}}, loc, src_align);
    }
    const uint64_t out_bytes = uint64_t(total) * 8 * reps;
    if (reps > 1)
        check_ub_range(api, "src", srcs[0].slot_, srcs[0].addr_, srcs[0].addr_ + out_bytes, loc);
    hl_check_spans(api, {HlSpan{"dst", dst.addr_, out_bytes, dst.slot_, dst.gen_, true}}, loc);
    uint32_t consumed[4] = {0, 0, 0, 0};
    if (!count_only()) {
        for (int r = 0; r < reps; ++r) {
            const uint8_t* s[4] = {nullptr, nullptr, nullptr, nullptr};
            for (int i = 0; i < nq; ++i) s[i] = ub_at(srcs[i].addr_ + uint64_t(r) * total * 8);
            merge_queues<T>(ub_at(dst.addr_ + uint64_t(r) * total * 8), s, len, nq, exhaust, consumed);
        }
    }
    for (int i = 0; i < 4; ++i) {
        mrg_sort_result()[i] = consumed[i];
        if (sortedNum) sortedNum[i] = consumed[i];
    }
    mark_written(dst.slot_, PIPE_V);
    const uint64_t elems = uint64_t(total) * reps * (8 / sizeof(T));
    record_cost(PIPE_V, "MrgSort", dtype_of<T>(), elems, elems * sizeof(T) * 2);
}

// Sort each group of 32 (score, index) pairs, or the whole input (full sort).
template <typename T>
inline void sort_groups(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& score,
                        const AscendC::LocalTensor<uint32_t>& index, int reps, bool full) {
    const uint64_t n = uint64_t(reps) * 32;
    if (!count_only()) {
        const uint8_t* sp = ub_at(score.addr_);
        const uint8_t* ip = ub_at(index.addr_);
        std::vector<SortItem> items;
        items.reserve(n);
        for (uint64_t i = 0; i < n; ++i) items.push_back(make_item<T>(ld<T>(sp + i * sizeof(T)), ld<uint32_t>(ip + i * 4)));
        if (full) stable_desc(items);
        else
            for (int r = 0; r < reps; ++r) {
                std::vector<SortItem> g(items.begin() + r * 32, items.begin() + (r + 1) * 32);
                stable_desc(g);
                std::copy(g.begin(), g.end(), items.begin() + r * 32);
            }
        uint8_t* d = ub_at(dst.addr_);
        for (uint64_t i = 0; i < n; ++i) std::memcpy(d + i * 8, items[i].raw, 8);
    }
    mark_written(dst.slot_, PIPE_V);
    const uint64_t elems = n * (8 / sizeof(T));
    record_cost(PIPE_V, "Sort32", dtype_of<T>(), elems, elems * sizeof(T));
    if (full && reps > 1) {   // merge passes of four queues each over all structures
        int passes = 0;
        for (uint64_t run = 32; run < n; run *= 4) ++passes;
        for (int p = 0; p < passes; ++p) record_cost(PIPE_V, "MrgSort", dtype_of<T>(), elems, elems * sizeof(T) * 2);
    }
    (void)api;
}

}  // namespace cannsim

namespace AscendC {

template <typename T>
struct MrgSortSrcList {
    MrgSortSrcList() = default;
    MrgSortSrcList(const LocalTensor<T>& a, const LocalTensor<T>& b, const LocalTensor<T>& c, const LocalTensor<T>& d)
        : src1(a), src2(b), src3(c), src4(d) {}
    MrgSortSrcList(const LocalTensor<T>& a, const LocalTensor<T>& b) : src1(a), src2(b) {}
    MrgSortSrcList(const LocalTensor<T>& a, const LocalTensor<T>& b, const LocalTensor<T>& c)
        : src1(a), src2(b), src3(c) {}
    LocalTensor<T> src1, src2, src3, src4;
};

struct MrgSort4Info {
    MrgSort4Info() = default;
    MrgSort4Info(const uint16_t lengths[4], bool exhausted, uint16_t valid, uint16_t repeat)
        : ifExhaustedSuspension(exhausted), validBit(valid), repeatTimes(repeat) {
        for (int i = 0; i < 4; ++i) elementLengths[i] = lengths[i];
    }
    uint16_t elementLengths[4] = {0, 0, 0, 0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint16_t repeatTimes = 1;
};

// ---- instructions ----
template <typename T>
inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
                   const int32_t repeatTime, CANNSIM_LOC) {
    cannsim::hl_check_dtype("Sort32", cannsim::dtype_of<T>(), loc);
    if (!cannsim::sort_supported("Sort32", loc)) return;
    const int reps = cannsim::sort_repeat("Sort32", repeatTime, 0, loc);
    const uint64_t n = uint64_t(reps) * 32;
    cannsim::hl_check_spans("Sort32", {cannsim::span("src0", src0, n), cannsim::span("src1", src1, n),
                                       cannsim::HlSpan{"dst", dst.addr_, n * 8, dst.slot_, dst.gen_, true}}, loc);
    if (reps == 0) return;
    cannsim::sort_groups("Sort32", dst, src0, src1, reps, false);
}

template <typename T>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params, CANNSIM_LOC) {
    const LocalTensor<T> s[4] = {src.src1, src.src2, src.src3, src.src4};
    cannsim::mrg_sort("MrgSort", dst, s, params.elementLengths, params.validBit, params.ifExhaustedSuspension,
                      params.repeatTimes, nullptr, 8, loc);
}

inline void GetMrgSortResult(uint16_t& l1, uint16_t& l2, uint16_t& l3, uint16_t& l4) {
    const auto& r = cannsim::mrg_sort_result();
    l1 = static_cast<uint16_t>(r[0]); l2 = static_cast<uint16_t>(r[1]);
    l3 = static_cast<uint16_t>(r[2]); l4 = static_cast<uint16_t>(r[3]);
}

// ---- library: Concat, Sort, Extract, MrgSort ----
// Concat prepares the scores for Sort; in layout one that is the scores themselves (16 per repeat).
template <typename T>
inline void Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const LocalTensor<T>& tmp, const int32_t repeatTime,
                   CANNSIM_LOC) {
    cannsim::hl_check_dtype("Concat", cannsim::dtype_of<T>(), loc);
    if (!cannsim::sort_supported("Concat", loc)) return;
    (void)tmp;
    const int reps = cannsim::sort_repeat("Concat", repeatTime, 0, loc);
    const uint64_t n = uint64_t(reps) * 16;
    cannsim::hl_check_spans("Concat", {cannsim::span("src", src, n), cannsim::span("concat", concat, n, true)}, loc);
    if (!cannsim::count_only() && n) std::memmove(cannsim::ub_at(concat.addr_), cannsim::ub_at(src.addr_), n * sizeof(T));
    cannsim::mark_written(concat.slot_, PIPE_V);
    cannsim::record_cost(PIPE_V, "Concat", cannsim::dtype_of<T>(), n, n * sizeof(T) * 2);
}

template <typename T, bool isFullSort = false>
inline void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
                 LocalTensor<T>& tmp, const int32_t repeatTime, CANNSIM_LOC) {
    cannsim::hl_check_dtype("Sort", cannsim::dtype_of<T>(), loc);
    if (!cannsim::sort_supported("Sort", loc)) return;
    const int reps = cannsim::sort_repeat("Sort", repeatTime, 0, loc);
    const uint64_t n = uint64_t(reps) * 32;
    cannsim::hl_check_spans("Sort", {cannsim::span("concat", concat, n), cannsim::span("index", index, n),
                                     cannsim::HlSpan{"dst", dst.addr_, n * 8, dst.slot_, dst.gen_, true}}, loc);
    if (isFullSort && reps > 1) {
        cannsim::check_live("Sort", tmp.slot_, tmp.gen_, loc);
        cannsim::check_align32("Sort", "tmp", tmp.addr_, loc);
        const uint64_t need = cannsim::tmp_model::sort_bytes(static_cast<uint32_t>(n));
        cannsim::hl_check_tmp_bytes("Sort", uint64_t(tmp.GetSize()) * sizeof(T), need, loc);
        const cannsim::HlSpan t{"tmp", tmp.addr_, need, tmp.slot_, tmp.gen_, false};
        cannsim::hl_check_disjoint("Sort", t, cannsim::HlSpan{"dst", dst.addr_, n * 8, dst.slot_, dst.gen_, true}, loc);
        cannsim::hl_check_disjoint("Sort", t, cannsim::span("concat", concat, n), loc);
    }
    if (reps == 0) return;
    cannsim::sort_groups("Sort", dst, concat, index, reps, isFullSort);
}

template <typename T>
inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
                    const int32_t repeatTime, CANNSIM_LOC) {
    cannsim::hl_check_dtype("Extract", cannsim::dtype_of<T>(), loc);
    if (!cannsim::sort_supported("Extract", loc)) return;
    const int reps = cannsim::sort_repeat("Extract", repeatTime, 0, loc);
    const uint64_t n = uint64_t(reps) * 32;
    cannsim::hl_check_spans("Extract", {cannsim::HlSpan{"sorted", sorted.addr_, n * 8, sorted.slot_, sorted.gen_, false},
                                        cannsim::span("dstValue", dstValue, n, true),
                                        cannsim::span("dstIndex", dstIndex, n, true)}, loc);
    if (!cannsim::count_only()) {
        std::vector<uint8_t> buf(n * 8);
        if (n) std::memcpy(buf.data(), cannsim::ub_at(sorted.addr_), n * 8);
        uint8_t* v = cannsim::ub_at(dstValue.addr_);
        uint8_t* ix = cannsim::ub_at(dstIndex.addr_);
        for (uint64_t i = 0; i < n; ++i) {
            std::memcpy(v + i * sizeof(T), buf.data() + i * 8, sizeof(T));
            std::memcpy(ix + i * 4, buf.data() + i * 8 + 4, 4);
        }
    }
    cannsim::mark_written(dstValue.slot_, PIPE_V);
    cannsim::mark_written(dstIndex.slot_, PIPE_V);
    const uint64_t elems = n * (8 / sizeof(T));
    cannsim::record_cost(PIPE_V, "Extract", cannsim::dtype_of<T>(), elems, elems * sizeof(T) * 2);
}

template <typename T, bool isExhaustedSuspension = false>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList, const uint16_t elementCountList[4],
                    uint32_t sortedNum[4], uint16_t validBit, const int32_t repeatTime, CANNSIM_LOC) {
    const LocalTensor<T> s[4] = {sortList.src1, sortList.src2, sortList.src3, sortList.src4};
    cannsim::mrg_sort("MrgSort", dst, s, elementCountList, validBit, isExhaustedSuspension, repeatTime, sortedNum, 32, loc);
}

// Offset (in elements of T) of structure `elemOffset` in sorted data, and the size (elements of T)
// of `elemCount` structures: 8 bytes each in layout one.
template <typename T> inline uint32_t GetSortOffset(const uint32_t elemOffset) { return elemOffset * 8 / sizeof(T); }
template <typename T> inline uint32_t GetSortLen(const uint32_t elemCount) { return elemCount * 8 / sizeof(T); }

// ---- TopK ----
namespace detail_topk {
template <typename T, bool isInitIndex, bool isHasfinish, TopKMode topkMode>
inline void run(const char* api, const LocalTensor<T>& dstValue, const LocalTensor<int32_t>& dstIndex,
                const LocalTensor<T>& src, const LocalTensor<int32_t>& srcIndex, const LocalTensor<bool>& finish,
                const LocalTensor<uint8_t>* tmp, int32_t k, const tiling::TopkTiling& tiling, const TopKInfo& info,
                bool isLargest, const cannsim::SrcLoc& loc) {
    using namespace cannsim;
    hl_check_dtype(api, dtype_of<T>(), loc);
    if (!sort_supported(api, loc)) return;
    const bool small = topkMode == TopKMode::TOPK_NSMALL;
    const int32_t outter = info.outter, inner = info.inner, n = info.n;
    bool bad = false;
    auto param = [&](bool cond, const std::string& msg) { if (cond) { hl_param_error(api, loc, msg); bad = true; } };
    param(outter < 1, fmt("TopK topKInfo.outter %d must be at least 1", outter));
    param(inner <= 0 || inner % 32 != 0, fmt("TopK topKInfo.inner %d must be a positive multiple of 32", inner));
    param(n < 1 || n > inner, fmt("TopK topKInfo.n %d must satisfy 1 <= n <= inner (%d)", n, inner));
    param(k < 1 || k > n, fmt("TopK k %d must satisfy 1 <= k <= n (%d)", k, n));
    param(small && inner != 32, fmt("TopK Small mode needs topKInfo.inner == 32, got %d", inner));
    param(small && isHasfinish, std::string("TopK Small mode does not support isHasfinish = true"));
    param(!small && inner > 4096, fmt("TopK Normal mode supports topKInfo.inner up to 4096, got %d", inner));
    param(tiling.innerDataSize != inner,
          tiling.innerDataSize == 0 && tiling.allDataSize == 0
              ? std::string("TopK tiling is empty: fill the tiling::TopkTiling with TopKTilingFunc on the host")
              : fmt("TopK tiling was computed for inner %d but topKInfo.inner is %d", tiling.innerDataSize, inner));
    if (bad) return;
    const int32_t epb = 32 / static_cast<int32_t>(sizeof(T));
    const int32_t kv = small ? k : (k + epb - 1) / epb * epb;      // row stride of dstValue
    const int32_t ki = small ? k : (k + 7) / 8 * 8;                // row stride of dstIndex
    const uint64_t rows = static_cast<uint64_t>(outter);
    const HlSpan s_src = span("srcLocal", src, rows * inner);
    const HlSpan s_val = span("dstValueLocal", dstValue, (rows - 1) * kv + k, true);
    const HlSpan s_idx = span("dstIndexLocal", dstIndex, (rows - 1) * ki + k, true);
    hl_check_spans(api, {s_src, s_val, s_idx}, loc);
    if (isInitIndex) hl_check_spans(api, {span("srcIndexLocal", srcIndex, small ? rows * inner : inner)}, loc);
    if (isHasfinish) hl_check_spans(api, {span("finishLocal", finish, rows)}, loc);
    hl_check_disjoint(api, s_src, s_val, loc);
    hl_check_disjoint(api, s_src, s_idx, loc);
    if (tmp) {
        const uint32_t need = tmp_model::topk_bytes(inner, outter, isInitIndex, small, isLargest, sizeof(T));
        hl_check_spans(api, {span("tmpLocal", *tmp, 0)}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), need, loc, "tmpLocal");
        const HlSpan s_tmp = span("tmpLocal", *tmp, std::min<uint64_t>(need, tmp->GetSize()));
        hl_check_disjoint(api, s_tmp, s_src, loc);
        hl_check_disjoint(api, s_tmp, s_val, loc);
        hl_check_disjoint(api, s_tmp, s_idx, loc);
    }
    if (!count_only()) {
        const uint8_t* sp = ub_at(src.addr_);
        const uint8_t* ip = isInitIndex ? ub_at(srcIndex.addr_) : nullptr;
        std::vector<std::pair<float, int32_t>> row(inner);
        std::vector<std::pair<T, int32_t>> out(rows * k);
        for (uint64_t r = 0; r < rows; ++r) {
            std::vector<std::pair<T, int32_t>> items(inner);
            for (int32_t j = 0; j < inner; ++j) {
                const T v = ld<T>(sp + (r * inner + j) * sizeof(T));
                const int32_t idx = isInitIndex ? ld<int32_t>(ip + ((small ? r * inner : 0) + j) * 4) : j;
                items[j] = {v, idx};
            }
            // Largest: descending; smallest: ascending; NaN first either way; ties keep input order.
            std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
                const float x = static_cast<float>(a.first), y = static_cast<float>(b.first);
                if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && !std::isnan(y);
                return isLargest ? x > y : x < y;
            });
            const bool finished = isHasfinish && ld<bool>(ub_at(finish.addr_ + r));
            for (int32_t j = 0; j < k; ++j) out[r * k + j] = {items[j].first, finished ? n : items[j].second};
        }
        for (uint64_t r = 0; r < rows; ++r)
            for (int32_t j = 0; j < k; ++j) {
                st<T>(ub_at(dstValue.addr_ + (r * kv + j) * sizeof(T)), out[r * k + j].first);
                st<int32_t>(ub_at(dstIndex.addr_ + (r * ki + j) * 4), out[r * k + j].second);
            }
    }
    // Cost: the documented algorithm (index generation, negation for smallest, Sort32, merge
    // passes over each row, GatherMask of values and indices, negation back).
    const uint64_t elems = rows * inner;
    const double per_struct = 8.0 / sizeof(T);
    int passes = 0;
    for (int64_t run = 32; run < inner; run *= 4) ++passes;
    const HlSpan reads[1] = {s_src};
    composite_cost(dtype_of<T>(), elems, sizeof(T), reads, 1, s_val,
                   {{"CreateVecIndex", isInitIndex ? 0.0 : 1.0 / rows}, {"Muls", isLargest ? 0.0 : 1.0},
                    {"Sort32", per_struct}});
    for (int p = 0; p < passes; ++p) composite_cost(dtype_of<T>(), elems, sizeof(T), reads, 1, s_val, {{"MrgSort", per_struct * 2}});
    composite_cost(dtype_of<T>(), elems, sizeof(T), reads, 1, s_val,
                   {{"GatherMask", per_struct}, {"GatherMask", per_struct}, {"Muls", isLargest ? 0.0 : double(k) / inner}});
    mark_written(dstIndex.slot_, PIPE_V);
}
}  // namespace detail_topk

template <typename T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          TopKMode topkMode = TopKMode::TOPK_NORMAL, const TopKConfig& config = defaultTopKConfig>
inline void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal,
                 const LocalTensor<T>& srcLocal, const LocalTensor<int32_t>& srcIndexLocal,
                 const LocalTensor<bool>& finishLocal, const LocalTensor<uint8_t>& tmpLocal, const int32_t k,
                 const tiling::TopkTiling& tilling, const TopKInfo& topKInfo, const bool isLargest = true, CANNSIM_LOC) {
    const bool largest = config.order == TopKOrder::UNSET ? isLargest : config.order == TopKOrder::LARGEST;
    detail_topk::run<T, isInitIndex, isHasfinish, topkMode>("TopK", dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal,
                                                          finishLocal, &tmpLocal, k, tilling, topKInfo, largest, loc);
}
template <typename T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          TopKMode topkMode = TopKMode::TOPK_NORMAL, const TopKConfig& config = defaultTopKConfig>
inline void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal,
                 const LocalTensor<T>& srcLocal, const LocalTensor<int32_t>& srcIndexLocal,
                 const LocalTensor<bool>& finishLocal, const int32_t k, const tiling::TopkTiling& tilling,
                 const TopKInfo& topKInfo, const bool isLargest = true, CANNSIM_LOC) {
    const bool largest = config.order == TopKOrder::UNSET ? isLargest : config.order == TopKOrder::LARGEST;
    detail_topk::run<T, isInitIndex, isHasfinish, topkMode>("TopK", dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal,
                                                          finishLocal, nullptr, k, tilling, topKInfo, largest, loc);
}

}  // namespace AscendC
