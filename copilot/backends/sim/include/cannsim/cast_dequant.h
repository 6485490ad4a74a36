// CastDequant: quantize int16_t to int8_t/uint8_t with the DEQSCALE parameters (scale, s9 offset,
// signMode; one set from SetDeqScale(float, int16_t, bool), or with isVecDeq the 16 sets of
// SetDeqScale(vdeqTensor, VdeqInfo), element k taking set k % 16), and int32_t to half times the
// SetDeqScale(half) scale; count, mask-bit and mask-continuous forms.
// int16 -> 8-bit: each 32 B source datablock (16 elements) gives one 32 B destination datablock
// whose lower (halfBlock = true, bytes 16..31) or upper half (bytes 0..15) holds the 16 results; the
// other half is left as it was. The reference gives the formulas as images: here the result is
// src * scale + offset rounded to nearest, ties to even, saturated to the output type (UNVERIFIED
// beyond the reference's examples); int32 -> half rounds src * scale once to half.
#pragma once
#include "cast.h"
#include "hl_common.h"

namespace cannsim {

constexpr uint32_t CAST_DEQUANT_TYPES = DT_I8 | DT_U8 | DT_F16 | DT_I16 | DT_I32;
inline const ApiDtypes kCastDequantDtypes[] = {
    {"CastDequant", CAST_DEQUANT_TYPES, CAST_DEQUANT_TYPES, DT_I8 | DT_U8 | DT_I16},
};

constexpr int VDEQ_GROUPS = 16;

// The DEQSCALE register as the 8-bit quantizing path reads it.
struct DeqRegister {
    float scale[VDEQ_GROUPS] = {};
    int16_t offset[VDEQ_GROUPS] = {};
    bool sign[VDEQ_GROUPS] = {};
    bool scalar_set = false, vector_set = false;
};
inline DeqRegister& deq_register() {
    static DeqRegister r;
    return r;
}

inline int16_t s9(int16_t v) {               // the low 9 bits, sign-extended
    int x = v & 0x1FF;
    return static_cast<int16_t>(x & 0x100 ? x - 0x200 : x);
}

template <typename T, typename U, bool isVecDeq, bool halfBlock>
inline void cast_dequant(Operand* ops, const Lanes& L, const SrcLoc& loc) {
    const char* api = "CastDequant";
    const ApiDtypes* row = row_of(kCastDequantDtypes, api);
    check_dtype_row(api, row, dtype_of<T>(), loc);
    check_dtype_row(api, row, dtype_of<U>(), loc);
    constexpr bool to8 = std::is_same_v<U, int16_t> && (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>);
    constexpr bool to16 = std::is_same_v<U, int32_t> && std::is_same_v<T, half>;
    if constexpr (!to8 && !to16) {
        report("L2.DTYPE_UNSUPPORTED", Severity::Error, api, loc.line(),
               fmt("CastDequant converts int16_t -> int8_t/uint8_t or int32_t -> half, not %s -> %s",
                   dtype_name(dtype_of<U>()), dtype_name(dtype_of<T>())));
        return;
    } else {
        const DeqRegister& reg = deq_register();
        if constexpr (to8) {
            if (isVecDeq && !reg.vector_set) {
                hl_param_error(api, loc, "CastDequant<..., isVecDeq = true> reads the 16 parameter sets of "
                                         "SetDeqScale(vdeqTensor, vdeqInfo), and none was set (set isVecDeq = false "
                                         "after SetDeqScale(scale, offset, signMode))");
                return;
            }
            if (!isVecDeq && !reg.scalar_set) {
                hl_param_error(api, loc, "CastDequant<..., isVecDeq = false> needs SetDeqScale(scale, offset, "
                                         "signMode) first (SetDeqScale with a tensor requires isVecDeq = true)");
                return;
            }
            const bool want_sign = std::is_same_v<T, int8_t>;
            for (int g = 0; g < (isVecDeq ? VDEQ_GROUPS : 1); ++g)
                if (reg.sign[g] != want_sign) {
                    hl_param_error(api, loc, fmt("CastDequant to %s needs signMode = %s (parameter set %d has %s)",
                                                 dtype_name(dtype_of<T>()), want_sign ? "true" : "false", g,
                                                 reg.sign[g] ? "true" : "false"));
                    return;
                }
        }
        const uint64_t lanes = check_operands(api, ops, 2, L, loc);
        uint8_t* d = ub_at(ops[0].addr);
        const uint8_t* s = ub_at(ops[1].addr);
        const float half_scale = detail::state().deq_scale;
        if (!count_only()) for_lanes<2>(ops, L, [&](uint64_t i, uint64_t j) {
            const U v = ld<U>(s + j * sizeof(U));
            if constexpr (to8) {
                const int g = isVecDeq ? static_cast<int>(j % VDEQ_GROUPS) : 0;
                const double x = static_cast<double>(v) * reg.scale[g] + s9(reg.offset[g]);
                d[(i / 16) * 32 + (halfBlock ? 16 : 0) + i % 16] =
                    static_cast<uint8_t>(cast_value<T>(x, AscendC::RoundMode::CAST_RINT));
            } else {
                st<half>(d + i * 2, cast_value<half>(static_cast<double>(v) * half_scale, AscendC::RoundMode::CAST_RINT));
            }
        });
        mark_written(ops[0].slot, PIPE_V);
        record_cost(PIPE_V, api, dtype_of<U>(), lanes, lanes * (sizeof(U) + 2));
    }
}

// The destination operand: for int16 -> 8-bit every source element owns two bytes of it (one
// 32 B block per 16 elements), so it is strided like a 16-bit tensor.
template <typename T, typename U>
inline Operand cast_dequant_dst(const AscendC::LocalTensor<T>& dst) {
    Operand o = operand("dst", dst, true);
    if (sizeof(T) == 1 && sizeof(U) == 2) o.esize = 2;
    return o;
}

}  // namespace cannsim

