// Unique (torch.unique, sorted, with inverse) for Ascend 910B: presence table over an ordered key.
// Every dtype is handled through its raw bits: a monotone "ordered key" (sign-flipped integers,
// sign-magnitude -> offset for floats, -0.0 merged into +0.0) makes numeric order the key order.
// 8-bit types use 256 keys, 16-bit types 65536; 32/64-bit types use 65536 keys above the global
// minimum key (their value range must span < 65536 keys).
// Phases (every block calls SyncAll the same 3 times):
//  P0 (32/64-bit) every block finds the min/max key of its slice -> workspace slot; SyncAll.
//  P1 every block marks the keys of its slice in a UB table -> its workspace table; SyncAll.
//  P2 block 0 ORs the tables, walks the keys in order: rank table (uint16) to workspace, y values
//     to GM in chunks; SyncAll.
//  P3 (return_inverse) every block maps its slice through the rank table to int64 inverse.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct UniqueCustomTilingData {
    uint64_t numel;
    uint64_t perCore;      // elements per block slice
    uint64_t ySize;        // elements the y buffer holds
    uint32_t kind;         // 0 uint8, 1 int8, 2 fp16/bf16, 3 fp32, 4 int32, 5 int64
    uint32_t elemBytes;
    uint32_t retInv;
    uint32_t blockNum;
    uint32_t tbl;          // keys in the presence table (256 or 65536)
    uint32_t rsv;
};
REGISTER_TILING_DEFAULT(UniqueCustomTilingData);

using namespace AscendC;

constexpr uint32_t UB_BYTES = 176 * 1024;
constexpr uint32_t OFF_A = 0;              // 64 KB: presence table / merged table / rank table (128 KB)
constexpr uint32_t OFF_B = 64 * 1024;      // 64 KB: loaded table / rank chunk
constexpr uint32_t OFF_C = 128 * 1024;     // 32 KB: y chunk / inverse chunk
constexpr uint32_t OFF_D = 160 * 1024;     // 16 KB: min/max slots
constexpr uint32_t CHUNK_BYTES = 32 * 1024;
constexpr uint32_t WS_SLOT = 32;

template <typename R>
class KernelUnique {
public:
    __aicore__ inline KernelUnique() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR inverse, GM_ADDR workspace,
                                const UniqueCustomTilingData& t)
    {
        t_ = t;
        blk_ = static_cast<uint32_t>(GetBlockIdx());
        xGm_.SetGlobalBuffer((__gm__ R*)x);
        yGm_.SetGlobalBuffer((__gm__ R*)y);
        if (t.retInv != 0 && inverse != nullptr) {
            invGm_.SetGlobalBuffer((__gm__ int64_t*)inverse);
        }
        GM_ADDR usr = GetUserWorkspace(workspace);
        slotGm_.SetGlobalBuffer((__gm__ uint64_t*)usr);
        tblGm_.SetGlobalBuffer((__gm__ uint8_t*)(usr + t.blockNum * WS_SLOT));
        rankGm_.SetGlobalBuffer((__gm__ uint16_t*)(usr + t.blockNum * WS_SLOT + static_cast<uint64_t>(t.blockNum) * 65536));
        pipe_.InitBuffer(ub_, UB_BYTES);
        start_ = static_cast<uint64_t>(blk_) * t.perCore;
        end_ = start_ + t.perCore;
        if (start_ > t.numel) {
            start_ = t.numel;
        }
        if (end_ > t.numel) {
            end_ = t.numel;
        }
    }

    __aicore__ inline void Process()
    {
        // ---- P0: global minimum key (32/64-bit kinds)
        uint64_t gmin = 0;
        if (t_.kind >= 3) {
            uint64_t lo = ~0ULL, hi = 0;
            for (uint64_t i = start_; i < end_; ++i) {
                const uint64_t k = Key(static_cast<uint64_t>(xGm_.GetValue(i)));
                lo = k < lo ? k : lo;
                hi = k > hi ? k : hi;
            }
            LocalTensor<uint64_t> slot = ub_.GetWithOffset<uint64_t>(4, OFF_D);
            slot.SetValue(0, lo);
            slot.SetValue(1, hi);
            slot.SetValue(2, 0);
            slot.SetValue(3, 0);
            SToMte3();
            DataCopyPad(slotGm_[blk_ * 4], slot, DataCopyExtParams{1, WS_SLOT, 0, 0, 0});
        }
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        if (t_.kind >= 3) {
            LocalTensor<uint64_t> slots = ub_.GetWithOffset<uint64_t>(t_.blockNum * 4, OFF_D);
            DataCopyPad(slots, slotGm_, DataCopyExtParams{1, t_.blockNum * WS_SLOT, 0, 0, 0},
                        DataCopyPadExtParams<uint64_t>{false, 0, 0, 0});
            Mte2ToS();
            gmin = ~0ULL;
            for (uint32_t b = 0; b < t_.blockNum; ++b) {
                const uint64_t v = slots.GetValue(b * 4);
                gmin = v < gmin ? v : gmin;
            }
        }
        gmin_ = gmin;

        // ---- P1: presence of the slice's keys
        const uint32_t tbl = t_.tbl;
        LocalTensor<uint8_t> pres = ub_.GetWithOffset<uint8_t>(65536, OFF_A);
        LocalTensor<int16_t> pres16 = ub_.GetWithOffset<int16_t>(32768, OFF_A);
        Duplicate(pres16, static_cast<int16_t>(0), static_cast<int32_t>(tbl / 2));
        VToS();
        for (uint64_t i = start_; i < end_; ++i) {
            const uint64_t k = Key(static_cast<uint64_t>(xGm_.GetValue(i))) - gmin;
            if (k < tbl) {
                pres.SetValue(static_cast<uint32_t>(k), static_cast<uint8_t>(1));
            }
        }
        SToMte3();
        DataCopyPad(tblGm_[static_cast<uint64_t>(blk_) * 65536], pres, DataCopyExtParams{1, tbl, 0, 0, 0});
        PipeBarrier<PIPE_ALL>();
        SyncAll();

        // ---- P2: block 0 merges, ranks, writes y
        if (blk_ == 0) {
            MergeAndRank(tbl);
        }
        PipeBarrier<PIPE_ALL>();
        SyncAll();

        // ---- P3: inverse
        if (t_.retInv != 0) {
            Inverse(tbl);
        }
    }

