// GatherRows, y[i, :] = x[index[i], :]: the pass-through (GM -> UB -> GM) exemplar of the Cannpilot
// knowledge base, written for Cannpilot from documented AscendC behaviour.
// Shows: a row permutation as in MoE token routing. The output rows are split over the cores; each
// core reads its slice of the index into UB, then fills a tile with k gathered rows (one DataCopyPad
// each, at a 32-byte row stride in UB) and writes the k rows, which are contiguous in y, with ONE
// DataCopyPad. The tile goes through a TQueBind<VECIN, VECOUT>: no vector instruction touches the
// data, the queue's EnQue/DeQue orders the copy-out (MTE3) after the copy-in (MTE2), and its two
// buffers let the next tile's copy-in run while this one is written. A row longer than a tile is
// copied in chunks (k = 1).
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t TILE_BYTES = 32 * 1024;   // per buffer; two buffers + the index chunk use 72 KB of UB
constexpr uint32_t INDEX_CHUNK = 2048;       // index entries read into UB at a time (8 KB)

struct GatherRowsTilingData {
    uint32_t rowsBase;      // every core writes rowsBase output rows,
    uint32_t rowsExtra;     //   and the first rowsExtra cores one more
    uint32_t rowLen;        // D, elements per row
    uint32_t chunkLen;      // elements of a row per copy: D, or a 32 B multiple when a row exceeds a tile
    uint32_t rowsPerTile;   // k: rows per tile (1 when rows are chunked)
    uint32_t tableRows;     // R, rows of x
};
REGISTER_TILING_DEFAULT(GatherRowsTilingData);

using namespace AscendC;

template <typename T>
class KernelGatherRows {
public:
    __aicore__ inline KernelGatherRows() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const GatherRowsTilingData& t)
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        const uint64_t firstRow = static_cast<uint64_t>(idx) * t.rowsBase + (idx < t.rowsExtra ? idx : t.rowsExtra);
        rows_ = t.rowsBase + (idx < t.rowsExtra ? 1 : 0);
        D_ = t.rowLen;
        chunkLen_ = t.chunkLen;
        rowsPerTile_ = t.rowsPerTile;
        // UB row stride of a tile: a chunk rounded up to 32 bytes (DataCopyPad's row in UB)
        ubStride_ = (chunkLen_ * sizeof(T) + 31) / 32 * 32 / sizeof(T);
        xGm_.SetGlobalBuffer((__gm__ T*)x, static_cast<uint64_t>(t.tableRows) * D_);
        indexGm_.SetGlobalBuffer((__gm__ int32_t*)index + firstRow, rows_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + firstRow * D_, static_cast<uint64_t>(rows_) * D_);
        pipe_.InitBuffer(tiles_, 2, TILE_BYTES);
        pipe_.InitBuffer(indexBuf_, INDEX_CHUNK * sizeof(int32_t));
    }

    __aicore__ inline void Process()
    {
        LocalTensor<int32_t> index = indexBuf_.Get<int32_t>();
        for (uint32_t base = 0; base < rows_; base += INDEX_CHUNK) {
            const uint32_t count = rows_ - base < INDEX_CHUNK ? rows_ - base : INDEX_CHUNK;
            LoadIndex(index, base, count);
            for (uint32_t r = 0; r < count; r += rowsPerTile_) {
                const uint32_t k = count - r < rowsPerTile_ ? count - r : rowsPerTile_;
                for (uint32_t c = 0; c < D_; c += chunkLen_) {
                    const uint32_t len = D_ - c < chunkLen_ ? D_ - c : chunkLen_;
                    CopyIn(index, r, k, c, len);
                    CopyOut(base + r, k, c, len);
                }
            }
        }
    }

