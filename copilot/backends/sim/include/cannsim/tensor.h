// LocalTensor (a view into the UB arena, tied to the buffer slot it came from) and GlobalTensor
// (a view of GM with its declared size), plus the operand checks every API shares.
#pragma once
#include "runtime.h"
#include "gm_alias.h"

namespace cannsim {

struct UbExtent { uint64_t lo, hi; };

// Where kernel code sees UB (runtime.h UbArena: a PROT_NONE view of the arena, 0 without one).
inline uint64_t ub_view_base() { return reinterpret_cast<uintptr_t>(detail::state().ub_alias); }

// The UB byte address of a LocalTensor::GetPhyAddr value; a plain UB byte address stays as it is.
inline uint64_t ub_offset(uint64_t phy) {
    const uint64_t base = ub_view_base();
    return base && phy >= base && phy - base < detail::state().ub_storage.bytes ? phy - base : phy;
}

inline UbExtent slot_extent(int slot) {
    auto& s = detail::state();
    if (slot < 0 || slot >= static_cast<int>(s.slots.size())) return {0, s.ub_virtual};
    return {s.slots[slot].offset, s.slots[slot].offset + s.slots[slot].bytes};
}

// Use of a tensor whose buffer was freed (FreeTensor) or released (TPipe reset/destroyed).
inline bool check_live(const char* api, int slot, uint32_t gen, const SrcLoc& loc) {
    auto& s = detail::state();
    if (slot < 0 || slot >= static_cast<int>(s.slots.size())) return true;
    const auto& sl = s.slots[slot];
    if (!sl.live) {
        report("L2.QUEUE_PROTOCOL", Severity::Error, api, loc.line(),
               fmt("%s uses a tensor whose buffer was released by TPipe Reset/Destroy", api));
        return false;
    }
    if (sl.gen != gen || (sl.is_queue && sl.state == detail::SlotState::Free)) {
        report("L2.QUEUE_PROTOCOL", Severity::Error, api, loc.line(),
               fmt("%s uses a tensor after FreeTensor released its queue buffer (allocated at line %u)",
                   api, sl.alloc_line));
        return false;
    }
    return true;
}

// Byte range [first, last) of UB touched by an API through one operand.
inline void check_ub_range(const char* api, const char* operand, int slot, uint64_t first, uint64_t last,
                           const SrcLoc& loc) {
    if (last <= first) return;
    const UbExtent e = slot_extent(slot);
    if (first < e.lo || last > e.hi) {
        report("L2.UB_BOUNDS", Severity::Error, api, loc.line(),
               fmt("%s %s touches UB bytes [%llu, %llu) but its buffer is [%llu, %llu) (%llu bytes); "
                   "on the chip this is an out-of-bounds UB access",
                   api, operand, (unsigned long long)first, (unsigned long long)last, (unsigned long long)e.lo,
                   (unsigned long long)e.hi, (unsigned long long)(e.hi - e.lo)),
               true);
    }
    cost::note_range(slot, first, last);   // the bytes really touched: dependencies by address
}

inline void check_align32(const char* api, const char* operand, uint64_t addr, const SrcLoc& loc) {
    if (addr % 32 != 0)
        report("L2.ALIGN_32B", Severity::Error, api, loc.line(),
               fmt("%s %s UB address %llu is not 32-byte aligned (offset %llu bytes past a 32 B boundary); "
                   "UB operands of DataCopy and vector instructions must start on 32 B",
                   api, operand, (unsigned long long)addr, (unsigned long long)(addr % 32)));
}

inline void mark_written(int slot, int pipe) {
    cost::note_write(slot);
    auto& s = detail::state();
    if (slot >= 0 && slot < static_cast<int>(s.slots.size())) s.slots[slot].pending_pipes |= (1u << pipe);
}

}  // namespace cannsim

namespace AscendC {

template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    LocalTensor() = default;

