// RED TEAM: the honest relu (tests/kernels/relu_tail_pad.cpp) breaking a rule and erasing the
// finding from the diagnostics stream, with calls the source scan does not refuse (`dprintf` and
// `fallocate` are neither file opens nor names of its list). The mode is the input's length
// (mode = elements / 4096 % 16; 65536 elements = mode 0 = the honest relu):
//   1 erase_error   InitBuffer twice the usable UB (L2.UB_CAPACITY, an error the block survives),
//                   then punch a hole over every descriptor's first 16 MB (fallocate), so the line
//                   becomes NUL bytes the runner cannot parse: with the diagnostics in a file the
//                   block can write, the run passed, correct, with the rule broken
//   2 glue_fatal    write an unterminated JSON prefix to every descriptor, then a fatal UB bounds
//                   breach (L2.UB_BOUNDS): the finding's line is glued to the prefix and lost, and
//                   the block's exit 86 was reported as a bare RUN.CRASH
//   3 forge         write a well-formed finding of another block's (a warning from block 999 by
//                   the harness) to every descriptor: it is shown, as this block's
//   4 group_flood   300 forged warnings on distinct lines, then the UB overuse of mode 1: the
//                   runner kept the first 200 distinct findings, so the error was never read
//   5 shadow        a forged warning with the error's id and line, then the UB overuse of mode 1:
//                   findings were grouped by id and line, so the error joined the warning's group
// The descriptors tried are 3..4100 but the event pipe (cost_timeline.h, 4000): writing there would
// only break the block's own event stream.
#include <cstdio>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct ReluTiling {
    uint64_t total;        // elements
    uint32_t alignElems;   // elements per 32 B
    uint32_t unitsPerCore; // 32 B units every core takes
    uint32_t formerNum;    // cores that take one unit more
    uint32_t tileLength;   // elements per tile
    uint32_t mode;         // the attack
};

enum Mode : uint32_t { HONEST = 0, ERASE_ERROR, GLUE_FATAL, FORGE, GROUP_FLOOD, SHADOW };

constexpr int32_t BUFFER_NUM = 2;
constexpr int kEventPipe = 4000;

extern "C" int fallocate(int fd, int mode, long offset, long len);

// Every open descriptor but the event pipe (found once: those an empty line can be written to).
template <typename F>
__aicore__ inline void each_descriptor(F f)
{
    static int open_fds[16], count = -1;
    if (count < 0) {
        count = 0;
        for (int fd = 3; fd <= 4100 && count < 16; ++fd)
            if (fd != kEventPipe && dprintf(fd, "\n") == 1) open_fds[count++] = fd;
    }
    for (int k = 0; k < count; ++k) f(open_fds[k]);
}

