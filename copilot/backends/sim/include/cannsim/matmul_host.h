// Host tiling of the high-level Matmul API: matmul_tiling::MatmulApiTiling (one core) and
// MultiCoreMatmulTiling (the M x N split over SetDim cores), the calls a TilingFunc makes (SetAType/
// SetBType/SetCType/SetBiasType, SetShape/SetOrgShape/SetSingleShape, SetBias/EnableBias,
// SetBufferSpace, SetFixSplit, SetTraverse, SetDim, GetTiling). Written from the CANN 9.0.0 reference
// (facts only): the result satisfies the reference's TCubeTiling constraints, which the kernel side
// checks (L2.MATMUL_TILING). The search is our own: single-core blocks that keep the most cores busy
// with the fewest fractal tiles each, base blocks of (128, 256, 32 B of K) clipped to the shape and to
// L0A/L0B/L0C, and as much of K in L1 (stepKa/stepKb) as fits with double buffering.
#ifndef CANNSIM_MATMUL_HOST_H
#define CANNSIM_MATMUL_HOST_H

#include <algorithm>
#include <cstdint>
#include "cannsim/cube_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace matmul_tiling {

enum class TPosition : int32_t { GM = 0, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR = ND, COLUMN_MAJOR };
// Values as ge::DataType numbers them, so a cast from the op's dtype lands on the same name.
enum class DataType : int32_t {
    DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7,
    DT_UINT32 = 8, DT_INT64 = 9, DT_UINT64 = 10, DT_DOUBLE = 11, DT_BOOL = 12, DT_BF16 = 27, DT_BFLOAT16 = 27,
    DT_UNDEFINED = 28,
};
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
enum class MatrixMadType : int32_t { NORMAL = 0, HF32 = 1 };
enum class DequantType : int32_t { SCALAR = 0, TENSOR = 1 };

inline int32_t dtype_bytes(DataType t) {
    switch (t) {
        case DataType::DT_FLOAT: case DataType::DT_INT32: case DataType::DT_UINT32: return 4;
        case DataType::DT_FLOAT16: case DataType::DT_BF16: case DataType::DT_INT16: case DataType::DT_UINT16: return 2;
        case DataType::DT_INT8: case DataType::DT_UINT8: return 1;
        default: return 0;
    }
}

