// TPipe, TQue/TQueBind, TBuf, events and the end-of-block checks.
#pragma once
#include "tensor.h"
#include "cube_mem.h"
#include "mix_core.h"

namespace cannsim {

// A sync point: writes of `pipe` (or every pipe for PIPE_ALL) become visible.
inline void clear_pending(int pipe) {
    for (auto& sl : detail::state().slots) {
        if (pipe == PIPE_ALL) sl.pending_pipes = 0;
        else sl.pending_pipes &= ~(1u << pipe);
    }
}

inline void check_event_id(const char* api, int id, const SrcLoc& loc) {
    if (id < 0 || id > 7)
        report("L2.SYNC_PAIRING", Severity::Error, api, loc.line(),
               fmt("%s event id %d is outside 0..7 (hardware event ids per HardEvent)", api, id));
}

inline void set_flag(AscendC::HardEvent e, int id, const SrcLoc& loc) {
    check_event_id("SetFlag", id, loc);
    auto& s = detail::state();
    const detail::FlagKey k{static_cast<int>(e), id};
    if (s.flags_set.count(k))
        report("L2.SYNC_PAIRING", Severity::Error, "SetFlag", loc.line(),
               fmt("SetFlag<HardEvent::%s>(%d) set again before a WaitFlag consumed the previous one (set at line %u)",
                   event_pipes(e).name, id, s.flags_set[k]));
    s.flags_set[k] = loc.line();
    record_cost(event_pipes(e).src, "SetFlag", static_cast<uint32_t>(e), static_cast<uint64_t>(id), 0);
}

inline void wait_flag(AscendC::HardEvent e, int id, const SrcLoc& loc) {
    check_event_id("WaitFlag", id, loc);
    auto& s = detail::state();
    const detail::FlagKey k{static_cast<int>(e), id};
    auto it = s.flags_set.find(k);
    if (it == s.flags_set.end())
        report("L2.SYNC_PAIRING", Severity::Error, "WaitFlag", loc.line(),
               fmt("WaitFlag<HardEvent::%s>(%d) has no earlier SetFlag<HardEvent::%s>(%d); on the chip the "
                   "waiting pipe hangs (AI Core timeout 507014)",
                   event_pipes(e).name, id, event_pipes(e).name, id),
               true);
    s.flags_set.erase(it);
    clear_pending(event_pipes(e).src);
    record_cost(event_pipes(e).dst, "WaitFlag", static_cast<uint32_t>(e), static_cast<uint64_t>(id), 0);
}

// Release every slot a pipe owns; with `check`, report queue buffers still held.
inline void release_pipe(int pipe_id, const char* api, bool check) {
    auto& s = detail::state();
    for (auto& sl : s.slots) {
        if (sl.pipe_id != pipe_id || !sl.live) continue;
        if (check && sl.is_queue && sl.state != detail::SlotState::Free) {
            const char* what = sl.state == detail::SlotState::Enqueued ? "enqueued and never dequeued"
                                                                      : "allocated and never freed";
            report("L2.QUEUE_PROTOCOL", Severity::Error, "AllocTensor", sl.alloc_line,
                   fmt("queue buffer taken by AllocTensor at line %u is still held at %s (%s); "
                       "every AllocTensor needs a matching FreeTensor",
                       sl.alloc_line, api, what));
        }
        sl.live = false;
        if (sl.mem == MEM_UB) s.ub_used -= sl.bytes; else s.mem_used[sl.mem] -= sl.bytes;
        --s.buffers_used;
        if (sl.is_queue) --s.queue_buffers_per_pos[sl.position];
    }
}

// Allocate `num` buffers of `len` bytes (rounded up to 32 B) in the UB arena, with the
// capacity and count checks of InitBuffer.
inline int alloc_slots(int pipe_id, int position, bool is_queue, int num, uint64_t len, const SrcLoc& loc) {
    if (mem_of_position(position) != MEM_UB) return alloc_cube_slots(pipe_id, position, is_queue, num, len, loc);
    check_core_type(position, loc);
    auto& s = detail::state();
    const auto& c = s.chip;
    const uint64_t rounded = (len + 31) / 32 * 32;
    const int first = static_cast<int>(s.slots.size());
    if (num <= 0 || len == 0) {
        report("L2.UB_CAPACITY", Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer with num=%d and len=%llu allocates nothing", num, (unsigned long long)len));
    }
    if (s.buffers_used + num > c.max_buffers)
        report("L2.BUFFER_COUNT", Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer brings the kernel to %d buffers; at most %d buffers per kernel",
                   s.buffers_used + num, c.max_buffers));
    if (is_queue && s.queue_buffers_per_pos[position] + num > c.max_queue_buffers)
        report("L2.BUFFER_COUNT", Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer brings TPosition %d to %d queue buffers; at most %d per position on %s "
                   "(one hardware event id each)",
                   position, s.queue_buffers_per_pos[position] + num, c.max_queue_buffers, c.name));
    const uint64_t total = s.ub_used + rounded * static_cast<uint64_t>(num > 0 ? num : 0);
    if (total > c.ub_bytes)
        report("L2.UB_CAPACITY", Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer of %d x %llu B (rounded to 32 B) brings UB use to %llu B; %s has %llu B usable UB "
                   "per vector core",
                   num, (unsigned long long)rounded, (unsigned long long)total, c.name,
                   (unsigned long long)c.ub_bytes));
    if (total > s.ub_virtual)
        report("L2.UB_CAPACITY", Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer needs %llu B of UB, far beyond the %llu B of %s; cannot continue",
                   (unsigned long long)total, (unsigned long long)c.ub_bytes, c.name),
               true);
    for (int i = 0; i < num; ++i) {
        detail::Slot sl;
        sl.offset = s.ub_used; sl.bytes = rounded; sl.is_queue = is_queue; sl.pipe_id = pipe_id;
        sl.position = position;
        s.slots.push_back(sl);
        s.ub_used += rounded;
        ++s.buffers_used;
        if (is_queue) ++s.queue_buffers_per_pos[position];
    }
    return first;
}

}  // namespace cannsim

