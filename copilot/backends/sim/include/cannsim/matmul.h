// The high-level Matmul API (kernel side): MatmulType, Matmul<A, B, C, Bias>, REGIST_MATMUL_OBJ, Init,
// SetTensorA/B (transposes), SetBias, SetOrgShape, SetSingleShape/SetTail, Iterate, GetTensorC,
// IterateAll, SetQuantScalar, End. Written from the CANN 9.0.0 API reference (facts only; see
// docs/emulator-cube.md).
//
// Execution. Every tile runs on the cube unit's emulated APIs: GM -> A1/B1 with DataCopy ND2NZ (the
// rules and the MTE2 cost of DataCopy), L1 -> L0A/L0B (MTE1; the fractal maps of cube.h), Mmad into
// L0C (accumulating over K), Fixpipe to GM (NZ -> ND, fp32 -> fp16/bf16, int32 dequant). The buffers
// are TQues the object takes from the TPipe it is registered with, so L1/L0 capacities, the queue
// protocol and the event timeline apply as for a hand-written kernel.
//   * Pure cube kernel (ASCENDC_CUBE_ONLY before lib/matmul_intf.h): the AIC runs the kernel and the
//     Matmul calls execute where they are made.
//   * MIX kernel (the default): REGIST_MATMUL_OBJ on the AIC serves its AIVs and ends the AIC there
//     (as the reference says: after it the AIC only executes what the AIVs ask); on an AIV each call is
//     a message to the block's AIC (mix_core.h mailboxes) and waits for it. GetTensorC to a VECIN
//     LocalTensor: the AIC writes the tile to this AIV's slot of the system workspace, the AIV copies
//     it to UB (a DataCopy on its own MTE2).
// L1 reuse: A1 holds one baseM x (stepKa * baseK) panel, B1 one (stepKb * baseK) x baseN panel; a tile
// whose panel is already there does not load it again (consecutive tiles share the B panel when
// iterateOrder = 0 and K fits in stepKb * baseK). Iterate records the tile; GetTensorC computes it and
// moves it out (same values and costs as computing at Iterate).
#pragma once
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include "cube.h"
#include "cube_tiling.h"
#include "mix_core.h"

enum class CubeFormat : uint8_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR = ND, COLUMN_MAJOR };
enum class LayoutMode : uint8_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };

namespace AscendC {

template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false, LayoutMode LAYOUT = LayoutMode::NONE,
          bool IBSHARE = false, TPosition SRCPOS = TPosition::GM>
struct MatmulType {
    constexpr static TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    using T = TYPE;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
    constexpr static bool ibShare = IBSHARE;
    constexpr static TPosition srcPos = SRCPOS;
};

// The template configuration (only the choice of template is read: every one runs the same schedule here).
struct MatmulConfig {
    bool doNorm = true, doBasicBlock = false, doMultiDataLoad = false;
    uint32_t basicM = 0, basicN = 0, basicK = 0;
    bool intrinsicsCheck = false, isNBatch = false, enVecND2NZ = false, doSpecialBasicBlock = false;
    uint32_t doMTE2Preload = 0;
    bool enableMixDualMaster = false;
};
template <typename... A> constexpr MatmulConfig GetNormalConfig(A...) { return MatmulConfig{}; }
template <typename... A> constexpr MatmulConfig GetMDLConfig(A...) { MatmulConfig c; c.doNorm = false; c.doMultiDataLoad = true; return c; }
template <typename... A> constexpr MatmulConfig GetBasicConfig(A...) { MatmulConfig c; c.doBasicBlock = true; return c; }
inline constexpr MatmulConfig CFG_NORM = MatmulConfig{};
inline constexpr MatmulConfig CFG_MDL = GetMDLConfig();
inline constexpr MatmulConfig CFG_IBSHARE_NORM = MatmulConfig{};
template <auto... F> struct MatmulCallBackFunc {};

// The system workspace at the front of the kernel's workspace (PlatformAscendC::GetLibApiWorkSpaceSize).
inline GM_ADDR GetSysWorkSpacePtr() {
    for (const auto& r : cannsim::detail::state().gm_regions)
        if (r.name == "workspace") return const_cast<GM_ADDR>(r.base);
    return nullptr;
}
inline void SetSysWorkspace(GM_ADDR) {}

}  // namespace AscendC

namespace cannsim::mm {

constexpr int kMaxObjects = 4;
enum Op : uint32_t { OP_TILE = 1, OP_ALL = 2, OP_END = 3 };

// What an AIV sends its AIC: the whole state of the object, so the AIC keeps nothing between calls
// but the L1 panels it may reuse (keyed by this state's generation).
struct GmRef { uint64_t base = 0, size = 0; uint8_t sized = 0; };
struct Request {
    uint32_t op = 0, obj = 0, gen = 0, tile = 0, line = 0, client = 0;
    AscendC::tiling::TCubeTiling t;
    GmRef a, b, bias, c;
    int32_t orgM = 0, orgN = 0, orgKa = 0, orgKb = 0, sM = 0, sN = 0, sK = 0;
    uint8_t transA = 0, transB = 0, hasBias = 0, cToWorkspace = 0;
    uint64_t quant = 0;
};
static_assert(sizeof(Request) <= sizeof(mix::MatmulBox::body), "matmul request");

template <bool CubeOnly> struct ModeUse {
    static inline const bool registered = (mix::uses_cube() = true, CubeOnly || (mix::uses_cross_core() = true));
};

inline bool client_side() { return mix::self().ratio > 0 && mix::self().core == mix::AIV; }

template <typename T>
inline GmRef gm_ref(const AscendC::GlobalTensor<T>& g) {
    GmRef r;
    r.base = reinterpret_cast<uint64_t>(g.GetPhyAddr());
    r.size = g.GetSize();
    r.sized = g.GetSize() != 0;
    return r;
}
template <typename T>
inline AscendC::GlobalTensor<T> gm_of(const GmRef& r) {
    AscendC::GlobalTensor<T> g;
    if (r.sized) g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(r.base), r.size);
    else g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(r.base));
    return g;
}