    // In the kernel's view of UB: `(__ubuf__ T*)GetPhyAddr()` is a pointer whose scalar accesses
    // are charged like GetValue/SetValue (harness.cpp, ub_fault).
    uint64_t GetPhyAddr() const { return cannsim::ub_view_base() + addr_; }
    uint64_t GetPhyAddr(uint32_t offset) const { return GetPhyAddr() + uint64_t(offset) * sizeof(T); }
    uint32_t GetSize() const { return size_; }
    uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }
    void SetSize(uint32_t size) { size_ = size; }
    TPosition GetPosition() const { return pos_; }

    LocalTensor operator[](uint32_t offset) const {
        LocalTensor r = *this;
        r.addr_ = addr_ + uint64_t(offset) * sizeof(T);
        r.size_ = offset < size_ ? size_ - offset : 0;
        return r;
    }

    template <typename U>
    LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> r;
        r.addr_ = addr_; r.size_ = static_cast<uint32_t>(uint64_t(size_) * sizeof(T) / sizeof(U));
        r.slot_ = slot_; r.gen_ = gen_; r.pos_ = pos_;
        return r;
    }

    T GetValue(uint32_t index, CANNSIM_LOC) const {
        const uint64_t a = addr_ + uint64_t(index) * sizeof(T);
        cannsim::check_live("GetValue", slot_, gen_, loc);
        cannsim::check_ub_range("GetValue", "element", slot_, a, a + sizeof(T), loc);
        auto& s = cannsim::detail::state();
        if (slot_ >= 0 && slot_ < static_cast<int>(s.slots.size())) {
            const uint32_t pend = s.slots[slot_].pending_pipes & ~(1u << PIPE_S);
            if (pend) {
                std::string pipes;
                for (int p = 0; p < MAX_PIPE; ++p)
                    if (pend & (1u << p)) { if (!pipes.empty()) pipes += ","; pipes += cannsim::pipe_name(p); }
                cannsim::report("L2.SYNC_MISSING", cannsim::Severity::Warning, "GetValue", loc.line(),
                                cannsim::fmt("scalar GetValue reads UB written by pipe %s with no synchronisation "
                                             "in between (SetFlag/WaitFlag<HardEvent::%s_S>, PipeBarrier or a "
                                             "queue EnQue/DeQue); the scalar unit may read stale data",
                                             pipes.c_str(), pipes.c_str()));
            }
        }
        cannsim::cost::scalar_access(slot_, false, a, a + sizeof(T));
        T v; std::memcpy(&v, cannsim::detail::ub_real() + a, sizeof(T));
        cannsim::vault::close_data();
        return v;
    }

    void SetValue(uint32_t index, T value, CANNSIM_LOC) const {
        const uint64_t a = addr_ + uint64_t(index) * sizeof(T);
        cannsim::check_live("SetValue", slot_, gen_, loc);
        cannsim::check_ub_range("SetValue", "element", slot_, a, a + sizeof(T), loc);
        cannsim::cost::scalar_access(slot_, true, a, a + sizeof(T));
        std::memcpy(cannsim::detail::ub_real() + a, &value, sizeof(T));
        cannsim::vault::close_data();
    }

    // Emulator-side accessors (not part of the device API).
    T* sim_data() const { return reinterpret_cast<T*>(cannsim::detail::ub_real() + addr_); }

    uint64_t addr_ = 0;      // byte address inside the UB arena
    uint32_t size_ = 0;      // elements
    int slot_ = -1;
    uint32_t gen_ = 0;
    TPosition pos_ = TPosition::VECCALC;
};

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    GlobalTensor() = default;

    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize, CANNSIM_LOC) {
        (void)loc;
        base_ = buffer; size_ = bufferSize; sized_ = true;
        lo_ = reinterpret_cast<const uint8_t*>(buffer); hi_ = lo_ + bufferSize * sizeof(T);
        find_region();
    }
    void SetGlobalBuffer(__gm__ T* buffer, CANNSIM_LOC) {
        (void)loc;
        base_ = buffer; size_ = 0; sized_ = false; lo_ = hi_ = nullptr;
        find_region();
    }

    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor r = *this;
        r.base_ = base_ + offset;
        r.size_ = offset < size_ ? size_ - offset : 0;
        return r;
    }

    uint64_t GetSize() const { return size_; }
    __gm__ T* GetPhyAddr() const { return base_; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return base_ + offset; }
    template <typename... A> void SetL2CacheHint(A...) {}

    T GetValue(uint64_t index, CANNSIM_LOC) const {
        check(("GetValue"), index, 1, loc);
        cannsim::cost::gm_scalar_access(sizeof(T), false);
        T v; std::memcpy(&v, cannsim::gm_real(base_ + index), sizeof(T));
        cannsim::vault::close_data();
        return v;
    }
    void SetValue(uint64_t index, T value, CANNSIM_LOC) const {
        check("SetValue", index, 1, loc);
        cannsim::cost::gm_scalar_access(sizeof(T), true);
        std::memcpy(cannsim::gm_real(base_ + index), &value, sizeof(T));
        cannsim::vault::close_data();
    }

    // Bounds check of elements [first, first + count) relative to this view (fatal on breach).
    void check(const char* api, uint64_t first, uint64_t count, const cannsim::SrcLoc& loc) const {
        if (count == 0) return;
        const uint8_t* a = reinterpret_cast<const uint8_t*>(base_ + first);
        const uint8_t* b = reinterpret_cast<const uint8_t*>(base_ + first + count);
        if (base_ == nullptr) {
            cannsim::report("L2.GM_BOUNDS", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s on a GlobalTensor with no buffer (SetGlobalBuffer not called)", api), true);
        }
        if (sized_ && (a < lo_ || b > hi_)) {
            cannsim::report("L2.GM_BOUNDS", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s touches elements [%lld, %lld) of a GlobalTensor declared with %llu "
                                         "elements by SetGlobalBuffer",
                                         api, (long long)((a - lo_) / (long long)sizeof(T)),
                                         (long long)((b - lo_) / (long long)sizeof(T)),
                                         (unsigned long long)((hi_ - lo_) / sizeof(T))),
                            true);
        }
        if (rlo_ && (a < rlo_ || b > rhi_)) {
            cannsim::report("L2.GM_BOUNDS", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s touches GM bytes [%lld, %lld) relative to the %s buffer of %llu bytes",
                                         api, (long long)(a - rlo_), (long long)(b - rlo_), rname_,
                                         (unsigned long long)(rhi_ - rlo_)),
                            true);
        }
    }

    __gm__ T* base_ = nullptr;
    uint64_t size_ = 0;
    bool sized_ = false;
    const uint8_t* lo_ = nullptr;
    const uint8_t* hi_ = nullptr;
    const uint8_t* rlo_ = nullptr;   // registered GM buffer holding this tensor, if known
    const uint8_t* rhi_ = nullptr;
    const char* rname_ = "";

private:
    void find_region() {
        rlo_ = rhi_ = nullptr;
        const uint8_t* p = reinterpret_cast<const uint8_t*>(base_);
        for (auto& r : cannsim::detail::state().gm_regions)
            if (p >= r.base && p < r.base + r.bytes) { rlo_ = r.base; rhi_ = r.base + r.bytes; rname_ = r.name.c_str(); return; }
    }
};

}  // namespace AscendC
