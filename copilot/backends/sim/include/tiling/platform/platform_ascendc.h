// Clean-room platform query API (platform_ascendc::PlatformAscendC) for the sim backend.
// Answers come from the chip profile the harness configured (copilot/chips/<chip>.yaml).
#ifndef CANNSIM_PLATFORM_ASCENDC_H
#define CANNSIM_PLATFORM_ASCENDC_H

#include <cstdint>
#include <cstring>
#include "cannsim/host.h"

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };

enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND910_93,
    ASCEND910_95,
    ASCEND950 = ASCEND910_95,
    ASCEND310P,
    ASCEND310B,
    RESERVED_VERSION = 99999,
};

class PlatformAscendC {
public:
    PlatformAscendC() = delete;
    explicit PlatformAscendC(fe::PlatFormInfos* info) : info_(info ? info : default_info()) {}

    uint32_t GetCoreNum() const { return info_->core_num_aiv; }
    uint32_t GetCoreNumAic() const { return info_->core_num_aic; }
    uint32_t GetCoreNumAiv() const { return info_->core_num_aiv; }
    uint32_t GetCoreNumVector() const { return 0; }  // separate Vector Cores (310P-class only)

    SocVersion GetSocVersion() const {
        const char* s = info_->short_soc_version;
        if (std::strcmp(s, "Ascend910B") == 0) return SocVersion::ASCEND910B;
        if (std::strcmp(s, "Ascend910_93") == 0) return SocVersion::ASCEND910_93;
        if (std::strcmp(s, "Ascend950") == 0) return SocVersion::ASCEND910_95;
        if (std::strcmp(s, "Ascend310P") == 0) return SocVersion::ASCEND310P;
        if (std::strcmp(s, "Ascend310B") == 0) return SocVersion::ASCEND310B;
        if (std::strcmp(s, "Ascend910") == 0) return SocVersion::ASCEND910;
        return SocVersion::RESERVED_VERSION;
    }

    void GetCoreMemSize(CoreMemType t, uint64_t& size) const {
        switch (t) {
            case CoreMemType::UB: size = info_->ub_bytes; break;
            case CoreMemType::L1: size = info_->l1_bytes; break;
            case CoreMemType::L0_A: size = info_->l0a_bytes; break;
            case CoreMemType::L0_B: size = info_->l0b_bytes; break;
            case CoreMemType::L0_C: size = info_->l0c_bytes; break;
            case CoreMemType::L2: size = info_->l2_bytes; break;
            case CoreMemType::HBM: size = info_->hbm_bytes; break;
            default: size = 0; break;
        }
    }
    void GetCoreMemBw(CoreMemType, uint64_t& bw) const { bw = 0; }  // not modelled here

    // System workspace the AscendC library reserves at the front of the workspace.
    uint32_t GetLibApiWorkSpaceSize() const {
        return info_->arch == 2201 || info_->arch == 3510 ? 16u * 1024 * 1024 : 2u * 1024 * 1024;
    }
    uint32_t GetResGroupBarrierWorkSpaceSize() const { return 1u * 1024 * 1024; }
    uint32_t GetResCubeGroupWorkSpaceSize() const { return 1u * 1024 * 1024; }

    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const {
        uint32_t n = sliceNum;
        if (aicCoreNum != 0 && aivCoreNum != 0 && aivCoreNum > aicCoreNum) {
            uint32_t ratio = aivCoreNum / aicCoreNum;
            n = (sliceNum + ratio - 1) / ratio;
        }
        return n;
    }
    uint32_t CalcTschNumBlocks(uint32_t s, uint32_t aic, uint32_t aiv) const { return CalcTschBlockDim(s, aic, aiv); }

private:
    static fe::PlatFormInfos* default_info() {
        static fe::PlatFormInfos d;
        return &d;
    }
    fe::PlatFormInfos* info_;
};

class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance() {
        static PlatformAscendC p(current());
        return &p;
    }
    static PlatformAscendC* GetInstance(const char*) { return GetInstance(); }
    // The harness points this at the configured chip before any candidate code runs.
    static fe::PlatFormInfos*& current() {
        static fe::PlatFormInfos* info = nullptr;
        return info;
    }
};

}  // namespace platform_ascendc

#endif  // CANNSIM_PLATFORM_ASCENDC_H