template <typename T>
class KernelRelu {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ReluTiling& t)
    {
        uint64_t idx = AscendC::GetBlockIdx();
        uint64_t big = (uint64_t)(t.unitsPerCore + 1) * t.alignElems;
        uint64_t small = (uint64_t)t.unitsPerCore * t.alignElems;
        uint64_t offset = idx < t.formerNum ? idx * big : t.formerNum * big + (idx - t.formerNum) * small;
        uint64_t share = idx < t.formerNum ? big : small;
        length_ = offset >= t.total ? 0 : (t.total - offset < share ? t.total - offset : share);
        tile_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + offset, length_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tile_ * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tile_ * sizeof(T));
        if constexpr (std::is_same_v<T, bfloat16_t>) {
            pipe_.InitBuffer(calc_, tile_ * sizeof(float));
        }
        if (t.mode == GROUP_FLOOD) {
            for (int line = 1000; line < 1300; ++line)
                each_descriptor([line](int fd) {
                    dprintf(fd, "{\"id\":\"L2.SYNC_MISSING\",\"severity\":\"warning\",\"api\":\"\",\"line\":%d,"
                                "\"block\":0,\"message\":\"flood\"}\n", line);
                });
        }
        if (t.mode == SHADOW) {
            const int line = __LINE__ + 7;   // the InitBuffer below
            each_descriptor([line](int fd) {
                dprintf(fd, "{\"id\":\"L2.UB_CAPACITY\",\"severity\":\"warning\",\"api\":\"InitBuffer\",\"line\":%d,"
                            "\"block\":0,\"message\":\"shadow\"}\n", line);
            });
        }
        // twice the usable UB: L2.UB_CAPACITY (an error; the emulator backs 4x UB and goes on)
        if (t.mode == ERASE_ERROR || t.mode == GROUP_FLOOD || t.mode == SHADOW) pipe_.InitBuffer(spare_, 2 * 192 * 1024);
        if (t.mode == ERASE_ERROR)
            each_descriptor([](int fd) { fallocate(fd, 3, 0, 1L << 24); });   // PUNCH_HOLE | KEEP_SIZE
        if (t.mode == FORGE) {
            each_descriptor([](int fd) {
                dprintf(fd, "{\"id\":\"RUN.CRASH\",\"severity\":\"warning\",\"api\":\"\",\"line\":0,\"block\":999,"
                            "\"message\":\"forged\",\"frames\":\"\",\"source\":\"harness\"}\n");
            });
        }
    }
    __aicore__ inline void Process()
    {
        for (uint64_t off = 0; off < length_; off += tile_) {
            uint32_t n = length_ - off < tile_ ? (uint32_t)(length_ - off) : tile_;
            CopyIn(off, n);
            Compute(n);
            CopyOut(off, n);
        }
    }
    __aicore__ inline void BreachBounds()
    {
        each_descriptor([](int fd) { dprintf(fd, "{\"glue\":\""); });
        AscendC::LocalTensor<T> y = outQ_.AllocTensor<T>();
        AscendC::Duplicate(y, static_cast<T>(0.0f), (int32_t)(4 * tile_));   // four times the buffer: fatal
        outQ_.FreeTensor(y);
    }

private:
    __aicore__ inline void CopyIn(uint64_t off, uint32_t n)
    {
        AscendC::LocalTensor<T> x = inQ_.AllocTensor<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(x, xGm_[off], n);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            AscendC::DataCopyPad(x, xGm_[off], cp, pad);
        }
        inQ_.EnQue(x);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        AscendC::LocalTensor<T> x = inQ_.DeQue<T>();
        AscendC::LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (std::is_same_v<T, bfloat16_t>) {
            AscendC::LocalTensor<float> f = calc_.Get<float>();
            AscendC::Cast(f, x, AscendC::RoundMode::CAST_NONE, n);
            AscendC::Maxs(f, f, 0.0f, n);
            AscendC::Cast(y, f, AscendC::RoundMode::CAST_RINT, n);
        } else {
            AscendC::Maxs(y, x, static_cast<T>(0.0f), n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }
    __aicore__ inline void CopyOut(uint64_t off, uint32_t n)
    {
        AscendC::LocalTensor<T> y = outQ_.DeQue<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(yGm_[off], y, n);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPad(yGm_[off], y, cp);
        }
        outQ_.FreeTensor(y);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQ_;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQ_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> calc_, spare_;
    AscendC::GlobalTensor<T> xGm_, yGm_;
    uint64_t length_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ReluTiling);
    GET_TILING_DATA(t, tiling);
    KernelRelu<DTYPE_X> op;
    op.Init(x, y, t);
    if (t.mode == GLUE_FATAL) op.BreachBounds();
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ReluTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    t->mode = (uint32_t)(t->total / 4096 % 16);
    t->alignElems = 32 / typeSize;
    uint64_t units = (t->total + t->alignElems - 1) / t->alignElems;
    uint64_t cores = platform.GetCoreNumAiv();
    if (units < cores) cores = units == 0 ? 1 : units;
    t->unitsPerCore = (uint32_t)(units / cores);
    t->formerNum = (uint32_t)(units % cores);
    t->tileLength = 8192;
    context->SetBlockDim((uint32_t)cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
