// The library tiling structs (TCubeTiling, ...) as kernels include them.
#pragma once
#include "cannsim/kernel_tiling.h"