namespace AscendC {

class TPipe;
inline TPipe*& current_pipe_ref() { static TPipe* p = nullptr; return p; }
inline TPipe* GetTPipePtr() { return current_pipe_ref(); }

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
public:
    TQueBind() = default;

    template <typename T>
    LocalTensor<T> AllocTensor(CANNSIM_LOC) {
        auto& s = cannsim::detail::state();
        if (nslots_ == 0)
            cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "AllocTensor", loc.line(),
                            "AllocTensor on a queue that has no buffers (TPipe::InitBuffer was not called for it)",
                            true);
        for (int k = 0; k < nslots_; ++k) {
            const int i = first_ + (next_ + k) % nslots_;
            auto& sl = s.slots[i];
            if (sl.state == cannsim::detail::SlotState::Free && sl.live) {
                next_ = (next_ + k + 1) % nslots_;
                sl.state = cannsim::detail::SlotState::Allocated;
                sl.alloc_line = loc.line();
                return make<T>(i);
            }
        }
        cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "AllocTensor", loc.line(),
                        cannsim::fmt("AllocTensor: all %d buffers of the queue are in use (no FreeTensor since); "
                                     "on the chip AllocTensor waits forever",
                                     nslots_),
                        true);
        return {};
    }

    template <typename T>
    void AllocTensor(LocalTensor<T>& out, CANNSIM_LOC) { out = AllocTensor<T>(loc); }

    template <typename T>
    bool EnQue(const LocalTensor<T>& tensor, CANNSIM_LOC) {
        auto& s = cannsim::detail::state();
        if (!cannsim::check_live("EnQue", tensor.slot_, tensor.gen_, loc)) return false;
        if (tensor.slot_ < 0 || !s.slots[tensor.slot_].is_queue) {
            cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "EnQue", loc.line(),
                            "EnQue of a tensor that was not allocated from a queue (TBuf or default tensor)");
            return false;
        }
        auto& sl = s.slots[tensor.slot_];
        if (sl.state == cannsim::detail::SlotState::Enqueued)
            cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "EnQue", loc.line(),
                            "EnQue of a tensor that is already in a queue");
        if (depth > 0 && count_ + 1 > depth)
            cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "EnQue", loc.line(),
                            cannsim::fmt("EnQue beyond the queue depth: %d tensors enqueued without DeQue, depth is %d",
                                         count_ + 1, int(depth)));
        sl.state = cannsim::detail::SlotState::Enqueued;
        fifo_[(head_ + count_) % kFifo] = tensor.slot_;
        ++count_;
        return true;
    }

    template <typename T>
    LocalTensor<T> DeQue(CANNSIM_LOC) {
        auto& s = cannsim::detail::state();
        if (count_ == 0)
            cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "DeQue", loc.line(),
                            "DeQue of an empty queue (no EnQue before it); on the chip DeQue waits forever", true);
        const int i = fifo_[head_];
        head_ = (head_ + 1) % kFifo;
        --count_;
        auto& sl = s.slots[i];
        sl.state = cannsim::detail::SlotState::Dequeued;
        sl.pending_pipes = 0;   // the queue's event synchronises producer and consumer
        return make<T>(i);
    }

    template <typename T>
    void FreeTensor(const LocalTensor<T>& tensor, CANNSIM_LOC) {
        auto& s = cannsim::detail::state();
        if (tensor.slot_ < 0 || tensor.slot_ >= static_cast<int>(s.slots.size()) || !s.slots[tensor.slot_].is_queue) {
            cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "FreeTensor", loc.line(),
                            "FreeTensor of a tensor that was not allocated from a queue");
            return;
        }
        auto& sl = s.slots[tensor.slot_];
        if (sl.state == cannsim::detail::SlotState::Free || sl.gen != tensor.gen_) {
            cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "FreeTensor", loc.line(),
                            cannsim::fmt("double FreeTensor: the buffer (allocated at line %u) is already free",
                                         sl.alloc_line));
            return;
        }
        if (sl.state == cannsim::detail::SlotState::Enqueued) {
            // drop it from whichever queue holds it
            for (int k = 0; k < count_; ++k) {
                if (fifo_[(head_ + k) % kFifo] == tensor.slot_) {
                    for (int m = k; m + 1 < count_; ++m) fifo_[(head_ + m) % kFifo] = fifo_[(head_ + m + 1) % kFifo];
                    --count_;
                    break;
                }
            }
        }
        sl.state = cannsim::detail::SlotState::Free;
        ++sl.gen;
    }

    bool VacantInQue() const { return depth <= 0 || count_ < depth; }
    bool HasTensorInQue() const { return count_ > 0; }
    int32_t GetTensorCountInQue() const { return count_; }
    bool HasIdleBuffer() const {
        auto& s = cannsim::detail::state();
        for (int k = 0; k < nslots_; ++k)
            if (s.slots[first_ + k].state == cannsim::detail::SlotState::Free) return true;
        return false;
    }
    void FreeAllEvent() {}

    // used by TPipe::InitBuffer
    void sim_init(int pipe_id, int num, uint32_t len, const cannsim::SrcLoc& loc) {
        first_ = cannsim::alloc_slots(pipe_id, static_cast<int>(src), true, num, len, loc);
        nslots_ = num; next_ = 0; head_ = 0; count_ = 0;
    }