class MatmulApiTiling {
public:
    MatmulApiTiling() : MatmulApiTiling(*platform_ascendc::PlatformAscendCManager::GetInstance()) {}
    explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC& p) {
        uint64_t v = 0;
        p.GetCoreMemSize(platform_ascendc::CoreMemType::L1, v); l1_ = static_cast<int64_t>(v);
        p.GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, v); l0a_ = static_cast<int64_t>(v);
        p.GetCoreMemSize(platform_ascendc::CoreMemType::L0_B, v); l0b_ = static_cast<int64_t>(v);
        p.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, v); l0c_ = static_cast<int64_t>(v);
        bt_ = p.GetSocVersion() == platform_ascendc::SocVersion::ASCEND950 ? 4096 : 1024;
        dim_ = 1;
    }
    virtual ~MatmulApiTiling() = default;

    int32_t SetAType(TPosition, CubeFormat, DataType t, bool isTrans = false) { a_ = t; transA_ = isTrans; return ok(t); }
    int32_t SetBType(TPosition, CubeFormat, DataType t, bool isTrans = false) { b_ = t; transB_ = isTrans; return ok(t); }
    int32_t SetCType(TPosition, CubeFormat, DataType t) { c_ = t; return 0; }
    int32_t SetBiasType(TPosition, CubeFormat, DataType t) { bias_t_ = t; return 0; }
    template <typename... A> int32_t SetScaleAType(A...) { return 0; }
    template <typename... A> int32_t SetScaleBType(A...) { return 0; }
    int32_t SetShape(int32_t m, int32_t n, int32_t k) { m_ = m; n_ = n; k_ = k; return 0; }
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t k) { return SetOrgShape(m, n, k, k); }
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t ka, int32_t kb) { orgM_ = m; orgN_ = n; orgKa_ = ka; orgKb_ = kb; return 0; }
    int32_t SetSingleShape(int32_t m = -1, int32_t n = -1, int32_t k = -1) { sM_ = m; sN_ = n; sK_ = k; return 0; }
    int32_t SetFixSplit(int32_t bm = -1, int32_t bn = -1, int32_t bk = -1) { fixM_ = bm; fixN_ = bn; fixK_ = bk; return 0; }
    int32_t SetBias(bool on = false) { bias_ = on; return 0; }
    int32_t EnableBias(bool on = false) { bias_ = on; return 0; }
    int32_t SetBufferSpace(int32_t l1 = -1, int32_t l0c = -1, int32_t ub = -1, int32_t bt = -1) {
        (void)ub;
        if (l1 > 0) l1_ = std::min<int64_t>(l1_, l1);
        if (l0c > 0) l0c_ = std::min<int64_t>(l0c_, l0c);
        if (bt > 0) bt_ = std::min<int64_t>(bt_, bt);
        return 0;
    }
    int32_t SetTraverse(MatrixTraverse t) { traverse_ = t; return 0; }
    int32_t SetDim(int32_t dim) { if (dim <= 0) return -1; dim_ = dim; return 0; }
    template <typename... A> int32_t SetDoubleBuffer(A...) { return 0; }
    template <typename... A> int32_t SetMadType(A...) { return 0; }
    template <typename... A> int32_t SetSplitRange(A...) { return 0; }
    template <typename... A> int32_t SetALayout(A...) { return 0; }
    template <typename... A> int32_t SetBLayout(A...) { return 0; }
    template <typename... A> int32_t SetCLayout(A...) { return 0; }
    template <typename... A> int32_t SetBatchNum(A...) { return 0; }
    template <typename... A> int32_t SetMatmulConfigParams(A...) { return 0; }
    template <typename... A> int32_t SetDequantType(A...) { return 0; }
    template <typename... A> int32_t SetSingleRange(A...) { return 0; }
    template <typename... A> int32_t SetAlignSplit(A...) { return 0; }
    template <typename... A> void EnableL1BankConflictOptimise(A...) {}
    void EnableMultiCoreSplitK(bool) {}
    void SetSplitK(bool) {}

    int32_t GetBaseM() const { return t_.baseM; }
    int32_t GetBaseN() const { return t_.baseN; }
    int32_t GetBaseK() const { return t_.baseK; }
    int32_t GetSingleShape(int32_t& m, int32_t& n, int32_t& k) const { m = t_.singleCoreM; n = t_.singleCoreN; k = t_.singleCoreK; return 0; }
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) const { dim = t_.usedCoreNum; mDim = mDim_; nDim = nDim_; return 0; }

    int64_t GetTiling(AscendC::tiling::TCubeTiling& out) {
        if (!compute()) return -1;
        out = t_;
        return 0;
    }