inline uint32_t ceil_to(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// The reference's TCubeTiling constraints (table "TCubeTiling constraints") for element sizes sa/sb.
inline bool check_tiling(const AscendC::tiling::TCubeTiling& t, uint32_t sa, uint32_t sb, bool trans_a, bool trans_b,
                         uint32_t bias_bytes, const SrcLoc& loc) {
    auto bad = [&](const char* what) {
        report("L2.MATMUL_TILING", Severity::Error, "Matmul", loc.line(),
               fmt("TCubeTiling: %s (baseM=%d baseN=%d baseK=%d singleCoreM=%d singleCoreN=%d singleCoreK=%d "
                   "stepKa=%d stepKb=%d depthA1=%d depthB1=%d dbL0A=%d dbL0B=%d dbL0C=%d)",
                   what, t.baseM, t.baseN, t.baseK, t.singleCoreM, t.singleCoreN, t.singleCoreK, t.stepKa, t.stepKb,
                   t.depthA1, t.depthB1, t.dbL0A, t.dbL0B, t.dbL0C),
               true);
        return false;
    };
    if (t.baseM <= 0 || t.baseN <= 0 || t.baseK <= 0 || t.singleCoreM <= 0 || t.singleCoreN <= 0 || t.singleCoreK <= 0 ||
        t.stepKa <= 0 || t.stepKb <= 0 || t.depthA1 <= 0 || t.depthB1 <= 0)
        return bad("base, singleCore, step and depth fields must be > 0 (was the tiling passed, from GetTiling?)");
    const int c0a = 32 / static_cast<int>(sa);
    if (t.baseM % 16 || t.baseN % 16)
        return bad("baseM and baseN must be multiples of 16 (the fractal)");
    if (t.baseK % ((!trans_a && trans_b) ? c0a : std::max(c0a, 16)))
        return bad("baseK must be a multiple of C0 (A not transposed, B transposed) or of 16 and C0 (otherwise)");
    const auto db = [](int v) { return v == 2 ? 2u : 1u; };
    if (uint64_t(t.baseM) * t.baseK * sa * db(t.dbL0A) > cube_capacity(MEM_L0A))
        return bad("baseM * baseK * sizeof(A) * dbL0A exceeds L0A");
    if (uint64_t(t.baseN) * t.baseK * sb * db(t.dbL0B) > cube_capacity(MEM_L0B))
        return bad("baseN * baseK * sizeof(B) * dbL0B exceeds L0B");
    if (uint64_t(t.baseM) * t.baseN * 4 * db(t.dbL0C) > cube_capacity(MEM_L0C))
        return bad("baseM * baseN * 4 * dbL0C exceeds L0C");
    if (bias_bytes && uint64_t(t.baseN) * bias_bytes > cube_capacity(MEM_BT))
        return bad("baseN * sizeof(L0C type) of the bias exceeds the BiasTable");
    const int dba = t.depthA1 / std::max(1, t.stepM * t.stepKa), dbb = t.depthB1 / std::max(1, t.stepN * t.stepKb);
    if (std::max(1, t.stepM) * t.stepKa * dba != t.depthA1 || (dba != 1 && dba != 2) ||
        std::max(1, t.stepN) * t.stepKb * dbb != t.depthB1 || (dbb != 1 && dbb != 2))
        return bad("depthA1 must be stepM * stepKa * db and depthB1 stepN * stepKb * db (db 1 or 2)");
    return true;
}

inline void wait_served(mix::MatmulBox& box, uint32_t seq, uint32_t aic, const SrcLoc& loc) {
    mix::Shared* sh = mix::shared();
    for (uint64_t spins = 0; box.served.load() < seq; ++spins) {
        if (sh && aic < sh->procs && sh->ended[aic].load() && box.served.load() < seq)
            report("L2.MATMUL_USAGE", Severity::Error, "Matmul", loc.line(),
                   "the AIC of this block ended before it served this Matmul call (did the kernel reach "
                   "REGIST_MATMUL_OBJ on the AIC, or did the AIC stop on an error?)",
                   true);
        if (spins > 2000) mix::pause_briefly();
    }
}

// The AIC side of one registered object: called with each request of its AIVs.
struct Server {
    void* obj = nullptr;
    void (*serve)(void*, const Request&) = nullptr;
    void (*release)(void*) = nullptr;   // the L1 panels it keeps between calls
};
inline Server* servers() { static Server s[kMaxObjects]; return s; }
inline int& object_count() { static int n = 0; return n; }

// AIC of a MIX kernel: serve the block's AIVs until all have ended, then end this core.
inline void serve_block(const SrcLoc& loc) {
    mix::Shared* sh = mix::shared();
    mix::MatmulBox* boxes = mix::matmul_boxes();
    const mix::Identity& id = mix::self();
    if (!sh || !boxes) return;
    uint32_t seen[8] = {};
    for (uint64_t idle = 0;;) {
        bool any = false, all_ended = true;
        for (int sb = 0; sb < id.ratio; ++sb) {
            const uint32_t p = mix::proc_of(id.block, mix::AIV, sb);
            if (p >= sh->procs) continue;
            mix::MatmulBox& box = boxes[p];
            const uint32_t posted = box.posted.load();
            if (posted != seen[sb]) {
                Request r;
                std::memcpy(static_cast<void*>(&r), box.body, sizeof r);
                r.client = static_cast<uint32_t>(sb);
                if (r.obj < static_cast<uint32_t>(object_count()) && servers()[r.obj].serve)
                    servers()[r.obj].serve(servers()[r.obj].obj, r);
                else
                    report("L2.MATMUL_USAGE", Severity::Error, "Matmul", r.line ? r.line : loc.line(),
                           "a Matmul call reached the AIC for an object REGIST_MATMUL_OBJ did not register there", true);
                seen[sb] = posted;
                box.served.store(posted);
                any = true;
            }
            if (!sh->ended[p].load()) all_ended = false;
        }
        if (all_ended) break;
        idle = any ? 0 : idle + 1;
        if (idle > 2000) mix::pause_briefly();
    }
    (void)loc;
    for (int i = 0; i < object_count(); ++i) if (servers()[i].release) servers()[i].release(servers()[i].obj);
    if (mix::finish()) mix::finish()();
}

}  // namespace cannsim::mm

namespace AscendC {

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const MatmulConfig& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<>, class... POLICY>
class Matmul {
public:
    using SrcAT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    using L0cT = std::conditional_t<std::is_same_v<SrcAT, int8_t>, int32_t, float>;
    static constexpr uint32_t kC0A = 32 / sizeof(SrcAT), kC0B = 32 / sizeof(SrcBT);

