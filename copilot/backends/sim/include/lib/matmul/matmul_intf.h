// Same header under its other include path.
#pragma once
#include "lib/matmul_intf.h"
