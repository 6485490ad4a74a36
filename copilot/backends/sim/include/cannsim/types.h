// Kernel qualifiers, pipes, events, positions, modes and parameter structs of the AscendC
// vector API (names and field order as documented; see docs/emulator-api.md).
#pragma once
#include <cstdint>
#include <cstddef>
#include "fp16.h"

#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __vector__
#define __vector__
#endif
#ifndef __inout_pipe__
#define __inout_pipe__(x)
#endif
#ifndef __in_pipe__
#define __in_pipe__(x)
#endif
#ifndef __out_pipe__
#define __out_pipe__(x)
#endif
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t*
#endif
#ifndef ASCENDC_CPU_DEBUG
#define ASCENDC_CPU_DEBUG 1
#endif

// Pipes and event ids are global names on the device.
enum pipe_t : int {
    PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL,
    PIPE_MTE4, PIPE_MTE5, PIPE_V2, PIPE_FIX, MAX_PIPE
};
enum event_t : int {
    EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7
};

namespace AscendC {
using ::half;
using ::bfloat16_t;
using TEventID = int8_t;

enum class TPosition : uint8_t {
    GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC,
    SPM, SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX
};
using QuePosition = TPosition;

enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V,
    MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3,
    S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3,
    MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};

enum class RoundMode : uint8_t {
    CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD,
    CAST_HYBRID, CAST_EVEN, CAST_ZERO
};
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
enum class ReduceType : uint8_t { SUM = 0, MAX, MIN };
enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };
enum class PaddingMode : uint8_t { Normal = 0, Compact };

struct BinaryRepeatParams {
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
    uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep,
                       uint8_t src0Rep, uint8_t src1Rep)
        : dstBlkStride(dstBlk), src0BlkStride(src0Blk), src1BlkStride(src1Blk),
          dstRepStride(dstRep), src0RepStride(src0Rep), src1RepStride(src1Rep) {}
};

struct UnaryRepeatParams {
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint8_t dstRepStride = 8, srcRepStride = 8;
    UnaryRepeatParams() = default;
    UnaryRepeatParams(uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep)
        : dstBlkStride(dstBlk), srcBlkStride(srcBlk), dstRepStride(dstRep), srcRepStride(srcRep) {}
};

struct DataCopyParams {
    uint16_t blockCount = 1, blockLen = 0, srcStride = 0, dstStride = 0;
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
};

struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0, srcStride = 0, dstStride = 0, rsv = 0;
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn,
                      uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
};

struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    uint64_t paddingValue = 0;
    DataCopyPadParams() = default;
    DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

template <typename T>
struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    T paddingValue{};
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

// Element-type helpers kernels commonly use.
template <typename T> using PrimT = T;
template <typename T, typename U> struct IsSameType { static constexpr bool value = false; };
template <typename T> struct IsSameType<T, T> { static constexpr bool value = true; };

constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t MAX_REPEAT_TIMES = 255;
// Mask arguments for isSetMask = false calls (the mask register is used instead).
constexpr uint64_t MASK_PLACEHOLDER = 0;
inline constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};
}  // namespace AscendC
