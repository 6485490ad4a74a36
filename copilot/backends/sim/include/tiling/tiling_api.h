// Host tiling API of the high-level AscendC libraries (the header CANN host code includes).
#pragma once
#include "cannsim/hl_host.h"
#include "cannsim/hl_host_ext.h"
#include "cannsim/layout_host.h"
#include "cannsim/matmul_host.h"
