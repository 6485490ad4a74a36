// DataCopy (count and DataCopyParams forms) and DataCopyPad (GM<->UB with 32 B row padding).
#pragma once
#include "vec_engine.h"
#include "atomic.h"

namespace cannsim {

// DataCopy count form: bytes must be a 32 B multiple; the chip rounds down and copies less.
inline uint64_t datacopy_bytes(uint64_t count, uint32_t esize, const SrcLoc& loc) {
    const uint64_t bytes = count * esize;
    if (bytes % 32 != 0) {
        const uint64_t kept = bytes / 32 * 32;
        report("L2.DATACOPY_32B", Severity::Error, "DataCopy", loc.line(),
               fmt("DataCopy of %llu elements x %u B = %llu B is not a multiple of 32 B; the chip copies only "
                   "%llu B and silently drops the last %llu B (use DataCopyPad for tails)",
                   (unsigned long long)count, esize, (unsigned long long)bytes, (unsigned long long)kept,
                   (unsigned long long)(bytes - kept)));
        return kept;
    }
    return bytes;
}

template <typename T>
inline void ub_operand_checks(const char* api, const char* name, const AscendC::LocalTensor<T>& t, uint64_t first,
                              uint64_t last, const SrcLoc& loc) {
    check_live(api, t.slot_, t.gen_, loc);
    check_align32(api, name, t.addr_, loc);
    check_ub_range(api, name, t.slot_, t.addr_ + first, t.addr_ + last, loc);
    cost::note_operand(t.slot_, name[0] == 'd');
}

template <typename T>
inline void gm_bytes_check(const char* api, const AscendC::GlobalTensor<T>& g, uint64_t first_byte, uint64_t last_byte,
                           const SrcLoc& loc) {
    if (last_byte <= first_byte) return;
    cost::note_rows(1, static_cast<double>(last_byte - first_byte),
                    reinterpret_cast<const uint8_t*>(g.base_) + first_byte);
    const uint64_t fe = first_byte / sizeof(T);
    const uint64_t le = (last_byte + sizeof(T) - 1) / sizeof(T);
    g.check(api, fe, le - fe, loc);
}

// A GM store of `bytes` spread over `extent` bytes from `gm`: when it spans many pages, map them
// writable in one call instead of taking one write fault per page (a block is a fresh process, its
// GM pages start unmapped; reads already fault in windows of pages). No effect on data or findings:
// a range that leaves the buffer fails here silently and faults in the copy as before.
inline void gm_prefault_write(void* gm, uint64_t bytes, uint64_t extent) {
#ifdef MADV_POPULATE_WRITE
    constexpr uint64_t kMinBytes = 16 * 1024;
    if (count_only() || bytes < kMinBytes || extent > 2 * bytes) return;
    static const uintptr_t ps = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t lo = reinterpret_cast<uintptr_t>(gm) & ~(ps - 1);
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(gm) + extent) & ~(ps - 1);
    if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
#else
    (void)gm; (void)bytes; (void)extent;
#endif
}

}  // namespace cannsim

namespace AscendC {

// ---- DataCopy, count form ----
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count, CANNSIM_LOC) {
    cannsim::check_dtype("DataCopy", cannsim::dtype_of<T>(), loc);
    const uint64_t bytes = cannsim::datacopy_bytes(count, sizeof(T), loc);
    cannsim::ub_operand_checks("DataCopy", "dst", dst, 0, bytes, loc);
    cannsim::gm_bytes_check("DataCopy", src, 0, bytes, loc);
    if (!cannsim::count_only()) std::memcpy(cannsim::ub_at(dst.addr_), cannsim::gm_real(src.base_), bytes);
    cannsim::mark_written(dst.slot_, PIPE_MTE2);
    cannsim::record_cost(PIPE_MTE2, "DataCopy", cannsim::dtype_of<T>(), bytes / sizeof(T), bytes);
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, CANNSIM_LOC) {
    cannsim::check_dtype("DataCopy", cannsim::dtype_of<T>(), loc);
    const uint64_t bytes = cannsim::datacopy_bytes(count, sizeof(T), loc);
    cannsim::ub_operand_checks("DataCopy", "src", src, 0, bytes, loc);
    cannsim::gm_bytes_check("DataCopy", dst, 0, bytes, loc);
    const bool atomic = cannsim::atomic_store_begin<T>("DataCopy", loc);
    uint8_t* g = reinterpret_cast<uint8_t*>(cannsim::gm_real(dst.base_));
    cannsim::gm_prefault_write(g, bytes, bytes);
    if (!cannsim::count_only())
        cannsim::gm_store(atomic, g, cannsim::ub_at(src.addr_), bytes);
    cannsim::record_cost(PIPE_MTE3, "DataCopy", cannsim::dtype_of<T>(), bytes / sizeof(T), bytes);
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, CANNSIM_LOC) {
    cannsim::check_dtype("DataCopy", cannsim::dtype_of<T>(), loc);
    const uint64_t bytes = cannsim::datacopy_bytes(count, sizeof(T), loc);
    cannsim::ub_operand_checks("DataCopy", "src", src, 0, bytes, loc);
    cannsim::ub_operand_checks("DataCopy", "dst", dst, 0, bytes, loc);
    if (!cannsim::count_only()) std::memmove(cannsim::ub_at(dst.addr_), cannsim::ub_at(src.addr_), bytes);
    cannsim::mark_written(dst.slot_, PIPE_V);
    cannsim::record_cost(PIPE_V, "DataCopy", cannsim::dtype_of<T>(), bytes / sizeof(T), bytes);
}