    Matmul() = default;

    // REGIST_MATMUL_OBJ: the object's index, its pipe and (optionally) its tiling.
    void cannsim_register(int index, TPipe* pipe, const TCubeTiling* tiling, const cannsim::SrcLoc& loc) {
        index_ = index;
        pipe_ = pipe ? pipe : GetTPipePtr();
        registered_ = true;
        check_types(loc);
        if (tiling) Init(tiling, pipe_, loc);
    }
    static void cannsim_serve(void* self, const cannsim::mm::Request& r) { static_cast<Matmul*>(self)->execute(r); }
    static void cannsim_release(void* self) { static_cast<Matmul*>(self)->release(); }

    void Init(const TCubeTiling* __restrict cubeTiling, TPipe* tpipe = nullptr, CANNSIM_LOC) {
        if (!cubeTiling) {
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, "Init", loc.line(), "Matmul Init with a null tiling", true);
            return;
        }
        if (tpipe) pipe_ = tpipe;
        st_.t = *cubeTiling;
        has_tiling_ = true;
        st_.orgM = st_.t.M; st_.orgN = st_.t.N; st_.orgKa = st_.t.Ka; st_.orgKb = st_.t.Kb;
        st_.sM = st_.t.singleCoreM; st_.sN = st_.t.singleCoreN; st_.sK = st_.t.singleCoreK;
        st_.hasBias = 0;
        ++st_.gen;
        if (!cannsim::mm::check_tiling(st_.t, sizeof(SrcAT), sizeof(SrcBT), false, true, st_.t.isBias ? sizeof(L0cT) : 0, loc))
            return;
        if (!cannsim::mm::client_side()) prepare(st_.t, loc);
    }

    void SetOrgShape(int orgM, int orgN, int orgK, CANNSIM_LOC) { SetOrgShape(orgM, orgN, orgK, orgK, 0, loc); }
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0, CANNSIM_LOC) {
        (void)orgKc;
        need_tiling("SetOrgShape", loc);
        st_.orgM = orgM; st_.orgN = orgN; st_.orgKa = orgKa; st_.orgKb = orgKb;
        ++st_.gen;
    }
    void SetSingleShape(int singleM, int singleN, int singleK, CANNSIM_LOC) { set_single(singleM, singleN, singleK, "SetSingleShape", loc); }
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1, CANNSIM_LOC) { set_single(tailM, tailN, tailK, "SetTail", loc); }

    void SetTensorA(const GlobalTensor<SrcAT>& gm, bool isTransposeA = false, CANNSIM_LOC) {
        need_tiling("SetTensorA", loc);
        if (isTransposeA && !A_TYPE::isTrans)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, "SetTensorA", loc.line(),
                            "SetTensorA(..., isTransposeA=true) but A's MatmulType has ISTRANS=false: the transpose is "
                            "only available when the type enables it (MatmulType<..., true>)");
        st_.a = cannsim::mm::gm_ref(gm);
        st_.transA = isTransposeA;
        have_a_ = true;
        ++st_.gen;
        restart();
    }
    void SetTensorB(const GlobalTensor<SrcBT>& gm, bool isTransposeB = false, CANNSIM_LOC) {
        need_tiling("SetTensorB", loc);
        if (isTransposeB && !B_TYPE::isTrans)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, "SetTensorB", loc.line(),
                            "SetTensorB(..., isTransposeB=true) but B's MatmulType has ISTRANS=false: the transpose is "
                            "only available when the type enables it (MatmulType<..., true>)");
        st_.b = cannsim::mm::gm_ref(gm);
        st_.transB = isTransposeB;
        have_b_ = true;
        ++st_.gen;
        restart();
    }
    void SetTensorA(const LocalTensor<SrcAT>&, bool = false, CANNSIM_LOC) { cannsim::unknown_api("SetTensorA(LocalTensor)", loc.line()); }
    void SetTensorB(const LocalTensor<SrcBT>&, bool = false, CANNSIM_LOC) { cannsim::unknown_api("SetTensorB(LocalTensor)", loc.line()); }
    void SetBias(const GlobalTensor<BiasT>& biasGlobal, CANNSIM_LOC) {
        need_tiling("SetBias", loc);
        if (has_tiling_ && !st_.t.isBias)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, "SetBias", loc.line(),
                            "SetBias on a Matmul whose tiling has isBias = 0: enable the bias on the host "
                            "(SetBias(true) / EnableBias(true)) so that the tiling reserves it");
        st_.bias = cannsim::mm::gm_ref(biasGlobal);
        st_.hasBias = 1;
        ++st_.gen;
    }
    void DisableBias() { st_.hasBias = 0; ++st_.gen; }
    void ClearBias() { DisableBias(); }
    void SetQuantScalar(const uint64_t quantScalar) { st_.quant = quantScalar; }
    template <typename... A> void SetHF32(A...) {}
    template <typename... A> void SetLocalWorkspace(A...) {}

    template <bool sync = true>
    bool Iterate(bool enPartialSum = false, CANNSIM_LOC) {
        if (enPartialSum)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, "Iterate", loc.line(),
                            "Iterate(enPartialSum=true) keeps C in CO1 across calls; not emulated (the result would be wrong)");
        if (!ready_to_run("Iterate", loc)) return false;
        if (next_ >= tiles()) { iterated_ = false; done_ = true; return false; }
        pending_ = next_++;
        iterated_ = true;
        return true;
    }

    template <bool sync = true>
    void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false, CANNSIM_LOC) {
        (void)enSequentialWrite;
        if (!take_tile("GetTensorC", enAtomic, loc)) return;
        cannsim::mm::Request r = request(cannsim::mm::OP_TILE, loc);
        r.tile = pending_;
        r.c = cannsim::mm::gm_ref(gm);
        run(r, loc);
    }
    template <bool sync = true, bool doPad = false>
    void GetTensorC(const LocalTensor<DstT>& co2Local, uint8_t enAtomic = 0, bool enSequentialWrite = false, uint32_t = 0,
                    uint32_t = 0, uint32_t = 0, uint32_t = 0, CANNSIM_LOC) {
        (void)enSequentialWrite;
        if (!take_tile("GetTensorC", enAtomic, loc)) return;
        if (!cannsim::mm::client_side()) {
            cannsim::unknown_api("GetTensorC(LocalTensor) on the AIC", loc.line());
            return;
        }
        // The AIC writes the tile to this AIV's workspace slot; the AIV brings it to UB.
        const uint64_t tile_elems = uint64_t(st_.t.baseM) * st_.t.baseN;
        const uint64_t slot = uint64_t(GetBlockIdx()) * tile_elems * sizeof(DstT);
        GM_ADDR ws = GetSysWorkSpacePtr();
        uint64_t ws_bytes = 0;
        for (const auto& g : cannsim::detail::state().gm_regions) if (g.name == "workspace") ws_bytes = g.bytes;
        if (!ws || slot + tile_elems * sizeof(DstT) > std::min<uint64_t>(ws_bytes, 16ull << 20)) {
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, "GetTensorC", loc.line(),
                            cannsim::fmt("GetTensorC to a LocalTensor passes the tile through the system workspace "
                                         "(%llu B needed for this core, %llu B reserved): the host must reserve "
                                         "PlatformAscendC::GetLibApiWorkSpaceSize() at the front of the workspace",
                                         (unsigned long long)(slot + tile_elems * sizeof(DstT)), (unsigned long long)ws_bytes),
                            true);
            return;
        }
        GlobalTensor<DstT> wg;
        wg.SetGlobalBuffer(reinterpret_cast<__gm__ DstT*>(ws + slot), tile_elems);
        cannsim::mm::Request r = request(cannsim::mm::OP_TILE, loc);
        r.tile = pending_;
        r.c = cannsim::mm::gm_ref(wg);
        r.cToWorkspace = 1;
        run(r, loc);
        DataCopy(co2Local, wg, static_cast<uint32_t>(tile_elems), loc);
    }

    template <bool sync = true>
    void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    bool waitIterateAll = false, bool fakeMsg = false, CANNSIM_LOC) {
        (void)enSequentialWrite; (void)waitIterateAll;
        if (fakeMsg) return;
        if (enAtomic) { cannsim::unknown_api("IterateAll(enAtomic)", loc.line()); return; }
        if (!ready_to_run("IterateAll", loc)) return;
        cannsim::mm::Request r = request(cannsim::mm::OP_ALL, loc);
        r.c = cannsim::mm::gm_ref(gm);
        run(r, loc);
        next_ = tiles();
        done_ = true;
    }
    template <bool sync = true>
    void WaitIterateAll() {}

    void End(CANNSIM_LOC) {
        ended_ = true;
        (void)loc;
        if (!cannsim::mm::client_side()) release();
    }

    // ---- the AIC's work (local, or serving an AIV) ----
    void execute(const cannsim::mm::Request& r) {
        const cannsim::SrcLoc loc = cannsim::SrcLoc::current();
        struct AtCaller {   // findings of the APIs below at the caller's Matmul line
            uint32_t saved = cannsim::line_override();
            explicit AtCaller(uint32_t l) { cannsim::line_override() = l; }
            ~AtCaller() { cannsim::line_override() = saved; }
        } at_caller(r.line);
        if (!prepare(r.t, loc)) return;
        if (!cannsim::mm::check_tiling(r.t, sizeof(SrcAT), sizeof(SrcBT), r.transA, r.transB, 0, loc)) return;
        GlobalTensor<DstT> c = cannsim::mm::gm_of<DstT>(r.c);
        const uint32_t mIter = (r.sM + r.t.baseM - 1) / r.t.baseM, nIter = (r.sN + r.t.baseN - 1) / r.t.baseN;
        auto run_tile = [&](uint32_t ti) {
            const uint32_t mi = r.t.iterateOrder == 1 ? ti / nIter : ti % mIter;
            const uint32_t ni = r.t.iterateOrder == 1 ? ti % nIter : ti / mIter;
            compute_tile(r, mi, ni, c, loc);
        };
        if (r.op == cannsim::mm::OP_TILE) run_tile(r.tile);
        else if (r.op == cannsim::mm::OP_ALL)
            for (uint32_t ti = 0; ti < mIter * nIter; ++ti) run_tile(ti);
    }

