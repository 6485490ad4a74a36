// The launcher's timeline tracks UB dependencies by the bytes each operand touches as well as by
// slot (tests/test_redteam_timeline.py): a copy in writes slot 1, bytes [0, 4096); a vector op
// then reads those bytes under another slot id. Prints the vector op's end with and without the
// ranges, the copy's end, and whether a replayed event with an inverted range is refused.
#include <cstdio>
#include "cannsim/cost_timeline.h"

using cannsim::cost::Range;
using cannsim::cost::Timeline;

static double forged_read(bool with_ranges) {
    Timeline t;
    const int w1[1] = {1}, r7[1] = {7}, w8[1] = {8};
    const Range in{0, 4096}, out{4096, 8192};
    const double copy_end = t.dma(cannsim::cost::MTE2, 1, 4096, true, Timeline::Slots{nullptr, 0},
                                  Timeline::Slots{w1, 1, with_ranges ? &in : nullptr});
    const double v_end = t.vector(4096, 1.0, Timeline::Slots{r7, 1, with_ranges ? &in : nullptr},
                                  Timeline::Slots{w8, 1, with_ranges ? &out : nullptr});
    std::printf("\"copy_end_%d\": %.3f, ", with_ranges ? 1 : 0, copy_end);
    return v_end;
}

int main() {
    const double with = forged_read(true), without = forged_read(false);
    Timeline t;
    cannsim::cost::Event e{};
    e.op = cannsim::cost::EV_VECTOR;
    e.a = 256; e.b = 1.0; e.nreads = 1; e.reads[0] = 3;
    e.read_ranges[0] = Range{64, 32};
    const bool inverted_refused = !t.apply(e);
    e.read_ranges[0] = Range{32, 64};
    const bool valid_applied = t.apply(e);
    std::printf("\"vector_end_ranges\": %.3f, \"vector_end_slots_only\": %.3f, \"inverted_refused\": %d, "
                "\"valid_applied\": %d}\n", with, without, inverted_refused, valid_applied);
    return 0;
}
