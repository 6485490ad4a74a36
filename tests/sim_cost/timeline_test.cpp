// Drives cannsim::cost::Timeline through the instruction streams of typical kernels and prints
// one JSON object of figures; tests/test_cost_timeline.py asserts the properties.
#include <cstdio>
#include "cannsim/cost_timeline.h"

using namespace cannsim::cost;

// An elementwise kernel on one core: `tiles` tiles of `tile_bytes`, `buffers` buffers per queue,
// `ops` vector instructions of weight `weight` per tile. Slots: in queue 0..buffers-1,
// out queue 10..10+buffers-1.
static double elementwise(int tiles, double tile_bytes, int buffers, int ops, double weight, int cores) {
    Params p;
    p.active_cores = cores;
    Timeline t(p);
    for (int i = 0; i < tiles; ++i) {
        const int in = i % buffers, out = 10 + i % buffers;
        t.dma(MTE2, 1, tile_bytes, true, {}, {in});
        for (int k = 0; k < ops; ++k) t.vector(tile_bytes, weight, {in}, {out});
        t.dma(MTE3, 1, tile_bytes, true, {out}, {});
    }
    return t.finish().cycles;
}

int main() {
    const double total = 8.0 * 1024 * 1024;   // bytes per core
    // Memory-bound on a core that is limited by its own DMA engines (8 cores stream: HBM not
    // saturated), where buffering decides whether copies overlap.
    double single = elementwise(256, total / 256, 1, 1, 1.0, 8);
    double dbl = elementwise(256, total / 256, 2, 1, 1.0, 8);
    double single_sat = elementwise(256, total / 256, 1, 1, 1.0, 48);
    double dbl_sat = elementwise(256, total / 256, 2, 1, 1.0, 48);
    double tiny = elementwise(8192, total / 8192, 2, 1, 1.0, 8);
    // Same total work split over more cores: per-core bytes shrink, per-core share of HBM too.
    double c1 = elementwise(256, 48 * total / 1 / 256, 2, 1, 1.0, 1);
    double c2 = elementwise(256, 48 * total / 2 / 256, 2, 1, 1.0, 2);
    double c4 = elementwise(256, 48 * total / 4 / 256, 2, 1, 1.0, 4);
    double c8 = elementwise(256, 48 * total / 8 / 256, 2, 1, 1.0, 8);
    double c24 = elementwise(256, 48 * total / 24 / 256, 2, 1, 1.0, 24);
    double c48 = elementwise(256, 48 * total / 48 / 256, 2, 1, 1.0, 48);
    double fp16 = elementwise(256, total / 256, 2, 1, 1.0, 48);
    double fp32 = elementwise(256, 2 * total / 256, 2, 1, 1.0, 48);
    // Vector-heavy: 40 transcendental-weight ops per tile.
    Params p; p.active_cores = 48; Timeline heavy(p);
    for (int i = 0; i < 64; ++i) {
        heavy.dma(MTE2, 1, 32768, true, {}, {i % 2});
        for (int k = 0; k < 40; ++k) heavy.vector(32768, 4.0, {i % 2}, {10 + i % 2});
        heavy.dma(MTE3, 1, 32768, true, {10 + i % 2}, {});
    }
    BlockCost h = heavy.finish();
    // A barrier after every tile removes the overlap double buffering gave.
    Params p8; p8.active_cores = 8; Timeline barred(p8);
    for (int i = 0; i < 256; ++i) {
        barred.dma(MTE2, 1, total / 256, true, {}, {i % 2});
        barred.vector(total / 256, 1.0, {i % 2}, {10 + i % 2});
        barred.dma(MTE3, 1, total / 256, true, {10 + i % 2}, {});
        barred.barrier_all();
    }
    // Flags: V waits for a flag set after a long MTE2 transfer.
    Timeline flagged(p);
    flagged.dma(MTE2, 1, 1 << 20, true, {}, {0});
    flagged.set_flag(MTE2, /*event*/ 1, /*id*/ 0);
    flagged.wait_flag(V, 1, 0);
    double v_end = flagged.vector(256, 1.0, {5}, {6});   // touches unrelated slots
    // Unaligned GM rows and short bursts.
    Timeline aligned(p), unaligned(p), shortrows(p);
    aligned.dma(MTE2, 1, 65536, true, {}, {0});
    unaligned.dma(MTE2, 1, 65536, false, {}, {0});
    shortrows.dma(MTE2, 512, 128, true, {}, {0});
    // Three copies into one buffer on the in-order MTE2 pipeline like copies into three buffers;
    // a vector write to that buffer still waits for the last copy's data to land.
    Timeline same(p), distinct(p), then_vector(p);
    double copy_end = 0;
    for (int k = 0; k < 3; ++k) {
        same.dma(MTE2, 1, 8192, true, {}, {0});
        distinct.dma(MTE2, 1, 8192, true, {}, {k});
        copy_end = then_vector.dma(MTE2, 1, 8192, true, {}, {0});
    }
    const double v_after_copies = then_vector.vector(256, 1.0, {}, {0});
    std::printf("{\"single_sat\":%.1f,\"double_sat\":%.1f,\"single\":%.1f,\"double\":%.1f,\"tiny\":%.1f,\"c1\":%.1f,\"c2\":%.1f,\"c4\":%.1f,\"c8\":%.1f,\"c24\":%.1f,"
                "\"c48\":%.1f,\"fp16\":%.1f,\"fp32\":%.1f,\"heavy_v\":%.1f,\"heavy_mte2\":%.1f,"
                "\"heavy_cycles\":%.1f,\"barred\":%.1f,\"flag_v_end\":%.1f,\"flag_mte2_end\":%.1f,"
                "\"aligned\":%.1f,\"unaligned\":%.1f,\"shortrows\":%.1f,\"copies_same\":%.1f,"
                "\"copies_distinct\":%.1f,\"copy_end\":%.1f,\"v_after_copies\":%.1f}\n",
                single_sat, dbl_sat, single, dbl, tiny, c1, c2, c4, c8, c24, c48, fp16, fp32, h.busy[V], h.busy[MTE2], h.cycles, barred.finish().cycles,
                v_end, flagged.finish().busy[MTE2], aligned.finish().cycles, unaligned.finish().cycles,
                shortrows.finish().cycles, same.finish().cycles,
                distinct.finish().cycles, copy_end, v_after_copies);
    return 0;
}