private:
    static constexpr int kFifo = 64;
    template <typename T>
    LocalTensor<T> make(int i) const {
        auto& sl = cannsim::detail::state().slots[i];
        LocalTensor<T> t;
        t.addr_ = sl.offset; t.size_ = static_cast<uint32_t>(sl.bytes / sizeof(T));
        t.slot_ = i; t.gen_ = sl.gen; t.pos_ = dst;
        return t;
    }
    int first_ = 0, nslots_ = 0, next_ = 0;
    int fifo_[kFifo] = {};
    int head_ = 0, count_ = 0;
};

template <TPosition pos, int32_t depth = 1, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    template <typename T>
    LocalTensor<T> Get(CANNSIM_LOC) {
        return Get<T>(static_cast<uint32_t>(bytes() / sizeof(T)), loc);
    }
    template <typename T>
    LocalTensor<T> Get(uint32_t len, CANNSIM_LOC) {
        if (slot_ < 0)
            cannsim::report("L2.QUEUE_PROTOCOL", cannsim::Severity::Error, "TBuf::Get", loc.line(),
                            "TBuf::Get on a TBuf that TPipe::InitBuffer did not initialise", true);
        LocalTensor<T> t;
        auto& sl = cannsim::detail::state().slots[slot_];
        t.addr_ = sl.offset; t.size_ = len; t.slot_ = slot_; t.gen_ = sl.gen; t.pos_ = pos;
        return t;
    }
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, CANNSIM_LOC) {
        LocalTensor<T> t = Get<T>(size, loc);
        t.addr_ += bufOffset;
        return t;
    }
    void sim_init(int pipe_id, uint32_t len, const cannsim::SrcLoc& loc) {
        slot_ = cannsim::alloc_slots(pipe_id, static_cast<int>(pos), false, 1, len, loc);
    }