private:
    // index[0, count) = the row numbers of output rows base .. base + count - 1
    __aicore__ inline void LoadIndex(const LocalTensor<int32_t>& index, uint32_t base, uint32_t count)
    {
        DataCopyExtParams copy{1, static_cast<uint32_t>(count * sizeof(int32_t)), 0, 0, 0};
        DataCopyPadExtParams<int32_t> noPad{false, 0, 0, 0};
        DataCopyPad(index, indexGm_[base], copy, noPad);
        // the scalar unit reads the row numbers: wait for the copy (MTE2) to land
        const event_t toS = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
        SetFlag<HardEvent::MTE2_S>(toS);
        WaitFlag<HardEvent::MTE2_S>(toS);
    }

    // Columns [c, c + len) of the k rows index[r .. r + k) of x, one UB row each.
    __aicore__ inline void CopyIn(const LocalTensor<int32_t>& index, uint32_t r, uint32_t k, uint32_t c, uint32_t len)
    {
        LocalTensor<T> tile = tiles_.AllocTensor<T>();
        DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> noPad{false, 0, 0, 0};
        for (uint32_t j = 0; j < k; ++j) {
            const uint64_t row = static_cast<uint64_t>(index.GetValue(r + j));
            DataCopyPad(tile[j * ubStride_], xGm_[row * D_ + c], copy, noPad);
        }
        tiles_.EnQue(tile);
    }

    // The k rows are consecutive in y: one copy of k blocks, D elements apart in GM.
    __aicore__ inline void CopyOut(uint32_t outRow, uint32_t k, uint32_t c, uint32_t len)
    {
        LocalTensor<T> tile = tiles_.DeQue<T>();
        const uint32_t gapBytes = (D_ - len) * sizeof(T);
        DataCopyExtParams copy{static_cast<uint16_t>(k), static_cast<uint32_t>(len * sizeof(T)), 0, gapBytes, 0};
        DataCopyPad(yGm_[static_cast<uint64_t>(outRow) * D_ + c], tile, copy);
        tiles_.FreeTensor(tile);
    }

    TPipe pipe_;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> tiles_;
    TBuf<TPosition::VECCALC> indexBuf_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<int32_t> indexGm_;
    uint32_t rows_ = 0;
    uint32_t D_ = 0;
    uint32_t chunkLen_ = 0;
    uint32_t rowsPerTile_ = 0;
    uint32_t ubStride_ = 0;
};

extern "C" __global__ __aicore__ void gather_rows_custom(GM_ADDR x, GM_ADDR index, GM_ADDR y, GM_ADDR workspace,
                                                         GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelGatherRows<DTYPE_X> op;
    op.Init(x, index, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<GatherRowsTilingData>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const auto& xShape = context->GetInputShape(0)->GetStorageShape();
    const uint64_t tableRows = xShape.GetDim(0);
    const uint64_t D = xShape.GetDimNum() > 1 ? xShape.GetDim(1) : 1;
    const uint64_t outRows = context->GetInputShape(1)->GetStorageShape().GetShapeSize();
    const uint64_t elemBytes = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    const uint64_t cores = platform.GetCoreNumAiv();
    const uint64_t used = outRows == 0 ? 1 : (outRows < cores ? outRows : cores);
    const uint64_t rowBytes = (D * elemBytes + 31) / 32 * 32;
    t->tableRows = static_cast<uint32_t>(tableRows);
    t->rowLen = static_cast<uint32_t>(D);
    if (rowBytes <= TILE_BYTES) {             // whole rows, as many as a tile holds (DataCopyPad: <= 4095)
        const uint64_t k = TILE_BYTES / rowBytes;
        t->chunkLen = static_cast<uint32_t>(D);
        t->rowsPerTile = static_cast<uint32_t>(k < 4095 ? k : 4095);
    } else {                                  // a row in tile-sized chunks, one row per tile
        t->chunkLen = static_cast<uint32_t>(TILE_BYTES / elemBytes);
        t->rowsPerTile = 1;
    }
    t->rowsBase = static_cast<uint32_t>(outRows / used);
    t->rowsExtra = static_cast<uint32_t>(outRows % used);
    context->SetBlockDim(static_cast<uint32_t>(used));
    context->GetWorkspaceSizes(1)[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class GatherRowsCustom : public OpDef {
public:
    explicit GatherRowsCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("index").ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b").AddConfig("ascend950");
    }
};
OP_ADD(GatherRowsCustom);
}  // namespace ops
