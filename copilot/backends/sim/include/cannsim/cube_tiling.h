// TCubeTiling: the tiling the host's matmul_tiling classes compute (GetTiling) and the kernel's Matmul
// object reads (REGIST_MATMUL_OBJ / Init). Fields as the CANN 9.0.0 reference lists them (TCubeTiling
// structure table), all int32; shared by the host and the device unit.
#pragma once
#include <cstdint>

namespace AscendC {
namespace tiling {
struct TCubeTiling {
    int32_t usedCoreNum = 0;
    int32_t M = 0, N = 0, Ka = 0, Kb = 0;
    int32_t singleCoreM = 0, singleCoreN = 0, singleCoreK = 0;
    int32_t baseM = 0, baseN = 0, baseK = 0;
    int32_t depthA1 = 0, depthB1 = 0;
    int32_t stepM = 0, stepN = 0;
    int32_t isBias = 0;
    int32_t transLength = 0;
    int32_t iterateOrder = 0;
    int32_t shareMode = 0, shareL1Size = 0, shareL0CSize = 0, shareUbSize = 0;
    int32_t batchM = 0, batchN = 0, singleBatchM = 0, singleBatchN = 0;
    int32_t stepKa = 0, stepKb = 0;
    int32_t depthAL1CacheUB = 0, depthBL1CacheUB = 0;
    int32_t dbL0A = 0, dbL0B = 0, dbL0C = 0;
    int32_t ALayoutInfoB = 0, ALayoutInfoS = 0, ALayoutInfoN = 0, ALayoutInfoG = 0, ALayoutInfoD = 0;
    int32_t BLayoutInfoB = 0, BLayoutInfoS = 0, BLayoutInfoN = 0, BLayoutInfoG = 0, BLayoutInfoD = 0;
    int32_t CLayoutInfoB = 0, CLayoutInfoS1 = 0, CLayoutInfoN = 0, CLayoutInfoG = 0, CLayoutInfoS2 = 0;
    int32_t BatchNum = 0;
    int32_t mxTypePara = 0;
    int32_t reserved = 0;
// get_/set_ accessors, as the host's legacy TILING_DATA classes spell them
#define CANNSIM_TCT_FIELD(f) \
    int32_t get_##f() const { return f; } \
    void set_##f(int32_t v) { f = v; }
    CANNSIM_TCT_FIELD(usedCoreNum) CANNSIM_TCT_FIELD(M) CANNSIM_TCT_FIELD(N) CANNSIM_TCT_FIELD(Ka)
    CANNSIM_TCT_FIELD(Kb) CANNSIM_TCT_FIELD(singleCoreM) CANNSIM_TCT_FIELD(singleCoreN) CANNSIM_TCT_FIELD(singleCoreK)
    CANNSIM_TCT_FIELD(baseM) CANNSIM_TCT_FIELD(baseN) CANNSIM_TCT_FIELD(baseK) CANNSIM_TCT_FIELD(depthA1)
    CANNSIM_TCT_FIELD(depthB1) CANNSIM_TCT_FIELD(stepM) CANNSIM_TCT_FIELD(stepN) CANNSIM_TCT_FIELD(isBias)
    CANNSIM_TCT_FIELD(transLength) CANNSIM_TCT_FIELD(iterateOrder) CANNSIM_TCT_FIELD(stepKa)
    CANNSIM_TCT_FIELD(stepKb) CANNSIM_TCT_FIELD(dbL0A) CANNSIM_TCT_FIELD(dbL0B) CANNSIM_TCT_FIELD(dbL0C)
#undef CANNSIM_TCT_FIELD
};
}  // namespace tiling
}  // namespace AscendC

namespace optiling {
using TCubeTiling = ::AscendC::tiling::TCubeTiling;
}
using AscendC::tiling::TCubeTiling;