private:
    uint64_t bytes() const { return slot_ < 0 ? 0 : cannsim::detail::state().slots[slot_].bytes; }
    int slot_ = -1;
};

class TPipe {
public:
    TPipe() : id_(cannsim::detail::state().next_pipe_id++) { current_pipe_ref() = this; }
    ~TPipe() {
        cannsim::release_pipe(id_, "kernel end (TPipe destroyed)", true);
        if (current_pipe_ref() == this) current_pipe_ref() = nullptr;
    }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len, CANNSIM_LOC) {
        que.sim_init(id_, num, len, loc);
        return true;
    }
    template <TPosition pos>
    bool InitBuffer(TBuf<pos>& buf, uint32_t len, CANNSIM_LOC) {
        buf.sim_init(id_, len, loc);
        return true;
    }

    void Reset() { cannsim::release_pipe(id_, "TPipe::Reset", true); }
    void Destroy() { cannsim::release_pipe(id_, "TPipe::Destroy", true); }

    template <HardEvent evt>
    TEventID AllocEventID(CANNSIM_LOC) {
        auto& used = cannsim::detail::state().event_ids_used[static_cast<int>(evt)];
        for (int i = 0; i < 8; ++i)
            if (!(used & (1u << i))) { used |= static_cast<uint8_t>(1u << i); return static_cast<TEventID>(i); }
        cannsim::report("L2.SYNC_PAIRING", cannsim::Severity::Error, "AllocEventID", loc.line(),
                        cannsim::fmt("AllocEventID<HardEvent::%s>: all 8 event ids are allocated (ReleaseEventID missing?)",
                                     cannsim::event_pipes(evt).name));
        return 0;
    }
    template <HardEvent evt>
    void ReleaseEventID(TEventID id, CANNSIM_LOC) {
        cannsim::check_event_id("ReleaseEventID", id, loc);
        if (id >= 0 && id < 8)
            cannsim::detail::state().event_ids_used[static_cast<int>(evt)] &= static_cast<uint8_t>(~(1u << id));
    }
    TEventID FetchEventID(HardEvent evt) {
        const auto used = cannsim::detail::state().event_ids_used[static_cast<int>(evt)];
        for (int i = 0; i < 8; ++i) if (!(used & (1u << i))) return static_cast<TEventID>(i);
        return 0;
    }
    template <HardEvent evt>
    TEventID FetchEventID() { return FetchEventID(evt); }

private:
    int id_;
};

template <HardEvent evt>
inline void SetFlag(int32_t eventID, CANNSIM_LOC) { cannsim::set_flag(evt, eventID, loc); }
template <HardEvent evt>
inline void WaitFlag(int32_t eventID, CANNSIM_LOC) { cannsim::wait_flag(evt, eventID, loc); }

template <pipe_t pipe>
inline void PipeBarrier(CANNSIM_LOC) {
    (void)loc;
    cannsim::clear_pending(pipe);
    cannsim::record_cost(pipe, "PipeBarrier", 0, 0, 0);
}

inline int64_t GetBlockIdx() { return cannsim::detail::state().block_idx; }
inline int64_t GetBlockNum() { return cannsim::detail::state().block_num; }
// The user part of a kernel's workspace: CANN puts the library's system workspace at its front,
// of the size the host asks for with PlatformAscendC::GetLibApiWorkSpaceSize() (same rule here).
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) {
    if (workspace == nullptr) return nullptr;
    const int a = cannsim::arch();
    return workspace + (a == 2201 || a == 3510 ? 16u * 1024 * 1024 : 2u * 1024 * 1024);
}
// Sub-blocks of a MIX launch (mix_core.h): the AIVs of one AIC.
inline int64_t GetSubBlockIdx() { return cannsim::mix::self().sub; }
inline int64_t GetSubBlockNum() { return cannsim::mix::self().core == AIV && cannsim::mix::self().ratio > 0 ? cannsim::mix::self().ratio : 1; }
inline int64_t GetTaskRation() { return cannsim::mix::self().ratio > 0 ? cannsim::mix::self().ratio : 1; }

}  // namespace AscendC

// Older intrinsic spellings still found in kernels.
inline void pipe_barrier(pipe_t p) { cannsim::clear_pending(p); }
inline int64_t get_block_idx() { return cannsim::detail::state().block_idx; }
inline int64_t get_block_num() { return cannsim::detail::state().block_num; }