protected:
    static int32_t ok(DataType t) { return dtype_bytes(t) ? 0 : -1; }
    static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
    static int64_t ceil_to(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

    // L1 bytes of an (outer x kc) panel in either orientation (the kernel side allocates the larger).
    static int64_t panel_bytes(int64_t outer, int64_t kc, int64_t bytes) {
        const int64_t c0 = 32 / bytes;
        return std::max(ceil_to(outer, 16) * ceil_to(kc, c0), ceil_to(kc, 16) * ceil_to(outer, c0)) * bytes;
    }

    bool compute() {
        const int64_t sa = dtype_bytes(a_), sb = dtype_bytes(b_);
        if (!sa || !sb) return false;
        const int64_t m = m_ > 0 ? m_ : orgM_, n = n_ > 0 ? n_ : orgN_, k = k_ > 0 ? k_ : std::max(orgKa_, orgKb_);
        if (m <= 0 || n <= 0 || k <= 0) return false;
        const int64_t orgM = orgM_ > 0 ? orgM_ : m, orgN = orgN_ > 0 ? orgN_ : n;
        const int64_t orgKa = orgKa_ > 0 ? orgKa_ : k, orgKb = orgKb_ > 0 ? orgKb_ : k;
        // the M x N split over the cores
        int64_t sM = m, sN = n, best = -1;
        mDim_ = nDim_ = 1;
        if (sM_ > 0 || sN_ > 0) {
            sM = sM_ > 0 ? sM_ : m; sN = sN_ > 0 ? sN_ : n;
        } else {
            for (int64_t md = 1; md <= dim_; ++md) {
                const int64_t nd = dim_ / md;
                const int64_t cm = std::min(m, ceil_to(ceil_div(m, md), 16)), cn = std::min(n, ceil_to(ceil_div(n, nd), 16));
                const int64_t tiles = ceil_div(cm, 16) * ceil_div(cn, 16);
                const int64_t score = tiles * 1000000 + (cm + cn);
                if (best < 0 || score < best) { best = score; sM = cm; sN = cn; }
            }
        }
        const int64_t sK = sK_ > 0 ? sK_ : k;
        mDim_ = static_cast<int32_t>(ceil_div(m, sM));
        nDim_ = static_cast<int32_t>(ceil_div(n, sN));
        // base blocks
        const int64_t kAlign = (!transA_ && transB_) ? 32 / sa : std::max<int64_t>(16, 32 / sa);
        int64_t bm = fixM_ > 0 ? fixM_ : std::min<int64_t>(128, ceil_to(sM, 16));
        int64_t bn = fixN_ > 0 ? fixN_ : std::min<int64_t>(256, ceil_to(sN, 16));
        int64_t bk = fixK_ > 0 ? fixK_ : std::min<int64_t>(ceil_to(128 / std::max(sa, sb), kAlign), ceil_to(sK, kAlign));
        if (fixK_ <= 0)
            while (bk > kAlign && (bm * bk * sa * 2 > l0a_ || bn * bk * sb * 2 > l0b_)) bk -= kAlign;
        if (fixN_ <= 0)
            while (bn > 16 && bm * bn * 4 > l0c_) bn -= 16;
        const int dbC = bm * bn * 4 * 2 <= l0c_ ? 2 : 1;
        // K in L1: as many baseK steps as fit for A and B, double-buffered
        const int64_t kIter = ceil_div(sK, bk);
        const int64_t budget = l1_ - (bias_ ? bn * 4 : 0);
        int64_t step = kIter;
        while (step > 1 && 2 * (panel_bytes(bm, step * bk, sa) + panel_bytes(bn, step * bk, sb)) > budget) --step;
        int db = 2 * (panel_bytes(bm, step * bk, sa) + panel_bytes(bn, step * bk, sb)) <= budget ? 2 : 1;

        t_ = AscendC::tiling::TCubeTiling{};
        t_.usedCoreNum = mDim_ * nDim_;
        t_.M = static_cast<int32_t>(orgM); t_.N = static_cast<int32_t>(orgN);
        t_.Ka = static_cast<int32_t>(orgKa); t_.Kb = static_cast<int32_t>(orgKb);
        t_.singleCoreM = static_cast<int32_t>(sM); t_.singleCoreN = static_cast<int32_t>(sN); t_.singleCoreK = static_cast<int32_t>(sK);
        t_.baseM = static_cast<int32_t>(bm); t_.baseN = static_cast<int32_t>(bn); t_.baseK = static_cast<int32_t>(bk);
        t_.stepM = 1; t_.stepN = 1;
        t_.stepKa = static_cast<int32_t>(step); t_.stepKb = static_cast<int32_t>(step);
        t_.depthA1 = static_cast<int32_t>(step * db); t_.depthB1 = static_cast<int32_t>(step * db);
        t_.isBias = bias_ ? 1 : 0;
        t_.iterateOrder = traverse_ == MatrixTraverse::FIRSTN ? 1 : 0;
        t_.dbL0A = 2; t_.dbL0B = 2; t_.dbL0C = dbC;
        return true;
    }

    DataType a_ = DataType::DT_FLOAT16, b_ = DataType::DT_FLOAT16, c_ = DataType::DT_FLOAT, bias_t_ = DataType::DT_FLOAT;
    bool transA_ = false, transB_ = false, bias_ = false;
    int32_t m_ = -1, n_ = -1, k_ = -1, orgM_ = -1, orgN_ = -1, orgKa_ = -1, orgKb_ = -1, sM_ = -1, sN_ = -1, sK_ = -1;
    int32_t fixM_ = -1, fixN_ = -1, fixK_ = -1, mDim_ = 1, nDim_ = 1;
    int64_t l1_ = 524032, l0a_ = 65536, l0b_ = 65536, l0c_ = 131072, bt_ = 1024;
    int64_t dim_ = 1;
    MatrixTraverse traverse_ = MatrixTraverse::NOSET;
    AscendC::tiling::TCubeTiling t_{};
};

class MultiCoreMatmulTiling : public MatmulApiTiling {
public:
    MultiCoreMatmulTiling() : MatmulApiTiling() { dim_ = platform_ascendc::PlatformAscendCManager::GetInstance()->GetCoreNumAiv(); }
    explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& p) : MatmulApiTiling(p) { dim_ = p.GetCoreNumAiv(); }
};
using BatchMatmulTiling = MultiCoreMatmulTiling;

}  // namespace matmul_tiling

#endif  // CANNSIM_MATMUL_HOST_H
