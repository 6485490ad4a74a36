// The API facts the knowledge cards state (tests/test_knowledge_op_cards.py), run on the emulator:
// a Compare mask is a GatherMask pattern (bit i = element i) and counter mode compacts n elements by
// n bits with rsvdCnt the kept count; Gather's srcBaseAddr is in bytes and needs only element
// alignment; SYNC_MISSING tracks a whole TBuf; Concat stops at 255 repeats; an exhausted MrgSort
// writes the sum of GetMrgSortResult's counts; which syncs clear a pending MTE2 write for GetValue.
// Usage: card_facts_main SCENARIO DIAG_FILE; results on stdout as `key=value` lines.
#include <fcntl.h>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include "kernel_operator.h"

using namespace AscendC;
static float g_src[1024];

// Dedup of a sorted run: prev[i] = v[i-1] by Gather, Compare NE, GatherMask counter mode.
static void dedup() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b, p, m, o, off;
    pipe.InitBuffer(b, 72 * 4); pipe.InitBuffer(p, 64 * 4); pipe.InitBuffer(m, 256);
    pipe.InitBuffer(o, 64 * 4); pipe.InitBuffer(off, 64 * 4);
    LocalTensor<float> buf = b.Get<float>(), prev = p.Get<float>(), out = o.Get<float>();
    LocalTensor<float> v = buf[8];
    float* raw = buf.sim_data();
    raw[7] = NAN;                                   // before the run's first element: differs from all
    for (int i = 0; i < 64; ++i) raw[8 + i] = static_cast<float>(i / 5);   // 13 runs: 0 x5, 1 x5, ...
    raw[8 + 62] = NAN; raw[8 + 63] = NAN;            // two NaNs at the end stay two values
    LocalTensor<int32_t> idx = off.Get<int32_t>();
    CreateVecIndex(idx, 7, 64);
    ShiftLeft(idx, idx, (int32_t)2, 64);                     // byte offsets 4 * (i + 7)
    Gather(prev, buf, idx.ReinterpretCast<uint32_t>(), 0, 64);
    LocalTensor<uint8_t> mask = m.Get<uint8_t>();
    Compare(mask, v, prev, CMPMODE::NE, 64);
    uint64_t kept = 0;
    GatherMask(out, v, mask.ReinterpretCast<uint32_t>(), true, 64, GatherMaskParams{1, 1, 8, 0}, kept);
    std::printf("first_mask_byte=%u\nrsvdCnt=%llu\n", static_cast<unsigned>(mask.sim_data()[0]),
                static_cast<unsigned long long>(kept));
    std::printf("kept=");
    for (uint64_t i = 0; i < kept; ++i) std::printf("%s%g", i ? "," : "", out.sim_data()[i]);
    std::printf("\n");
}

// srcBaseAddr = 4 bytes: not 32-B aligned, element aligned; reads src[1 + offset / 4].
static void gather_base() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> s, o, off;
    pipe.InitBuffer(s, 256); pipe.InitBuffer(o, 256); pipe.InitBuffer(off, 256);
    LocalTensor<float> src = s.Get<float>(), dst = o.Get<float>();
    for (int i = 0; i < 64; ++i) src.sim_data()[i] = static_cast<float>(i);
    LocalTensor<uint32_t> offs = off.Get<uint32_t>();
    for (int i = 0; i < 8; ++i) offs.sim_data()[i] = static_cast<uint32_t>(4 * i);
    Gather(dst, src, offs, 4, 8);
    std::printf("gathered=");
    for (int i = 0; i < 8; ++i) std::printf("%s%g", i ? "," : "", dst.sim_data()[i]);
    std::printf("\n");
}

// MTE2 writes the second half of a TBuf; a scalar read of the first half is flagged. The same read
// from a TBuf of its own is not.
static void sync_whole_tbuf() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> shared, own;
    pipe.InitBuffer(shared, 512); pipe.InitBuffer(own, 256);
    GlobalTensor<float> gm;
    gm.SetGlobalBuffer(g_src, 1024);
    LocalTensor<float> half0 = shared.Get<float>(), half1 = half0[64], alone = own.Get<float>();
    DataCopy(half1, gm, 64);
    std::printf("own=%g\n", alone.GetValue(0));      // not flagged: MTE2 wrote another TBuf
    std::printf("shared=%g\n", half0.GetValue(0));   // flagged: MTE2 wrote the other half of this TBuf
}