namespace AscendC {

constexpr uint8_t VDEQ_TENSOR_SIZE = 16;

struct VdeqInfo {
    VdeqInfo() {}
    VdeqInfo(const float vdeqScaleIn[VDEQ_TENSOR_SIZE], const int16_t vdeqOffsetIn[VDEQ_TENSOR_SIZE],
             const bool vdeqSignModeIn[VDEQ_TENSOR_SIZE]) {
        for (int i = 0; i < VDEQ_TENSOR_SIZE; ++i) {
            vdeqScale[i] = vdeqScaleIn[i]; vdeqOffset[i] = vdeqOffsetIn[i]; vdeqSignMode[i] = vdeqSignModeIn[i];
        }
    }
    float vdeqScale[VDEQ_TENSOR_SIZE] = {};
    int16_t vdeqOffset[VDEQ_TENSOR_SIZE] = {};
    bool vdeqSignMode[VDEQ_TENSOR_SIZE] = {};
};

inline void SetDeqScale(float scale, int16_t offset, bool signMode) {
    auto& r = cannsim::deq_register();
    r.scale[0] = scale; r.offset[0] = offset; r.sign[0] = signMode;
    r.scalar_set = true; r.vector_set = false;
}

// The 16 sets go into the 128-byte vdeqTensor (one uint64_t each: scale bits, offset, sign; the
// emulator's packing) and the register points at them.
template <typename T>
inline void SetDeqScale(const LocalTensor<T>& vdeqTensor, const VdeqInfo& vdeqInfo, CANNSIM_LOC) {
    using namespace cannsim;
    static_assert(std::is_same_v<T, uint64_t>, "SetDeqScale(vdeqTensor, vdeqInfo) takes a LocalTensor<uint64_t>");
    const HlSpan t = span("vdeqTensor", vdeqTensor, VDEQ_GROUPS, true);
    hl_check_spans("SetDeqScale", {t}, loc);
    auto& r = deq_register();
    for (int i = 0; i < VDEQ_GROUPS; ++i) {
        r.scale[i] = vdeqInfo.vdeqScale[i]; r.offset[i] = vdeqInfo.vdeqOffset[i]; r.sign[i] = vdeqInfo.vdeqSignMode[i];
        uint32_t bits;
        std::memcpy(&bits, &r.scale[i], 4);
        const uint64_t word = bits | (uint64_t(static_cast<uint16_t>(r.offset[i]) & 0x1FF) << 37) |
                              (uint64_t(r.sign[i]) << 46);
        if (!count_only()) st<uint64_t>(ub_at(vdeqTensor.addr_ + 8 * i), word);
    }
    r.vector_set = true; r.scalar_set = false;
    cost::scalar_access(vdeqTensor.slot_, true);
    vault::close_data();
}

template <typename T, typename U, bool isVecDeq = true, bool halfBlock = true>
inline void CastDequant(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint32_t count, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::cast_dequant_dst<T, U>(dst), cannsim::operand("src", src)};
    cannsim::cast_dequant<T, U, isVecDeq, halfBlock>(ops, cannsim::count_lanes(count), loc);
}

template <typename T, typename U, bool isSetMask = true, bool isVecDeq = true, bool halfBlock = true>
inline void CastDequant(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[], uint8_t repeatTime,
                        const UnaryRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::cast_dequant_dst<T, U>(dst), cannsim::operand("src", src)};
    cannsim::set_unary_strides(ops, repeatParams);
    const uint32_t es = sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U);
    auto L = cannsim::mask_lanes("CastDequant", mask, repeatTime, isSetMask, es, true, loc);
    cannsim::cast_dequant<T, U, isVecDeq, halfBlock>(ops, L, loc);
}

template <typename T, typename U, bool isSetMask = true, bool isVecDeq = true, bool halfBlock = true>
inline void CastDequant(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask, uint8_t repeatTime,
                        const UnaryRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::cast_dequant_dst<T, U>(dst), cannsim::operand("src", src)};
    cannsim::set_unary_strides(ops, repeatParams);
    const uint32_t es = sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U);
    auto L = cannsim::mask_lanes("CastDequant", static_cast<uint64_t>(mask), repeatTime, isSetMask, es, true, loc);
    cannsim::cast_dequant<T, U, isVecDeq, halfBlock>(ops, L, loc);
}

}  // namespace AscendC
