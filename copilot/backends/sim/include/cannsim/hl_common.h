// Shared machinery of the emulated high-level (library) APIs and the sort instructions: dtype rows
// per chip, operand checks (alignment, UB range, liveness, overlap), tmp-buffer checks and the cost
// of a composite API as the vector instructions it is made of.
#pragma once
#include <cmath>
#include <initializer_list>
#include "vec_engine.h"

namespace cannsim {

// Element types each library API (and sort instruction) accepts on A2/A3, 950 and 310P.
constexpr uint32_t HL_FLOATS = DT_F16 | DT_F32;
constexpr uint32_t HL_FLOATS_BFLOAT = DT_F16 | DT_F32 | DT_BF16;
constexpr uint32_t HL_SHORTS = DT_I16 | DT_U16;
constexpr uint32_t HL_HALFWORDS = DT_F16 | DT_I16 | DT_U16;
constexpr uint32_t HL_TRANSPOSE_NCHW = DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32;
constexpr uint32_t HL_REDUCE_WIDE = DT_F32 | DT_I32 | DT_U32 | DT_I64 | DT_U64;
inline const ApiDtypes kHlApiDtypes[] = {
    {"Sort32", HL_FLOATS, HL_FLOATS, 0}, {"MrgSort", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Concat", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Sort", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Extract", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"TopK", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Tanh", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Sin", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Cos", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Tan", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Asin", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Acos", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Atan", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Sinh", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Cosh", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Asinh", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Acosh", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Atanh", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Erf", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Erfc", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Frac", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Sign", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Trunc", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Floor", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Ceil", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Round", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Lgamma", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Digamma", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Log", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Log2", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Log10", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Exp", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Fmod", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Xor", HL_SHORTS, HL_SHORTS, HL_SHORTS},
    {"Power", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"ClampMax", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"ClampMin", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Sigmoid", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Silu", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Swish", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"Gelu", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"FasterGelu", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"FasterGeluV2", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"GeGLU", HL_FLOATS, HL_FLOATS_BFLOAT, HL_FLOATS},
    {"ReGlu", HL_FLOATS_BFLOAT, HL_FLOATS_BFLOAT, HL_FLOATS}, {"SwiGLU", HL_FLOATS_BFLOAT, HL_FLOATS_BFLOAT, HL_FLOATS},
    {"SoftMax", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"SimpleSoftMax", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"LogSoftMax", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"RmsNorm", HL_FLOATS, HL_FLOATS_BFLOAT, HL_FLOATS},
    {"LayerNorm", HL_FLOATS, HL_FLOATS_BFLOAT, HL_FLOATS}, {"AscendQuant", HL_FLOATS, HL_FLOATS_BFLOAT, HL_FLOATS},
    {"AscendDequant", HL_FLOATS_BFLOAT, HL_FLOATS_BFLOAT, HL_FLOATS},
    {"AscendAntiQuant", HL_FLOATS_BFLOAT & ~DT_F32, HL_FLOATS_BFLOAT & ~DT_F32, DT_F16},
    {"Sum", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Mean", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"ReduceSumHL", DT_F32, HL_REDUCE_WIDE, DT_F32}, {"ReduceMeanHL", DT_F32, HL_REDUCE_WIDE, DT_F32},
    {"ReduceProdHL", DT_F32, HL_REDUCE_WIDE, DT_F32}, {"ReduceMaxHL", HL_FLOATS, HL_FLOATS | HL_REDUCE_WIDE, HL_FLOATS},
    {"ReduceMinHL", HL_FLOATS, HL_FLOATS | HL_REDUCE_WIDE, HL_FLOATS}, {"ReduceAnyHL", DT_F32 | DT_U8, DT_F32 | DT_U8, DT_F32},
    {"ReduceAllHL", DT_F32 | DT_U8, DT_F32 | DT_U8, DT_F32}, {"ReduceXorSum", DT_I16, DT_I16, DT_I16},
    {"CumSum", HL_FLOATS, HL_FLOATS, HL_FLOATS}, {"Normalize", HL_FLOATS, HL_FLOATS_BFLOAT, HL_FLOATS}, {"RepeatReduceSum", HL_FLOATS, HL_FLOATS | DT_I32 | DT_U32, HL_FLOATS}, {"Transpose", HL_HALFWORDS, HL_HALFWORDS, HL_HALFWORDS}, {"TransposeNCHW", HL_TRANSPOSE_NCHW, HL_TRANSPOSE_NCHW | DT_BF16, HL_HALFWORDS},
};

// The library's dtype rule at the caller's line (the basic APIs' table is dtype_table.h).
// `row` names the table row (the API, or "<Api>HL" where a basic instruction has the same name).
inline void hl_check_dtype(const char* row_name, uint32_t dtype, const SrcLoc& loc, const char* api = nullptr) {
    const ApiDtypes* r = nullptr;
    for (const auto& row : kHlApiDtypes)
        if (std::strcmp(row.api, row_name) == 0) { r = &row; break; }
    check_dtype_row(api ? api : row_name, r, dtype, loc);
}

// One tensor operand of a library call: [addr, addr + bytes) of UB.
struct HlSpan {
    const char* name;
    uint64_t addr, bytes;
    int slot;
    uint32_t gen;
    bool is_dst;
};

template <typename T>
inline HlSpan span(const char* name, const AscendC::LocalTensor<T>& t, uint64_t elements, bool is_dst = false) {
    return HlSpan{name, t.addr_, elements * sizeof(T), t.slot_, t.gen_, is_dst};
}

// Liveness, 32 B alignment (align = 32) or `align` bytes, and the UB range of each operand.
inline void hl_check_spans(const char* api, std::initializer_list<HlSpan> spans, const SrcLoc& loc,
                           uint32_t align = 32) {
    for (const HlSpan& s : spans) {
        check_live(api, s.slot, s.gen, loc);
        if (align == 32) check_align32(api, s.name, s.addr, loc);
        else if (s.addr % align != 0)
            report("L2.API_PARAM", Severity::Error, api, loc.line(),
                   fmt("%s %s UB address %llu is not %u-byte aligned as the API requires", api, s.name, (unsigned long long)s.addr, align));
        check_ub_range(api, s.name, s.slot, s.addr, s.addr + s.bytes, loc);
        cost::note_operand(s.slot, s.is_dst);
    }
}

// Documented "no overlap" rules: source/destination and the tmp buffer must not share UB bytes.
inline void hl_check_disjoint(const char* api, const HlSpan& a, const HlSpan& b, const SrcLoc& loc) {
    if (a.bytes == 0 || b.bytes == 0) return;
    if (a.addr < b.addr + b.bytes && b.addr < a.addr + a.bytes)
        report("L2.OPERAND_OVERLAP", Severity::Error, api, loc.line(),
               fmt("%s %s [%llu, %llu) overlaps %s [%llu, %llu); the API does not support overlapping these "
                   "operands (the result is undefined on the chip)",
                   api, a.name, (unsigned long long)a.addr, (unsigned long long)(a.addr + a.bytes), b.name,
                   (unsigned long long)b.addr, (unsigned long long)(b.addr + b.bytes)));
}

// A caller-provided sharedTmpBuffer must hold at least `need` bytes (the minimum of the API's
// host helper Get<Api>MaxMinTmpSize for the same arguments).
inline void hl_check_tmp_bytes(const char* api, uint64_t have, uint64_t need, const SrcLoc& loc,
                               const char* operand = "sharedTmpBuffer") {
    if (have < need)
        report("L2.TMP_BUFFER", Severity::Error, api, loc.line(),
               fmt("%s %s holds %llu bytes but needs at least %llu (the minimum that the host helper "
                   "Get%sMaxMinTmpSize returns for these arguments)",
                   api, operand, (unsigned long long)have, (unsigned long long)need, api));
}

// A documented parameter range or shape rule of a library API.
inline void hl_param_error(const char* api, const SrcLoc& loc, const std::string& what) {
    report("L2.API_PARAM", Severity::Error, api, loc.line(), what);
}

// The cost of one library call: the vector instructions it issues, each over `elements` of the
// element type (a weight of 2 means two passes over the data). All on the vector pipe, in order.
struct Step { const char* api; double passes; };
inline void composite_cost(uint32_t dtype, uint64_t elements, uint32_t esize, const HlSpan* reads, int nreads,
                           const HlSpan& dst, std::initializer_list<Step> steps) {
    for (const Step& s : steps) {
        if (s.passes <= 0) continue;
        for (int i = 0; i < nreads; ++i) cost::note_operand(reads[i].slot, false);
        cost::note_operand(dst.slot, true);
        const uint64_t n = static_cast<uint64_t>(static_cast<double>(elements) * s.passes + 0.5);
        record_cost(PIPE_V, s.api, dtype, n, n * esize);
    }
    mark_written(dst.slot, PIPE_V);
}

// Values as double, and back to the element type (one rounding).
template <typename T> inline double to_d(T v) {
    if constexpr (std::is_integral_v<T>) return static_cast<double>(v);
    else return static_cast<double>(static_cast<float>(v));
}
template <typename T> inline T from_d(double v) {
    if constexpr (std::is_same_v<T, float>) return static_cast<float>(v);
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(v);
    else return T(static_cast<float>(v));
}

}  // namespace cannsim
