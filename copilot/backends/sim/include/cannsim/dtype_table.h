// Which element types each API accepts, per NPU arch. Data only: one row per API.
// Sources: asc-devkit docs/zh/api/SIMD-API (per-API "数据类型" sections), summarised in
// ascendc-facts.md sections 2.7 and 6. 2002 (310P) rows follow the A2 rows where the docs list
// the same set; rows marked UNVERIFIED in docs/emulator-api.md are best guesses.
#pragma once
#include <cstring>
#include "runtime.h"

namespace cannsim {

struct ApiDtypes {
    const char* api;
    uint32_t a2201;   // Atlas A2/A3 (910B, 910_93)
    uint32_t a3510;   // Ascend 950
    uint32_t a2002;   // Atlas inference (310P)
};

namespace dt {
constexpr uint32_t ARITH = DT_I16 | DT_F16 | DT_I32 | DT_F32;
constexpr uint32_t FLOATS = DT_F16 | DT_F32;
constexpr uint32_t ALL = DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32 |
                         DT_I64 | DT_U64 | DT_F64 | DT_BOOL;
constexpr uint32_t DUP = DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32;
}  // namespace dt

inline const ApiDtypes kApiDtypes[] = {
    {"Add", dt::ARITH, dt::ARITH | DT_BF16 | DT_I8 | DT_I64, dt::ARITH},
    {"Sub", dt::ARITH, dt::ARITH | DT_BF16 | DT_I8 | DT_I64, dt::ARITH},
    {"Mul", dt::ARITH, dt::ARITH | DT_BF16 | DT_I8 | DT_I64, dt::ARITH},
    {"Max", dt::ARITH, dt::ARITH | DT_BF16 | DT_I8 | DT_I64, dt::ARITH},
    {"Min", dt::ARITH, dt::ARITH | DT_BF16 | DT_I8 | DT_I64, dt::ARITH},
    {"Div", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Adds", dt::ARITH, dt::ARITH | DT_BF16, dt::ARITH},
    {"Muls", dt::ARITH, dt::ARITH | DT_BF16, dt::ARITH},
    {"Maxs", dt::ARITH, dt::ARITH | DT_BF16, dt::ARITH},
    {"Mins", dt::ARITH, dt::ARITH | DT_BF16, dt::ARITH},
    {"LeakyRelu", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Exp", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Ln", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Abs", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Sqrt", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Rsqrt", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Reciprocal", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Relu", DT_F16 | DT_I32 | DT_F32, DT_F16 | DT_I32 | DT_F32, DT_F16 | DT_I32 | DT_F32},
    {"Duplicate", dt::DUP, dt::DUP, dt::DUP & ~DT_BF16},
    {"ReduceSum", dt::FLOATS, dt::FLOATS | DT_I64 | DT_U64, dt::FLOATS},
    {"ReduceMax", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"ReduceMin", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"WholeReduceSum", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"WholeReduceMax", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"WholeReduceMin", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"BlockReduceSum", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"BlockReduceMax", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"BlockReduceMin", dt::FLOATS, dt::FLOATS, dt::FLOATS},
    {"Compare", dt::FLOATS | DT_I32, dt::FLOATS | DT_I32, dt::FLOATS},   // int32: EQ only (cmpsel.h)
    {"Compares", dt::FLOATS, dt::FLOATS | DT_I32, dt::FLOATS},
    {"Select", dt::FLOATS, dt::FLOATS | DT_BF16, dt::FLOATS},
    {"DataCopy", dt::ALL, dt::ALL, dt::ALL},
    {"DataCopyPad", dt::ALL, dt::ALL, 0},   // not provided on 310P-class devices
};

// Cast: (src, dst) pairs and the round modes each accepts on A2/A3
// (asc-devkit docs Cast.md, A2/A3 table). Mode bits: 1 << RoundMode value.
struct CastRule { uint32_t src, dst, modes; };
namespace cm {
constexpr uint32_t NONE = 1u << 0, RINT = 1u << 1, FLOOR = 1u << 2, CEIL = 1u << 3, ROUND = 1u << 4,
                   TRUNC = 1u << 5, ODD = 1u << 6;
constexpr uint32_t FIVE = RINT | FLOOR | CEIL | ROUND | TRUNC;
}  // namespace cm

inline const CastRule kCastA2[] = {
    {DT_F16, DT_I32, cm::FIVE}, {DT_F16, DT_I16, cm::FIVE}, {DT_F16, DT_F32, cm::NONE},
    {DT_F16, DT_I8, cm::FIVE | cm::NONE}, {DT_F16, DT_U8, cm::FIVE | cm::NONE},
    {DT_F32, DT_F32, cm::FIVE}, {DT_F32, DT_I32, cm::FIVE}, {DT_F32, DT_F16, cm::FIVE | cm::ODD | cm::NONE},
    {DT_F32, DT_I64, cm::FIVE}, {DT_F32, DT_I16, cm::FIVE}, {DT_F32, DT_BF16, cm::FIVE},
    {DT_BF16, DT_F32, cm::NONE}, {DT_BF16, DT_I32, cm::FIVE},
    {DT_U8, DT_F16, cm::NONE}, {DT_I8, DT_F16, cm::NONE},
    {DT_I16, DT_F16, cm::FIVE | cm::NONE}, {DT_I16, DT_F32, cm::NONE},
    {DT_I32, DT_F32, cm::FIVE | cm::NONE}, {DT_I32, DT_I16, cm::NONE}, {DT_I32, DT_F16, cm::NONE},
    {DT_I32, DT_I64, cm::NONE}, {DT_I64, DT_I32, cm::NONE}, {DT_I64, DT_F32, cm::FIVE},
};
// Ascend 950 (arch 3510) has a table of its own (asc-devkit docs Cast.md, 950PR/950DT table;
// fp8/fp4/hifloat8/int4/complex pairs left out: the emulator has no such element types).
inline const CastRule kCast3510[] = {
    {DT_I8, DT_I16, cm::NONE}, {DT_I8, DT_F16, cm::NONE}, {DT_I8, DT_I32, cm::NONE},
    {DT_U8, DT_U16, cm::NONE}, {DT_U8, DT_F16, cm::NONE}, {DT_U8, DT_U32, cm::NONE},
    {DT_I16, DT_U8, cm::NONE}, {DT_I16, DT_F16, cm::FIVE}, {DT_I16, DT_I32, cm::NONE},
    {DT_I16, DT_U32, cm::NONE}, {DT_I16, DT_F32, cm::NONE},
    {DT_U16, DT_U8, cm::NONE}, {DT_U16, DT_U32, cm::NONE},
    {DT_F16, DT_I8, cm::FIVE}, {DT_F16, DT_U8, cm::FIVE}, {DT_F16, DT_I16, cm::FIVE},
    {DT_F16, DT_BF16, cm::FIVE}, {DT_F16, DT_I32, cm::FIVE}, {DT_F16, DT_F32, cm::NONE},
    {DT_BF16, DT_F16, cm::FIVE}, {DT_BF16, DT_I32, cm::FIVE}, {DT_BF16, DT_F32, cm::NONE},
    {DT_I32, DT_U8, cm::NONE}, {DT_I32, DT_I16, cm::NONE}, {DT_I32, DT_U16, cm::NONE},
    {DT_I32, DT_F16, cm::NONE}, {DT_I32, DT_F32, cm::FIVE}, {DT_I32, DT_I64, cm::NONE},
    {DT_U32, DT_U8, cm::NONE}, {DT_U32, DT_I16, cm::NONE}, {DT_U32, DT_U16, cm::NONE},
    {DT_F32, DT_I16, cm::FIVE}, {DT_F32, DT_F16, cm::FIVE | cm::ODD | cm::NONE}, {DT_F32, DT_BF16, cm::FIVE},
    {DT_F32, DT_I32, cm::FIVE}, {DT_F32, DT_F32, cm::FIVE}, {DT_F32, DT_I64, cm::FIVE},
    {DT_I64, DT_I32, cm::NONE}, {DT_I64, DT_F32, cm::FIVE}, {DT_I64, DT_F64, cm::FIVE},
    {DT_F64, DT_BF16, cm::FIVE}, {DT_F64, DT_I32, cm::TRUNC}, {DT_F64, DT_F32, cm::FIVE},
    {DT_F64, DT_I64, cm::TRUNC},
};

inline const ApiDtypes* find_api_dtypes(const char* api) {
    for (const auto& r : kApiDtypes) if (std::strcmp(r.api, api) == 0) return &r;
    return nullptr;
}

inline uint32_t api_dtype_mask(const ApiDtypes& r) {
    switch (arch()) {
        case 3510: return r.a3510;
        case 2002: return r.a2002;
        default: return r.a2201;
    }
}

// True when the pair and mode are listed for the configured arch.
inline bool cast_supported(uint32_t src, uint32_t dst, int mode, bool* pair_known) {
    auto scan = [&](const CastRule* b, const CastRule* e) -> int {
        for (auto* r = b; r != e; ++r)
            if (r->src == src && r->dst == dst) return (r->modes >> mode) & 1u ? 1 : 0;
        return -1;
    };
    int res = arch() == 3510 ? scan(std::begin(kCast3510), std::end(kCast3510))
                             : scan(std::begin(kCastA2), std::end(kCastA2));
    if (res >= 0 && arch() == 2002 && (src == DT_BF16 || dst == DT_BF16)) res = -1;
    *pair_known = res >= 0;
    return res == 1;
}

}  // namespace cannsim