// ---- DataCopy, DataCopyParams form: blockCount blocks of blockLen x 32 B, gaps in 32 B ----
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p, CANNSIM_LOC) {
    cannsim::check_dtype("DataCopy", cannsim::dtype_of<T>(), loc);
    const uint64_t len = uint64_t(p.blockLen) * 32;
    const uint64_t sstep = len + uint64_t(p.srcStride) * 32, dstep = len + uint64_t(p.dstStride) * 32;
    if (p.blockCount == 0 || len == 0) return;
    const uint64_t n = p.blockCount;
    cannsim::ub_operand_checks("DataCopy", "dst", dst, 0, (n - 1) * dstep + len, loc);
    cannsim::gm_bytes_check("DataCopy", src, 0, (n - 1) * sstep + len, loc);
    const uint8_t* g = reinterpret_cast<const uint8_t*>(cannsim::gm_real(src.base_));
    if (!cannsim::count_only())
        for (uint64_t i = 0; i < n; ++i) std::memcpy(cannsim::ub_at(dst.addr_ + i * dstep), g + i * sstep, len);
    cannsim::mark_written(dst.slot_, PIPE_MTE2);
    cannsim::cost::set_row_shape(double(n), double(len));
    cannsim::record_cost(PIPE_MTE2, "DataCopy", cannsim::dtype_of<T>(), n * len / sizeof(T), n * len);
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, CANNSIM_LOC) {
    cannsim::check_dtype("DataCopy", cannsim::dtype_of<T>(), loc);
    const uint64_t len = uint64_t(p.blockLen) * 32;
    const uint64_t sstep = len + uint64_t(p.srcStride) * 32, dstep = len + uint64_t(p.dstStride) * 32;
    if (p.blockCount == 0 || len == 0) return;
    const uint64_t n = p.blockCount;
    cannsim::ub_operand_checks("DataCopy", "src", src, 0, (n - 1) * sstep + len, loc);
    cannsim::gm_bytes_check("DataCopy", dst, 0, (n - 1) * dstep + len, loc);
    uint8_t* g = reinterpret_cast<uint8_t*>(cannsim::gm_real(dst.base_));
    const bool atomic = cannsim::atomic_store_begin<T>("DataCopy", loc);
    cannsim::gm_prefault_write(g, n * len, (n - 1) * dstep + len);
    if (!cannsim::count_only())
        for (uint64_t i = 0; i < n; ++i) cannsim::gm_store(atomic, g + i * dstep, cannsim::ub_at(src.addr_ + i * sstep), len);
    cannsim::cost::set_row_shape(double(n), double(len));
    cannsim::record_cost(PIPE_MTE3, "DataCopy", cannsim::dtype_of<T>(), n * len / sizeof(T), n * len);
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, CANNSIM_LOC) {
    cannsim::check_dtype("DataCopy", cannsim::dtype_of<T>(), loc);
    const uint64_t len = uint64_t(p.blockLen) * 32;
    const uint64_t sstep = len + uint64_t(p.srcStride) * 32, dstep = len + uint64_t(p.dstStride) * 32;
    if (p.blockCount == 0 || len == 0) return;
    const uint64_t n = p.blockCount;
    cannsim::ub_operand_checks("DataCopy", "src", src, 0, (n - 1) * sstep + len, loc);
    cannsim::ub_operand_checks("DataCopy", "dst", dst, 0, (n - 1) * dstep + len, loc);
    if (!cannsim::count_only())
        for (uint64_t i = 0; i < n; ++i)
            std::memmove(cannsim::ub_at(dst.addr_ + i * dstep), cannsim::ub_at(src.addr_ + i * sstep), len);
    cannsim::mark_written(dst.slot_, PIPE_V);
    cannsim::record_cost(PIPE_V, "DataCopy", cannsim::dtype_of<T>(), n * len / sizeof(T), n * len);
}