private:
    struct State {
        TCubeTiling t;
        cannsim::mm::GmRef a, b, bias;
        int32_t orgM = 0, orgN = 0, orgKa = 0, orgKb = 0, sM = 0, sN = 0, sK = 0;
        uint8_t transA = 0, transB = 0, hasBias = 0;
        uint64_t quant = 0;
        uint32_t gen = 0;
    };

    static void check_types(const cannsim::SrcLoc& loc) {
        // The reference's table of (A, B, Bias, C) combinations for A2/A3 (int4 is not emulated).
        using A = SrcAT; using B = SrcBT; using C = DstT; using Bi = BiasT;
        constexpr bool h = std::is_same_v<A, half> && std::is_same_v<B, half> && (std::is_same_v<Bi, float> || std::is_same_v<Bi, half>) &&
                           (std::is_same_v<C, float> || std::is_same_v<C, half> || std::is_same_v<C, bfloat16_t>);
        constexpr bool bf = std::is_same_v<A, bfloat16_t> && std::is_same_v<B, bfloat16_t> &&
                            (std::is_same_v<Bi, float> || std::is_same_v<Bi, half>) &&
                            (std::is_same_v<C, float> || std::is_same_v<C, half> || std::is_same_v<C, bfloat16_t>);
        constexpr bool f = std::is_same_v<A, float> && std::is_same_v<B, float> && (std::is_same_v<Bi, float> || std::is_same_v<Bi, half>) &&
                           (std::is_same_v<C, float> || std::is_same_v<C, half> || std::is_same_v<C, bfloat16_t>);
        constexpr bool i8 = std::is_same_v<A, int8_t> && std::is_same_v<B, int8_t> && std::is_same_v<Bi, int32_t> &&
                            (std::is_same_v<C, int32_t> || std::is_same_v<C, half>);
        if (!(h || bf || f || i8) || cannsim::arch() == 2002)
            cannsim::report("L2.MATMUL_DTYPE", cannsim::Severity::Error, "Matmul", loc.line(),
                            cannsim::fmt("Matmul<A %s, B %s, C %s, Bias %s> is not a type combination of %s: half/bfloat16_t/"
                                         "float x the same -> float/half/bfloat16_t with a float or half bias; int8_t x int8_t "
                                         "-> int32_t/half with an int32_t bias",
                                         cannsim::dtype_name(cannsim::dtype_of<A>()), cannsim::dtype_name(cannsim::dtype_of<B>()),
                                         cannsim::dtype_name(cannsim::dtype_of<C>()), cannsim::dtype_name(cannsim::dtype_of<Bi>()),
                                         cannsim::chip().name),
                            true);
    }

    void need_tiling(const char* api, const cannsim::SrcLoc& loc) const {
        if (!registered_ && !has_tiling_)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s on a Matmul object that REGIST_MATMUL_OBJ did not register", api), true);
        else if (!has_tiling_)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s before the object has its tiling (REGIST_MATMUL_OBJ(..., &tiling) or Init(&tiling))", api),
                            true);
    }

    void set_single(int m, int n, int k, const char* api, const cannsim::SrcLoc& loc) {
        need_tiling(api, loc);
        const int nm = m < 0 ? st_.sM : m, nn = n < 0 ? st_.sN : n, nk = k < 0 ? st_.sK : k;
        if (nm <= 0 || nn <= 0 || nk <= 0 || nm > st_.t.singleCoreM || nn > st_.t.singleCoreN || nk > st_.t.singleCoreK)
            cannsim::report("L2.MATMUL_SHAPE", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s(%d, %d, %d): the shape must be in [1, singleCore] of the tiling (%d, %d, %d); "
                                         "the tiling's buffers and base blocks were sized for that",
                                         api, nm, nn, nk, st_.t.singleCoreM, st_.t.singleCoreN, st_.t.singleCoreK),
                            true);
        st_.sM = nm; st_.sN = nn; st_.sK = nk;
        ++st_.gen;
        restart();
    }

    void restart() { next_ = 0; iterated_ = false; done_ = false; }
    uint32_t tiles() const {
        return uint32_t((st_.sM + st_.t.baseM - 1) / st_.t.baseM) * uint32_t((st_.sN + st_.t.baseN - 1) / st_.t.baseN);
    }

    bool ready_to_run(const char* api, const cannsim::SrcLoc& loc) {
        need_tiling(api, loc);
        if (ended_)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s after End(): the object is finished", api), true);
        if (!have_a_ || !have_b_)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s before SetTensorA and SetTensorB", api), true);
        if (st_.t.isBias && !st_.hasBias)
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Warning, api, loc.line(),
                            cannsim::fmt("%s: the tiling enables the bias (isBias = 1) but SetBias was not called; "
                                         "computed without a bias", api));
        const int64_t ka = st_.transA ? st_.orgM : st_.orgKa, kb = st_.transB ? st_.orgKb : st_.orgN;
        if (ka > 65535 || kb > 65535)
            cannsim::report("L2.MATMUL_SHAPE", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s: a source row of %lld elements exceeds 65535 (the ND2NZ srcDValue); the reference "
                                         "asks for MatmulConfig intrinsicsCheck there, which is not emulated",
                                         api, (long long)std::max(ka, kb)), true);
        // a block of a source row must fit in the row (its GM bounds are checked by the copies)
        if ((st_.transA ? st_.sM > st_.orgM : st_.sK > st_.orgKa) || (st_.transB ? st_.sK > st_.orgKb : st_.sN > st_.orgN))
            cannsim::report("L2.MATMUL_SHAPE", cannsim::Severity::Error, api, loc.line(),
                            cannsim::fmt("%s: the single-core shape (%d, %d, %d) exceeds the original shape M=%d N=%d Ka=%d "
                                         "Kb=%d (SetOrgShape / the tiling's M, N, Ka, Kb): rows would run into the next ones",
                                         api, st_.sM, st_.sN, st_.sK, st_.orgM, st_.orgN, st_.orgKa, st_.orgKb), true);
        return true;
    }

    bool take_tile(const char* api, uint8_t enAtomic, const cannsim::SrcLoc& loc) {
        if (enAtomic) { cannsim::unknown_api("GetTensorC(enAtomic)", loc.line()); return false; }
        if (!iterated_) {
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, api, loc.line(),
                            done_ ? cannsim::fmt("%s after Iterate returned false: every tile of the core has been taken", api)
                                  : cannsim::fmt("%s without a preceding Iterate: there is no C tile to take (call "
                                                 "while (mm.Iterate()) { mm.GetTensorC(...); })", api),
                            true);
            return false;
        }
        iterated_ = false;
        return true;
    }

    cannsim::mm::Request request(uint32_t op, const cannsim::SrcLoc& loc) const {
        cannsim::mm::Request r;
        r.op = op; r.obj = static_cast<uint32_t>(index_); r.gen = st_.gen; r.line = loc.line();
        r.t = st_.t;
        r.a = st_.a; r.b = st_.b; r.bias = st_.bias;
        r.orgM = st_.orgM; r.orgN = st_.orgN; r.orgKa = st_.orgKa; r.orgKb = st_.orgKb;
        r.sM = st_.sM; r.sN = st_.sN; r.sK = st_.sK;
        r.transA = st_.transA; r.transB = st_.transB; r.hasBias = st_.hasBias && st_.t.isBias; r.quant = st_.quant;
        return r;
    }

    // Where the work runs: here, or on this block's AIC.
    void run(const cannsim::mm::Request& r, const cannsim::SrcLoc& loc) {
        if (!cannsim::mm::client_side()) { execute(r); return; }
        cannsim::mix::MatmulBox* boxes = cannsim::mix::matmul_boxes();
        const cannsim::mix::Identity& id = cannsim::mix::self();
        if (!boxes) { execute(r); return; }   // test drivers: no launcher
        cannsim::record_cost(PIPE_S, "Matmul", 0, 0, 0);
        cannsim::mix::MatmulBox& box = boxes[id.proc];
        std::memcpy(box.body, static_cast<const void*>(&r), sizeof r);
        const uint32_t seq = box.posted.load() + 1;
        box.posted.store(seq);
        cannsim::mm::wait_served(box, seq, cannsim::mix::proc_of(id.block, cannsim::mix::AIC, 0), loc);
    }

    // The buffers, from the pipe, sized by the first tiling.
    bool prepare(const TCubeTiling& t, const cannsim::SrcLoc& loc) {
        const uint32_t kca = uint32_t(t.stepKa) * t.baseK, kcb = uint32_t(t.stepKb) * t.baseK;
        using cannsim::mm::ceil_to;
        const uint64_t a1 = std::max(uint64_t(ceil_to(t.baseM, 16)) * ceil_to(kca, kC0A), uint64_t(ceil_to(kca, 16)) * ceil_to(t.baseM, kC0A)) * sizeof(SrcAT);
        const uint64_t b1 = std::max(uint64_t(ceil_to(kcb, 16)) * ceil_to(t.baseN, kC0B), uint64_t(ceil_to(t.baseN, 16)) * ceil_to(kcb, kC0B)) * sizeof(SrcBT);
        const uint64_t a2 = uint64_t(ceil_to(t.baseM, 16)) * ceil_to(t.baseK, kC0A) * sizeof(SrcAT);
        const uint64_t b2 = uint64_t(ceil_to(t.baseK, kC0B)) * ceil_to(t.baseN, 16) * sizeof(SrcBT);
        const uint64_t c = uint64_t(ceil_to(t.baseM, 16)) * ceil_to(t.baseN, 16) * sizeof(L0cT);
        const uint64_t bt = t.isBias ? uint64_t(ceil_to(t.baseN, 16)) * sizeof(L0cT) : 0;
        if (ready_) {
            if (a1 > a1_bytes_ || b1 > b1_bytes_ || a2 > a2_bytes_ || b2 > b2_bytes_ || c > c_bytes_ || bt > bt_bytes_) {
                cannsim::report("L2.MATMUL_TILING", cannsim::Severity::Error, "Init", loc.line(),
                                "a later tiling needs larger buffers than the first one the object was given; the Matmul "
                                "object keeps the buffers of its first tiling", true);
                return false;
            }
            return true;
        }
        if (!cannsim::mm::check_tiling(t, sizeof(SrcAT), sizeof(SrcBT), false, true, t.isBias ? sizeof(L0cT) : 0, loc))
            return false;
        TPipe* pipe = pipe_ ? pipe_ : GetTPipePtr();
        if (!pipe) {
            cannsim::report("L2.MATMUL_USAGE", cannsim::Severity::Error, "REGIST_MATMUL_OBJ", loc.line(),
                            "the Matmul object has no TPipe (REGIST_MATMUL_OBJ(&pipe, ...))", true);
            return false;
        }
        const auto db = [](int d, int s) { return std::max(1, std::min(2, d / std::max(1, s))); };
        pipe->InitBuffer(qa1_, db(t.depthA1, std::max(1, t.stepM) * t.stepKa), static_cast<uint32_t>(a1), loc);
        pipe->InitBuffer(qb1_, db(t.depthB1, std::max(1, t.stepN) * t.stepKb), static_cast<uint32_t>(b1), loc);
        pipe->InitBuffer(qa2_, t.dbL0A == 2 ? 2 : 1, static_cast<uint32_t>(a2), loc);
        pipe->InitBuffer(qb2_, t.dbL0B == 2 ? 2 : 1, static_cast<uint32_t>(b2), loc);
        pipe->InitBuffer(qc_, t.dbL0C == 2 ? 2 : 1, static_cast<uint32_t>(c), loc);
        if (bt) pipe->InitBuffer(qbt_, 1, static_cast<uint32_t>(bt), loc);
        a1_bytes_ = a1; b1_bytes_ = b1; a2_bytes_ = a2; b2_bytes_ = b2; c_bytes_ = c; bt_bytes_ = bt;
        a1_slots_ = db(t.depthA1, std::max(1, t.stepM) * t.stepKa);
        b1_slots_ = db(t.depthB1, std::max(1, t.stepN) * t.stepKb);
        ready_ = true;
        return true;
    }

    // An L1 panel: which block of which matrix it holds, and its Nz geometry.
    struct Panel {
        bool valid = false;
        uint64_t base = 0;
        uint32_t gen = 0, client = 0, outer = 0, chunk = 0, rows = 0, cols = 0, rows_pad = 0;
        bool trans = false;
    };

    // GM -> L1 (DataCopy ND2NZ) of the panel holding rows [o0, o0 + on) of the outer dim (M for A, N for B)
    // and K chunk `chunk`, unless L1 holds it already.
    template <typename T, typename Q>
    LocalTensor<T>& ensure_panel(Q& q, LocalTensor<T>& cur, Panel& p, int slots, const cannsim::mm::GmRef& g, bool trans,
                                 bool k_is_rows_when_trans, uint32_t o0, uint32_t on, uint32_t chunk, uint32_t kc,
                                 uint32_t k_total, uint32_t src_row, const cannsim::mm::Request& r, const cannsim::SrcLoc& loc) {
        if (p.valid && p.base == g.base && p.gen == r.gen && p.client == r.client && p.outer == o0 && p.chunk == chunk &&
            p.trans == trans && p.cols + p.rows > 0 && (trans == k_is_rows_when_trans ? p.cols : p.rows) == on)
            return cur;
        if (p.valid && slots < 2) q.FreeTensor(cur, loc);
        LocalTensor<T> next = q.template AllocTensor<T>(loc);
        if (p.valid && slots >= 2) q.FreeTensor(cur, loc);
        const uint32_t k0 = chunk * kc, kt = std::min(kc, k_total - k0);
        // K along the rows of the GM matrix when (B not transposed) or (A transposed)
        const bool k_rows = trans == k_is_rows_when_trans;
        const uint32_t rows = k_rows ? kt : on, cols = k_rows ? on : kt;
        const uint64_t off = k_rows ? uint64_t(k0) * src_row + o0 : uint64_t(o0) * src_row + k0;
        GlobalTensor<T> src = cannsim::mm::gm_of<T>(g);
        DataCopy(next, src[off], Nd2NzParams(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), 0,
                                             static_cast<uint16_t>(src_row), static_cast<uint16_t>(cannsim::mm::ceil_to(rows, 16)), 1, 0),
                 loc);
        q.EnQue(next, loc);
        cur = q.template DeQue<T>(loc);
        p.valid = true; p.base = g.base; p.gen = r.gen; p.client = r.client; p.outer = o0; p.chunk = chunk; p.trans = trans;
        p.rows = rows; p.cols = cols; p.rows_pad = cannsim::mm::ceil_to(rows, 16);
        return cur;
    }

    // L1 panel -> L0A (Zz; Nz on arch 3510) or L0B (Zn): the (outer x k) block [kk0, kk0 + kt) of the panel,
    // padding zero-filled (MTE1).
    template <typename T>
    void load_l0(const LocalTensor<T>& dst, const LocalTensor<T>& src, const Panel& p, bool is_a, uint32_t kk0, uint32_t kt,
                 uint32_t on, const cannsim::SrcLoc& loc) {
        constexpr uint32_t c0 = 32 / sizeof(T);
        const uint32_t ob = cannsim::mm::ceil_to(on, 16) / 16, kb = cannsim::mm::ceil_to(kt, c0) / c0;
        const uint64_t frac = uint64_t(ob) * kb;
        cannsim::cube_range("LoadData", "src", src, 0, uint64_t(cannsim::mm::ceil_to(p.cols, c0)) * p.rows_pad * sizeof(T), loc);
        cannsim::cube_range("LoadData", "dst", dst, 0, frac * 512, loc);
        const bool outer_is_rows = (is_a ? !p.trans : p.trans);
        if (!cannsim::count_only()) {
            const T* s = reinterpret_cast<const T*>(cannsim::arena_at(src.addr_));
            T* d = reinterpret_cast<T*>(cannsim::arena_at(dst.addr_));
            const bool a_nz = cannsim::arch() == 3510;
            for (uint32_t o = 0; o < ob * 16; ++o)
                for (uint32_t k = 0; k < kb * c0; ++k) {
                    T v{};
                    if (o < on && k < kt) {
                        const uint32_t kk = kk0 + k;
                        v = outer_is_rows ? s[cannsim::nz_offset(o, kk, p.rows_pad, c0)] : s[cannsim::nz_offset(kk, o, p.rows_pad, c0)];
                    }
                    const uint64_t at = is_a ? (a_nz ? cannsim::nz_offset(o, k, ob * 16, c0) : cannsim::zz_offset(o, k, kb, c0))
                                             : cannsim::zn_offset(k, o, ob, c0);
                    d[at] = v;
                }
        }
        cannsim::mark_written(dst.slot_, PIPE_MTE1);
        cannsim::cost::note_cube(is_a ? 0 : 1);
        cannsim::record_cost(PIPE_MTE1, "LoadData", cannsim::dtype_of<T>(), frac * 512 / sizeof(T), frac * 512);
    }

    // Bias row [n0, n0 + nt) from GM to the BiasTable (C2) in the L0C type.
    void load_bias(const LocalTensor<L0cT>& bt, const cannsim::mm::Request& r, uint32_t n0, uint32_t nt, const cannsim::SrcLoc& loc) {
        GlobalTensor<BiasT> g = cannsim::mm::gm_of<BiasT>(r.bias);
        cannsim::gm_bytes_check("SetBias", g, uint64_t(n0) * sizeof(BiasT), uint64_t(n0 + nt) * sizeof(BiasT), loc);
        cannsim::cube_range("DataCopy", "dst", bt, 0, uint64_t(cannsim::mm::ceil_to(nt, 16)) * sizeof(L0cT), loc);
        if (!cannsim::count_only()) {
            const BiasT* s = CANNSIM_CUBE_GM(g.GetPhyAddr()) + n0;
            L0cT* d = reinterpret_cast<L0cT*>(cannsim::arena_at(bt.addr_));
            for (uint32_t j = 0; j < cannsim::mm::ceil_to(nt, 16); ++j)
                d[j] = j < nt ? static_cast<L0cT>(cannsim::to_double(s[j])) : L0cT(0);
        }
        cannsim::mark_written(bt.slot_, PIPE_MTE2);
        cannsim::record_cost(PIPE_MTE2, "DataCopy", cannsim::dtype_of<BiasT>(), nt, uint64_t(nt) * sizeof(BiasT));
    }

    void compute_tile(const cannsim::mm::Request& r, uint32_t mi, uint32_t ni, const GlobalTensor<DstT>& c,
                      const cannsim::SrcLoc& loc) {
        const TCubeTiling& t = r.t;
        const uint32_t m0 = mi * t.baseM, n0 = ni * t.baseN;
        if (m0 >= uint32_t(r.sM) || n0 >= uint32_t(r.sN)) return;
        const uint32_t mt = std::min<uint32_t>(t.baseM, r.sM - m0), nt = std::min<uint32_t>(t.baseN, r.sN - n0);
        const uint32_t kca = uint32_t(t.stepKa) * t.baseK, kcb = uint32_t(t.stepKb) * t.baseK;
        LocalTensor<L0cT> acc = qc_.template AllocTensor<L0cT>(loc);
        LocalTensor<L0cT> bt;
        const bool bias = r.hasBias;
        if (bias) {
            bt = qbt_.template AllocTensor<L0cT>(loc);
            load_bias(bt, r, n0, nt, loc);
            qbt_.EnQue(bt, loc);
            bt = qbt_.template DeQue<L0cT>(loc);
        }
        for (uint32_t k0 = 0; k0 < uint32_t(r.sK); k0 += t.baseK) {
            const uint32_t kt = std::min<uint32_t>(t.baseK, r.sK - k0);
            // A: (M x Ka) row length orgKa, or transposed (Ka x M) row length orgM
            LocalTensor<SrcAT>& a1 = ensure_panel(qa1_, a1_, pa_, a1_slots_, r.a, r.transA, true, m0, mt, k0 / kca, kca, r.sK,
                                                   r.transA ? r.orgM : r.orgKa, r, loc);
            // B: (Kb x N) row length orgN, or transposed (N x Kb) row length orgKb
            LocalTensor<SrcBT>& b1 = ensure_panel(qb1_, b1_, pb_, b1_slots_, r.b, r.transB, false, n0, nt, k0 / kcb, kcb, r.sK,
                                                   r.transB ? r.orgKb : r.orgN, r, loc);
            LocalTensor<SrcAT> a2 = qa2_.template AllocTensor<SrcAT>(loc);
            LocalTensor<SrcBT> b2 = qb2_.template AllocTensor<SrcBT>(loc);
            load_l0(a2, a1, pa_, true, k0 % kca, kt, mt, loc);
            load_l0(b2, b1, pb_, false, k0 % kcb, kt, nt, loc);
            qa2_.EnQue(a2, loc); qb2_.EnQue(b2, loc);
            a2 = qa2_.template DeQue<SrcAT>(loc);
            b2 = qb2_.template DeQue<SrcBT>(loc);
            MmadParams mp(static_cast<uint16_t>(mt), static_cast<uint16_t>(nt), static_cast<uint16_t>(kt));
            mp.cmatrixInitVal = k0 == 0;
            if (bias && k0 == 0) Mmad(acc, a2, b2, bt, mp, loc);
            else Mmad(acc, a2, b2, mp, loc);
            qa2_.FreeTensor(a2, loc);
            qb2_.FreeTensor(b2, loc);
        }
        if (bias) qbt_.FreeTensor(bt, loc);
        qc_.EnQue(acc, loc);
        acc = qc_.template DeQue<L0cT>(loc);
        FixpipeParamsV220 fp(static_cast<uint16_t>(nt), static_cast<uint16_t>(mt), static_cast<uint16_t>(cannsim::mm::ceil_to(mt, 16)),
                             r.cToWorkspace ? uint32_t(t.baseN) : uint32_t(r.orgN), false);
        fp.quantPre = quant_mode();
        fp.deqScalar = r.quant;
        const uint64_t at = r.cToWorkspace ? 0 : uint64_t(m0) * r.orgN + n0;
        Fixpipe(c[at], acc, fp, loc);
        qc_.FreeTensor(acc, loc);
    }

    // Give back the L1 panels kept for reuse.
    void release() {
        if (pa_.valid) qa1_.FreeTensor(a1_);
        if (pb_.valid) qb1_.FreeTensor(b1_);
        pa_.valid = pb_.valid = false;
    }

    static QuantMode_t quant_mode() {
        if constexpr (std::is_same_v<L0cT, float>) {
            if constexpr (std::is_same_v<DstT, half>) return QuantMode_t::F322F16;
            else if constexpr (std::is_same_v<DstT, bfloat16_t>) return QuantMode_t::F322BF16;
            else return QuantMode_t::NoQuant;
        } else {
            if constexpr (std::is_same_v<DstT, half>) return QuantMode_t::DEQF16;
            else return QuantMode_t::NoQuant;
        }
    }

    State st_;
    int index_ = 0;
    TPipe* pipe_ = nullptr;
    bool registered_ = false, has_tiling_ = false, have_a_ = false, have_b_ = false, ended_ = false;
    bool iterated_ = false, done_ = false;
    uint32_t next_ = 0, pending_ = 0;
    // the executing core's buffers
    bool ready_ = false;
    uint64_t a1_bytes_ = 0, b1_bytes_ = 0, a2_bytes_ = 0, b2_bytes_ = 0, c_bytes_ = 0, bt_bytes_ = 0;
    int a1_slots_ = 1, b1_slots_ = 1;
    TQue<TPosition::A1, 1> qa1_;
    TQue<TPosition::B1, 1> qb1_;
    TQue<TPosition::A2, 1> qa2_;
    TQue<TPosition::B2, 1> qb2_;
    TQue<TPosition::CO1, 1> qc_;
    TQue<TPosition::C2, 1> qbt_;
    LocalTensor<SrcAT> a1_;
    LocalTensor<SrcBT> b1_;
    Panel pa_, pb_;
};

}  // namespace AscendC

