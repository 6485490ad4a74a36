// The per-candidate part of the sim backend's launcher: the two calls into candidate code that the
// generic launcher (cannsim/harness.cpp, compiled once and linked in) makes, and main(). The runner
// builds a candidate as CANN's two units and includes this at the end of each: with
// CANNSIM_HOST_GLUE (after the host half) it defines run_tiling; with CANNSIM_DEVICE_GLUE (after the
// device half) call_entry and main(); with neither, all of them (one unit).
// The device part needs:
//   CANNSIM_ENTRY   the kernel entry's name
//   CANNSIM_NUM_IO  the task's inputs + outputs (the entry takes CANNSIM_NUM_IO + 2 GM_ADDRs)
#include <cstddef>
#include <utility>

namespace cannsim_glue {
int launcher_main(int argc, char** argv);   // cannsim/harness.cpp
}

#ifndef CANNSIM_DEVICE_GLUE
namespace cannsim_glue {
int run_tiling(gert::TilingContext* ctx) {
    return static_cast<int>(optiling::TilingFunc(ctx));
}
}  // namespace cannsim_glue
#endif

#ifndef CANNSIM_HOST_GLUE
#ifndef CANNSIM_ENTRY
#error "CANNSIM_ENTRY must name the kernel entry"
#endif
#ifndef CANNSIM_NUM_IO
#error "CANNSIM_NUM_IO must give the number of inputs + outputs"
#endif

namespace cannsim_glue {

// every input and output, then workspace and tiling: CANNSIM_NUM_IO + 2 GM addresses in order
template <std::size_t... I>
void call_with(uint8_t** args, std::index_sequence<I...>) {
    CANNSIM_ENTRY(reinterpret_cast<GM_ADDR>(args[I])...);
}
void call_entry(uint8_t** args) {
    static_assert(CANNSIM_NUM_IO >= 1, "the sim harness needs at least one input or output");
    call_with(args, std::make_index_sequence<CANNSIM_NUM_IO + 2>{});
}

}  // namespace cannsim_glue

int main(int argc, char** argv) { return cannsim_glue::launcher_main(argc, argv); }
#endif  // CANNSIM_HOST_GLUE