// ---- DataCopyPad: rows of blockLen bytes; GM stride in bytes, UB stride in 32 B blocks; each UB row
// starts on 32 B and is padded up to 32 B. ----
template <typename T, PaddingMode mode = PaddingMode::Normal>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad, CANNSIM_LOC) {
    cannsim::check_dtype("DataCopyPad", cannsim::dtype_of<T>(), loc);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    if (p.blockLen % sizeof(T) != 0)
        cannsim::report("L2.DATACOPY_32B", cannsim::Severity::Error, "DataCopyPad", loc.line(),
                        cannsim::fmt("DataCopyPad blockLen %u B is not a multiple of the element size %zu B",
                                     p.blockLen, sizeof(T)));
    const uint64_t n = p.blockCount, len = p.blockLen;
    const uint64_t lpad = uint64_t(pad.leftPadding) * sizeof(T), rpad = uint64_t(pad.rightPadding) * sizeof(T);
    const uint64_t row = (lpad + len + rpad + 31) / 32 * 32;
    const uint64_t dstep = row + uint64_t(p.dstStride) * 32, sstep = len + p.srcStride;
    cannsim::ub_operand_checks("DataCopyPad", "dst", dst, 0, (n - 1) * dstep + row, loc);
    cannsim::gm_bytes_check("DataCopyPad", src, 0, (n - 1) * sstep + len, loc);
    const uint8_t* g = reinterpret_cast<const uint8_t*>(cannsim::gm_real(src.base_));
    for (uint64_t i = 0; i < n && !cannsim::count_only(); ++i) {
        uint8_t* r = cannsim::ub_at(dst.addr_ + i * dstep);
        if (pad.isPad) {
            for (uint64_t b = 0; b < lpad; b += sizeof(T)) cannsim::st<T>(r + b, pad.paddingValue);
            for (uint64_t b = lpad + len; b + sizeof(T) <= row; b += sizeof(T)) cannsim::st<T>(r + b, pad.paddingValue);
        }
        std::memcpy(r + lpad, g + i * sstep, len);
    }
    cannsim::mark_written(dst.slot_, PIPE_MTE2);
    cannsim::cost::set_row_shape(double(n), double(len));
    cannsim::record_cost(PIPE_MTE2, "DataCopyPad", cannsim::dtype_of<T>(), n * len / sizeof(T), n * len);
}
template <typename T, PaddingMode mode = PaddingMode::Normal>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p, CANNSIM_LOC) {
    cannsim::check_dtype("DataCopyPad", cannsim::dtype_of<T>(), loc);
    if (p.blockCount == 0 || p.blockLen == 0) return;
    if (p.blockLen % sizeof(T) != 0)
        cannsim::report("L2.DATACOPY_32B", cannsim::Severity::Error, "DataCopyPad", loc.line(),
                        cannsim::fmt("DataCopyPad blockLen %u B is not a multiple of the element size %zu B",
                                     p.blockLen, sizeof(T)));
    const uint64_t n = p.blockCount, len = p.blockLen;
    const uint64_t row = (len + 31) / 32 * 32;
    const uint64_t sstep = row + uint64_t(p.srcStride) * 32, dstep = len + p.dstStride;
    cannsim::ub_operand_checks("DataCopyPad", "src", src, 0, (n - 1) * sstep + len, loc);
    cannsim::gm_bytes_check("DataCopyPad", dst, 0, (n - 1) * dstep + len, loc);
    uint8_t* g = reinterpret_cast<uint8_t*>(cannsim::gm_real(dst.base_));
    const bool atomic = cannsim::atomic_store_begin<T>("DataCopyPad", loc);
    cannsim::gm_prefault_write(g, n * len, (n - 1) * dstep + len);
    if (!cannsim::count_only())
        for (uint64_t i = 0; i < n; ++i) cannsim::gm_store(atomic, g + i * dstep, cannsim::ub_at(src.addr_ + i * sstep), len);
    cannsim::cost::set_row_shape(double(n), double(len));
    cannsim::record_cost(PIPE_MTE3, "DataCopyPad", cannsim::dtype_of<T>(), n * len / sizeof(T), n * len);
}
// Legacy parameter structs: DataCopyParams with blockLen in bytes for DataCopyPad.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                        const DataCopyPadParams& pad, CANNSIM_LOC) {
    T v{};
    std::memcpy(&v, &pad.paddingValue, sizeof(T) < sizeof(uint64_t) ? sizeof(T) : sizeof(uint64_t));
    DataCopyPad<T>(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0),
                   DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, v), loc);
}
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, CANNSIM_LOC) {
    DataCopyPad<T>(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0), loc);
}

template <typename T, TPosition pos = TPosition::MAX>
inline void SetPadValue(T paddingValue) { (void)paddingValue; }

}  // namespace AscendC