static void concat_limit() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, c, t;
    pipe.InitBuffer(a, 4096 * 4); pipe.InitBuffer(c, 4096 * 4); pipe.InitBuffer(t, 256);
    LocalTensor<float> src = a.Get<float>(), cat = c.Get<float>(), tmp = t.Get<float>();
    Concat(cat, src, tmp, 255);                      // 4080 elements: fine
    LocalTensor<float> cat2 = cat[2048], src2 = src[2048];
    Concat(cat2, src2, tmp, 128);                    // 4096 scores in two calls
    Concat(cat, src, tmp, 256);                      // one call for 4096: over the limit
}

// Two sorted queues of 4 and 8 structures whose scores interleave; with ifExhaustedSuspension the
// merge stops when the first runs out. dst is pre-filled with a sentinel score to count the writes.
static void mrgsort_exhausted() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> s, d;
    pipe.InitBuffer(s, 16 * 8); pipe.InitBuffer(d, 16 * 8);
    LocalTensor<float> src = s.Get<float>(), dst = d.Get<float>();
    const float q1[4] = {9, 7, 5, 3}, q2[8] = {8, 6, 4, 2, 1, 0, -1, -2};
    float* raw = src.sim_data();
    for (int i = 0; i < 4; ++i) { raw[2 * i] = q1[i]; std::memcpy(&raw[2 * i + 1], &i, 4); }
    for (int i = 0; i < 8; ++i) { raw[8 + 2 * i] = q2[i]; const int k = 100 + i; std::memcpy(&raw[8 + 2 * i + 1], &k, 4); }
    for (int i = 0; i < 32; ++i) dst.sim_data()[i] = -1234.0f;
    const uint16_t lengths[4] = {4, 8, 0, 0};
    MrgSort(dst, MrgSortSrcList<float>(src, src[8], src, src), MrgSort4Info(lengths, true, 0b0011, 1));
    uint16_t n1 = 0, n2 = 0, n3 = 0, n4 = 0;
    GetMrgSortResult(n1, n2, n3, n4);
    int written = 0;
    while (written < 16 && dst.sim_data()[2 * written] != -1234.0f) ++written;
    std::printf("counts=%u,%u,%u,%u\nwritten=%d\nlast=%g\n", n1, n2, n3, n4, written, dst.sim_data()[2 * (written - 1)]);
}

// A scalar read of a TBuf that MTE2 wrote, after each kind of sync (or none).
static void sync_kind(const std::string& kind) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 256);
    GlobalTensor<float> gm;
    gm.SetGlobalBuffer(g_src, 1024);
    LocalTensor<float> t = b.Get<float>();
    DataCopy(t, gm, 64);
    if (kind == "barrier_all") PipeBarrier<PIPE_ALL>();
    if (kind == "barrier_v") PipeBarrier<PIPE_V>();
    if (kind == "barrier_mte2") PipeBarrier<PIPE_MTE2>();
    if (kind == "flag_mte2_s") { SetFlag<HardEvent::MTE2_S>(0); WaitFlag<HardEvent::MTE2_S>(0); }
    if (kind == "flag_mte2_v") { SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0); }
    std::printf("read=%g\n", t.GetValue(0));
}

int main(int argc, char** argv) {
    const std::string s = argc > 1 ? argv[1] : "";
    const int fd = argc > 2 ? ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644) : 2;
    cannsim::ChipConfig c{};
    std::snprintf(c.name, sizeof c.name, "%s", "910B2");
    c.arch = 2201; c.vector_cores = 48; c.ub_bytes = 192 * 1024 - 256 - 8 * 1024;
    c.max_buffers = 64; c.max_queue_buffers = 8;
    cannsim::configure_chip(c);
    cannsim::set_diag_fd(fd);
    cannsim::begin_block(0, 1);
    if (s == "dedup") dedup();
    if (s == "gather_base") gather_base();
    if (s == "sync_whole_tbuf") sync_whole_tbuf();
    if (s == "concat_limit") concat_limit();
    if (s == "mrgsort_exhausted") mrgsort_exhausted();
    if (s.rfind("sync_", 0) == 0 && s != "sync_whole_tbuf") sync_kind(s.substr(5));
    cannsim::end_block();
    return 0;
}
