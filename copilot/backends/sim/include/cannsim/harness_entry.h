// The per-candidate part of the sim backend's launcher: the two calls into candidate code that the
// generic launcher (cannsim/harness.cpp, compiled once and linked in) makes, and main(). The runner
// builds a candidate as CANN's two units and includes this at the end of each: with
// CANNSIM_HOST_GLUE (after the host half) it defines run_tiling; with CANNSIM_DEVICE_GLUE (after the
// device half) call_entry and main(); with neither, all of them (one unit).
// The device part needs:
//   CANNSIM_ENTRY   the kernel entry's name
//   CANNSIM_NUM_IO  the task's inputs + outputs (the entry takes CANNSIM_NUM_IO + 2 GM_ADDRs)
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

#define CANNSIM_GM(i) reinterpret_cast<GM_ADDR>(args[i])
void call_entry(uint8_t** args) {
#if CANNSIM_NUM_IO == 1
    CANNSIM_ENTRY(CANNSIM_GM(0), CANNSIM_GM(1), CANNSIM_GM(2));
#elif CANNSIM_NUM_IO == 2
    CANNSIM_ENTRY(CANNSIM_GM(0), CANNSIM_GM(1), CANNSIM_GM(2), CANNSIM_GM(3));
#elif CANNSIM_NUM_IO == 3
    CANNSIM_ENTRY(CANNSIM_GM(0), CANNSIM_GM(1), CANNSIM_GM(2), CANNSIM_GM(3), CANNSIM_GM(4));
#elif CANNSIM_NUM_IO == 4
    CANNSIM_ENTRY(CANNSIM_GM(0), CANNSIM_GM(1), CANNSIM_GM(2), CANNSIM_GM(3), CANNSIM_GM(4), CANNSIM_GM(5));
#elif CANNSIM_NUM_IO == 5
    CANNSIM_ENTRY(CANNSIM_GM(0), CANNSIM_GM(1), CANNSIM_GM(2), CANNSIM_GM(3), CANNSIM_GM(4), CANNSIM_GM(5),
                  CANNSIM_GM(6));
#elif CANNSIM_NUM_IO == 6
    CANNSIM_ENTRY(CANNSIM_GM(0), CANNSIM_GM(1), CANNSIM_GM(2), CANNSIM_GM(3), CANNSIM_GM(4), CANNSIM_GM(5),
                  CANNSIM_GM(6), CANNSIM_GM(7));
#elif CANNSIM_NUM_IO == 7
    CANNSIM_ENTRY(CANNSIM_GM(0), CANNSIM_GM(1), CANNSIM_GM(2), CANNSIM_GM(3), CANNSIM_GM(4), CANNSIM_GM(5),
                  CANNSIM_GM(6), CANNSIM_GM(7), CANNSIM_GM(8));
#elif CANNSIM_NUM_IO == 8
    CANNSIM_ENTRY(CANNSIM_GM(0), CANNSIM_GM(1), CANNSIM_GM(2), CANNSIM_GM(3), CANNSIM_GM(4), CANNSIM_GM(5),
                  CANNSIM_GM(6), CANNSIM_GM(7), CANNSIM_GM(8), CANNSIM_GM(9));
#else
#error "the sim harness supports 1 to 8 inputs + outputs"
#endif
}
#undef CANNSIM_GM

}  // namespace cannsim_glue

int main(int argc, char** argv) { return cannsim_glue::launcher_main(argc, argv); }
#endif  // CANNSIM_HOST_GLUE
