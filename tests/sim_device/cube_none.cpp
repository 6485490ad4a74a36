// A kernel that uses no cube API and no cross-core flag must launch as plain vector cores
// (tests/test_cube.py): exit status 1 if the headers alone registered a cube use.
#include "kernel_operator.h"

int main() {
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
    (void)q;
    return cannsim::mix::uses_cube() || cannsim::mix::uses_cross_core() || cannsim::mix::processes_per_block() != 1 ? 1 : 0;
}
