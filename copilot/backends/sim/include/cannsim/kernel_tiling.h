// The library tiling structs as the kernel headers expose them: defined in AscendC::tiling and
// brought into the global scope by using-declarations, so a kernel's own struct of one of these
// names is a redefinition here as on CANN. The emulated libraries' structs (with their fields) are in
// hl_types.h and hl_types_ext.h; the others are declared complete and empty (their libraries are not emulated).
#pragma once
#include "hl_types.h"
#include "hl_types_ext.h"
#include "cube_tiling.h"

namespace AscendC {
namespace tiling {
struct ConfusionTransposeTiling {};
struct Conv3DBackpropFilterTilingData {};
struct Conv3DBackpropInputTilingData {};
struct Conv3DBpFilterParams {};
struct LayerNormSeparateTiling {};
struct Mc2CcTiling {};
struct Mc2HcommCfg {};
struct Mc2InitTiling {};
struct Mc2ServerCfg {};
struct TConv3DApiTiling {};
struct TConv3DBackpropInputTiling {};
struct TConv3DBpFilterBasicBlockTiling {};
struct TConv3DBpFilterTiling {};
}  // namespace tiling
}  // namespace AscendC

using AscendC::tiling::BatchNormTiling;
using AscendC::tiling::ConfusionTransposeTiling;
using AscendC::tiling::Conv3DBackpropFilterTilingData;
using AscendC::tiling::Conv3DBackpropInputTilingData;
using AscendC::tiling::Conv3DBpFilterParams;
using AscendC::tiling::DeepNormTiling;
using AscendC::tiling::GroupNormTiling;
using AscendC::tiling::LayerNormGradBetaTiling;
using AscendC::tiling::LayerNormGradTiling;
using AscendC::tiling::LayerNormSeparateTiling;
using AscendC::tiling::LayerNormTiling;
using AscendC::tiling::LogSoftMaxTiling;
using AscendC::tiling::Mc2CcTiling;
using AscendC::tiling::Mc2HcommCfg;
using AscendC::tiling::Mc2InitTiling;
using AscendC::tiling::Mc2ServerCfg;
using AscendC::tiling::PadTiling;
using AscendC::tiling::RmsNormTiling;
using AscendC::tiling::SoftMaxTiling;
using AscendC::tiling::TConv3DApiTiling;
using AscendC::tiling::TConv3DBackpropInputTiling;
using AscendC::tiling::TConv3DBpFilterBasicBlockTiling;
using AscendC::tiling::TConv3DBpFilterTiling;
using AscendC::tiling::TCubeTiling;
using AscendC::tiling::TopkTiling;
using AscendC::tiling::UnPadTiling;
