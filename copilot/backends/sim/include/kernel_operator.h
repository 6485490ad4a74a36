// Clean-room CPU emulation of the AscendC vector device API (namespace AscendC).
// Written from documented behaviour only; see docs/emulator-api.md for coverage and rules.
#pragma once
#include "cannsim/types.h"
#include "cannsim/runtime.h"
#include "cannsim/dtype_table.h"
#include "cannsim/tensor.h"
#include "cannsim/pipe.h"
#include "cannsim/vec_engine.h"
#include "cannsim/vec_ops.h"
#include "cannsim/cast.h"
#include "cannsim/reduce.h"
#include "cannsim/cmpsel.h"
#include "cannsim/datacopy.h"
#include "cannsim/debug.h"
#include "cannsim/int_ops.h"
#include "cannsim/gather.h"
#include "cannsim/atomic.h"
#include "cannsim/sync.h"
#include "cannsim/sort.h"
#include "cannsim/hl_math.h"
#include "cannsim/hl_norm.h"
#include "cannsim/hl_quant.h"
#include "cannsim/hl_reduce.h"
#include "cannsim/transpose.h"
#include "cannsim/kernel_tiling.h"
#include "cannsim/tiling.h"
#include "cannsim/fused_cast.h"
#include "cannsim/ub_misc.h"
#include "cannsim/hl_layout.h"
#include "cannsim/hl_norm_ext.h"
#include "cannsim/hl_softmax_ext.h"
#include "cannsim/cmp_register.h"
#include "cannsim/trans_data.h"
#include "cannsim/cast_dequant.h"
#include "cannsim/bilinear.h"
#include "cannsim/softmax_flash_v3.h"
#include "cannsim/cube.h"
#include "cannsim/load3d.h"

// Old intrinsic spellings of the sync instructions.
inline void set_flag(pipe_t src, pipe_t dst, int id, CANNSIM_LOC) {
    for (int e = 0; e < static_cast<int>(AscendC::HardEvent::MAX); ++e) {
        const auto& p = cannsim::event_pipes(static_cast<AscendC::HardEvent>(e));
        if (p.src == src && p.dst == dst) { cannsim::set_flag(static_cast<AscendC::HardEvent>(e), id, loc); return; }
    }
}
inline void wait_flag(pipe_t src, pipe_t dst, int id, CANNSIM_LOC) {
    for (int e = 0; e < static_cast<int>(AscendC::HardEvent::MAX); ++e) {
        const auto& p = cannsim::event_pipes(static_cast<AscendC::HardEvent>(e));
        if (p.src == src && p.dst == dst) { cannsim::wait_flag(static_cast<AscendC::HardEvent>(e), id, loc); return; }
    }
}

// Last: the code macros would break the emulator's own dtype names above.
#include "cannsim/kernel_type.h"