private:
    __aicore__ inline void SToMte3()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE3));
        SetFlag<HardEvent::S_MTE3>(e);
        WaitFlag<HardEvent::S_MTE3>(e);
    }
    __aicore__ inline void Mte3ToS()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_S));
        SetFlag<HardEvent::MTE3_S>(e);
        WaitFlag<HardEvent::MTE3_S>(e);
    }
    __aicore__ inline void Mte2ToS()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
        SetFlag<HardEvent::MTE2_S>(e);
        WaitFlag<HardEvent::MTE2_S>(e);
    }
    __aicore__ inline void Mte2ToV()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        SetFlag<HardEvent::MTE2_V>(e);
        WaitFlag<HardEvent::MTE2_V>(e);
    }
    __aicore__ inline void VToMte2()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        SetFlag<HardEvent::V_MTE2>(e);
        WaitFlag<HardEvent::V_MTE2>(e);
    }
    __aicore__ inline void VToS()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e);
        WaitFlag<HardEvent::V_S>(e);
    }

    // monotone key of the raw bits (numeric order), -0.0 merged into +0.0
    __aicore__ inline uint64_t Key(uint64_t raw) const
    {
        switch (t_.kind) {
            case 0:
                return raw & 0xFFULL;
            case 1:
                return (raw ^ 0x80ULL) & 0xFFULL;
            case 2: {
                uint64_t b = raw & 0xFFFFULL;
                if (b == 0x8000ULL) {
                    b = 0;
                }
                return (b & 0x8000ULL) ? (~b & 0xFFFFULL) : (b | 0x8000ULL);
            }
            case 3: {
                uint64_t b = raw & 0xFFFFFFFFULL;
                if (b == 0x80000000ULL) {
                    b = 0;
                }
                return (b & 0x80000000ULL) ? (~b & 0xFFFFFFFFULL) : (b | 0x80000000ULL);
            }
            case 4:
                return (raw ^ 0x80000000ULL) & 0xFFFFFFFFULL;
            default:
                return raw ^ 0x8000000000000000ULL;
        }
    }

    __aicore__ inline uint64_t RawOf(uint64_t key) const
    {
        switch (t_.kind) {
            case 0:
                return key;
            case 1:
                return key ^ 0x80ULL;
            case 2:
                return (key & 0x8000ULL) ? (key & 0x7FFFULL) : (~key & 0xFFFFULL);
            case 3:
                return (key & 0x80000000ULL) ? (key & 0x7FFFFFFFULL) : (~key & 0xFFFFFFFFULL);
            case 4:
                return key ^ 0x80000000ULL;
            default:
                return key ^ 0x8000000000000000ULL;
        }
    }

    __aicore__ inline void MergeAndRank(uint32_t tbl)
    {
        LocalTensor<uint16_t> acc16 = ub_.GetWithOffset<uint16_t>(32768, OFF_A);
        LocalTensor<uint16_t> tmp16 = ub_.GetWithOffset<uint16_t>(32768, OFF_B);
        LocalTensor<uint8_t> tmp8 = ub_.GetWithOffset<uint8_t>(65536, OFF_B);
        LocalTensor<uint8_t> acc8 = ub_.GetWithOffset<uint8_t>(65536, OFF_A);
        for (uint32_t b = 1; b < t_.blockNum; ++b) {
            VToMte2();
            DataCopyPad(tmp8, tblGm_[static_cast<uint64_t>(b) * 65536], DataCopyExtParams{1, tbl, 0, 0, 0},
                        DataCopyPadExtParams<uint8_t>{false, 0, 0, 0});
            Mte2ToV();
            Or(acc16, acc16, tmp16, static_cast<int32_t>(tbl / 2));
        }
        VToS();
        // walk the keys in order: rank table (uint16, in halves of 32768 keys) and y chunks
        LocalTensor<uint16_t> rk = ub_.GetWithOffset<uint16_t>(32768, OFF_B);
        LocalTensor<R> yc = ub_.GetWithOffset<R>(CHUNK_BYTES / sizeof(R), OFF_C);
        const uint32_t ycap = CHUNK_BYTES / sizeof(R);
        uint64_t rank = 0, written = 0;
        uint32_t pos = 0;
        const uint32_t halves = tbl > 32768 ? 2 : 1;
        const uint32_t perHalf = tbl > 32768 ? 32768 : tbl;
        for (uint32_t h = 0; h < halves; ++h) {
            Mte3ToS();   // the previous half's rank copy has left UB
            for (uint32_t k = 0; k < perHalf; ++k) {
                const uint32_t key = h * 32768 + k;
                if (acc8.GetValue(key) != 0) {
                    rk.SetValue(k, static_cast<uint16_t>(rank));
                    yc.SetValue(pos, static_cast<R>(RawOf(static_cast<uint64_t>(key) + gmin_)));
                    ++pos;
                    ++rank;
                    if (pos == ycap) {
                        FlushY(yc, pos, written);
                        written += pos;
                        pos = 0;
                    }
                }
            }
            SToMte3();
            DataCopyPad(rankGm_[h * 32768], rk, DataCopyExtParams{1, perHalf * 2, 0, 0, 0});
        }
        if (pos > 0) {
            FlushY(yc, pos, written);
        }
        Mte3ToS();
    }

    __aicore__ inline void FlushY(LocalTensor<R>& yc, uint32_t pos, uint64_t written)
    {
        uint64_t n = pos;
        if (written >= t_.ySize) {
            n = 0;
        } else if (written + n > t_.ySize) {
            n = t_.ySize - written;
        }
        if (n > 0) {
            SToMte3();
            DataCopyPad(yGm_[written], yc, DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(R)), 0, 0, 0});
        }
        Mte3ToS();
    }

    __aicore__ inline void Inverse(uint32_t tbl)
    {
        LocalTensor<uint16_t> rk = ub_.GetWithOffset<uint16_t>(65536, OFF_A);
        DataCopyPad(rk, rankGm_, DataCopyExtParams{1, tbl * 2, 0, 0, 0}, DataCopyPadExtParams<uint16_t>{false, 0, 0, 0});
        Mte2ToS();
        LocalTensor<int64_t> oc = ub_.GetWithOffset<int64_t>(CHUNK_BYTES / 8, OFF_C);
        const uint32_t cap = CHUNK_BYTES / 8;
        uint32_t pos = 0;
        uint64_t outStart = start_;
        for (uint64_t i = start_; i < end_; ++i) {
            uint64_t k = Key(static_cast<uint64_t>(xGm_.GetValue(i))) - gmin_;
            k = k < tbl ? k : 0;
            oc.SetValue(pos, static_cast<int64_t>(rk.GetValue(static_cast<uint32_t>(k))));
            ++pos;
            if (pos == cap) {
                SToMte3();
                DataCopyPad(invGm_[outStart], oc, DataCopyExtParams{1, pos * 8, 0, 0, 0});
                Mte3ToS();
                outStart += pos;
                pos = 0;
            }
        }
        if (pos > 0) {
            SToMte3();
            DataCopyPad(invGm_[outStart], oc, DataCopyExtParams{1, pos * 8, 0, 0, 0});
            Mte3ToS();
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> ub_;
    GlobalTensor<R> xGm_, yGm_;
    GlobalTensor<int64_t> invGm_;
    GlobalTensor<uint64_t> slotGm_;
    GlobalTensor<uint8_t> tblGm_;
    GlobalTensor<uint16_t> rankGm_;
    UniqueCustomTilingData t_;
    uint32_t blk_ = 0;
    uint64_t start_ = 0, end_ = 0, gmin_ = 0;
};

extern "C" __global__ __aicore__ void unique_custom(GM_ADDR x, GM_ADDR y, GM_ADDR inverse, GM_ADDR workspace,
                                                    GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    if (t.elemBytes == 1) {
        KernelUnique<uint8_t> op;
        op.Init(x, y, inverse, workspace, t);
        op.Process();
    } else if (t.elemBytes == 2) {
        KernelUnique<uint16_t> op;
        op.Init(x, y, inverse, workspace, t);
        op.Process();
    } else if (t.elemBytes == 4) {
        KernelUnique<uint32_t> op;
        op.Init(x, y, inverse, workspace, t);
        op.Process();
    } else {
        KernelUnique<uint64_t> op;
        op.Init(x, y, inverse, workspace, t);
        op.Process();
    }
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* xShape = context->GetInputShape(0);
    if (xShape == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t numel = static_cast<uint64_t>(xShape->GetStorageShape().GetShapeSize());
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    uint32_t kind = 0, bytes = 1;
    if (dt == ge::DT_UINT8) {
        kind = 0;
        bytes = 1;
    } else if (dt == ge::DT_INT8) {
        kind = 1;
        bytes = 1;
    } else if (dt == ge::DT_FLOAT16 || dt == ge::DT_BF16) {
        kind = 2;
        bytes = 2;
    } else if (dt == ge::DT_FLOAT) {
        kind = 3;
        bytes = 4;
    } else if (dt == ge::DT_INT32) {
        kind = 4;
        bytes = 4;
    } else {
        kind = 5;
        bytes = 8;
    }
    bool retInv = false;
    auto* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const bool* ri = attrs->GetAttrPointer<bool>(0);
        retInv = ri != nullptr && *ri;
    }
    uint64_t ySize = numel;
    auto* yShape = context->GetOutputShape(0);
    if (yShape != nullptr) {
        const int64_t s = yShape->GetStorageShape().GetShapeSize();
        if (s > 0) {
            ySize = static_cast<uint64_t>(s);
        }
    }
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t cores = plat.GetCoreNumAiv();
    cores = cores == 0 ? 1 : cores;
    uint64_t blocks = (numel + 4095) / 4096;
    blocks = blocks < 1 ? 1 : blocks;
    blocks = blocks < cores ? blocks : cores;
    UniqueCustomTilingData* t = context->GetTilingData<UniqueCustomTilingData>();
    t->numel = numel;
    t->perCore = (numel + blocks - 1) / blocks;
    t->ySize = ySize;
    t->kind = kind;
    t->elemBytes = bytes;
    t->retInv = retInv ? 1 : 0;
    t->blockNum = static_cast<uint32_t>(blocks);
    t->tbl = kind <= 1 ? 256 : 65536;
    t->rsv = 0;
    context->SetBlockDim(static_cast<uint32_t>(blocks));
    const uint64_t userBytes = blocks * 32 + blocks * 65536 + 65536 * 2 + 1024;
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = static_cast<size_t>(userBytes + plat.GetLibApiWorkSpaceSize());
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (unique).
class UniqueCustom : public OpDef {
public:
    explicit UniqueCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_UINT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_UINT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("inverse")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("return_inverse").AttrType(OPTIONAL).Bool(false);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(UniqueCustom);
}  // namespace ops