namespace cannsim::mm {

template <typename T> struct IsMatmul : std::false_type {};
template <class A, class B, class C, class Bi, const AscendC::MatmulConfig& CFG, class CB, class... P>
struct IsMatmul<AscendC::Matmul<A, B, C, Bi, CFG, CB, P...>> : std::true_type {};

inline void bind(int, AscendC::TPipe*, const SrcLoc&) {}
template <typename M, typename... Rest>
inline void bind(int idx, AscendC::TPipe* pipe, const SrcLoc& loc, M& mm, Rest&&... rest);

template <typename M, typename... Rest>
inline void bind_with(int idx, AscendC::TPipe* pipe, const SrcLoc& loc, M& mm, const AscendC::tiling::TCubeTiling* t,
                      Rest&&... rest) {
    if (idx >= kMaxObjects) {
        report("L2.MATMUL_USAGE", Severity::Error, "REGIST_MATMUL_OBJ", loc.line(),
               "REGIST_MATMUL_OBJ: at most 4 Matmul objects per kernel", true);
        return;
    }
    mm.cannsim_register(idx, pipe, t, loc);
    servers()[idx] = {&mm, &M::cannsim_serve, &M::cannsim_release};
    object_count() = std::max(object_count(), idx + 1);
    bind(idx + 1, pipe, loc, std::forward<Rest>(rest)...);
}

template <typename M, typename... Rest>
inline void bind(int idx, AscendC::TPipe* pipe, const SrcLoc& loc, M& mm, Rest&&... rest) {
    static_assert(IsMatmul<std::decay_t<M>>::value, "REGIST_MATMUL_OBJ(pipe, workspace, mm[, &tiling], ...): a Matmul object");
    if constexpr (sizeof...(Rest) > 0) {
        using First = std::decay_t<std::tuple_element_t<0, std::tuple<Rest...>>>;
        if constexpr (std::is_pointer_v<First>) {
            auto go = [&](auto* t, auto&&... more) {
                bind_with(idx, pipe, loc, mm, reinterpret_cast<const AscendC::tiling::TCubeTiling*>(t),
                          std::forward<decltype(more)>(more)...);
            };
            go(std::forward<Rest>(rest)...);
        } else {
            bind_with(idx, pipe, loc, mm, nullptr, std::forward<Rest>(rest)...);
        }
    } else {
        bind_with(idx, pipe, loc, mm, nullptr);
    }
}

template <typename... Objs>
inline void regist(AscendC::TPipe* pipe, GM_ADDR workspace, const SrcLoc& loc, Objs&&... objs) {
    (void)workspace;
    bind(0, pipe, loc, std::forward<Objs>(objs)...);
    if (mix::self().ratio > 0 && mix::self().core == mix::AIC) serve_block(loc);
}

}  // namespace cannsim::mm

namespace matmul {
using AscendC::Matmul;
using AscendC::MatmulType;
using AscendC::MatmulConfig;
}  // namespace matmul
