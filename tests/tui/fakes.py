"""A fake agent and evaluator for the TUI: deterministic, no g++, no torch work.

The agent writes small AscendC-shaped kernels whose tile size follows the round and index; the
evaluator derives an estimated time from the candidate id, fails the third variant of every round
with a UB-capacity build error (so the diagnostics pane has content), and can hold chosen
candidates at a gate (a `threading.Event`) so a test can look at a round in the middle.
`tests/tui_tmux/fake_app.py` runs the real `cannpilot` command with these (drive.sh, with
CANNPILOT_TUI_FAKE=1).
"""

from __future__ import annotations

import asyncio
import re
import threading

from copilot.evolution.engine import Evaluation, Proposal

KERNEL = """\
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = {buffers};
constexpr int32_t TILE = {tile};   // elements per tile ({note})
constexpr int32_t VARIANT = {variant};

class KernelRmsNorm {{
public:
    __aicore__ inline KernelRmsNorm() {{}}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, uint32_t rows, uint32_t cols)
    {{
        this->cols = cols;
        xGm.SetGlobalBuffer((__gm__ half *)x + GetBlockIdx() * rows * cols, rows * cols);
        yGm.SetGlobalBuffer((__gm__ half *)y + GetBlockIdx() * rows * cols, rows * cols);
        pipe.InitBuffer(inQueue, BUFFER_NUM, TILE * sizeof(half));
        pipe.InitBuffer(outQueue, BUFFER_NUM, TILE * sizeof(half));
        pipe.InitBuffer(work, TILE * sizeof(float));
    }}
    __aicore__ inline void Process()
    {{
        for (int32_t i = 0; i < {loops}; i++) {{
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }}
    }}
private:
    __aicore__ inline void CopyIn(int32_t i)
    {{
        LocalTensor<half> x = inQueue.AllocTensor<half>();
        DataCopy(x, xGm[i * TILE], TILE);
        inQueue.EnQue(x);
    }}
    __aicore__ inline void Compute(int32_t i)
    {{
        LocalTensor<half> x = inQueue.DeQue<half>();
        LocalTensor<half> y = outQueue.AllocTensor<half>();
        LocalTensor<float> acc = work.Get<float>();
        Cast(acc, x, RoundMode::CAST_NONE, TILE);
        Mul(acc, acc, acc, TILE);
        ReduceSum(acc, acc, acc, TILE);
        Muls(acc, acc, 1.0f / cols, 1);
        Adds(acc, acc, 1e-6f, 1);
        Rsqrt(acc, acc, 1);
        Muls(y, x, (half)acc.GetValue(0), TILE);
        outQueue.EnQue(y);
        inQueue.FreeTensor(x);
    }}
    __aicore__ inline void CopyOut(int32_t i)
    {{
        LocalTensor<half> y = outQueue.DeQue<half>();
        DataCopy(yGm[i * TILE], y, TILE);
        outQueue.FreeTensor(y);
    }}
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<QuePosition::VECCALC> work;
    GlobalTensor<half> xGm, yGm;
    uint32_t cols;
}};

extern "C" __global__ __aicore__ void rms_norm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR y,
                                                      GM_ADDR workspace, GM_ADDR tiling)
{{
    KernelRmsNorm op;
    op.Init(x, gamma, y, 8, 4096);
    op.Process();
}}
"""


def kernel(tile: int, buffers: int, note: str, variant: int = 0) -> str:
    return KERNEL.format(tile=tile, buffers=buffers, loops=max(1, 32768 // tile), note=note, variant=variant)


class FakeAgent:
    """Proposes a kernel per request; the tile and buffer count follow the round and index."""

    name = "fake-offline"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.requests = []

    async def baseline(self, task, chip):
        return Proposal(code=kernel(1024, 1, "baseline: default knobs"), origin="lowering",
                        agency_mode="lowering", knobs={"tile_elems": 1024, "buffer_num": 1})

    async def propose(self, req):
        self.requests.append(req)
        if self.delay:
            await asyncio.sleep(self.delay)
        tile = 1024 * (1 + (req.round * 3 + req.index) % 8)
        buffers = 2 if req.index % 2 == 0 else 1
        note = f"{req.strategy.id}, parent {req.parent.id if req.parent else 'none'}"
        if req.steer:
            note += f", steer: {req.steer[:30]}"
        return Proposal(code=kernel(tile, buffers, note, req.round * 1000 + req.index), origin="offline", agency_mode="knob_edit",
                        knobs={"tile_elems": tile, "buffer_num": buffers},
                        notes=[f"tile_elems -> {tile}, buffer_num -> {buffers} ({req.strategy.id})"])


class FakeEvaluator:
    """Estimated time from the id: r0-base 100 µs, rR-cI = 100 / (1 + 0.1·R·I); variant 3 fails
    to build; `hold` ids wait for `gate`; a human edit that calls system() is refused."""

    def __init__(self, delay: float = 0.0, hold: set[str] | None = None) -> None:
        self.delay = delay
        self.hold = set(hold or ())
        self.gate = threading.Event()
        self.evaluated: list[str] = []

    async def evaluate(self, task, c):
        if c.id in self.hold:
            while not self.gate.is_set():
                await asyncio.sleep(0.01)
        if self.delay:
            await asyncio.sleep(self.delay)
        self.evaluated.append(c.id)
        if c.id == "r0-base":
            return Evaluation("passed", time_us=100.0, timing="estimate", roofline_fraction=0.21)
        if "system(" in c.code:
            return Evaluation("build_failed", build_ok=False, diagnostics=[{
                "id": "LINT.FORBIDDEN", "severity": "error", "line": c.code[:c.code.index("system(")].count("\n") + 1,
                "message": "the candidate calls a process function (system(): refused before building",
                "hint": "kernels never call the OS", "cards": []}])
        m = re.match(r"r(\d+)-([ch])(\d+)", c.id)
        r, kind, i = (int(m.group(1)), m.group(2), int(m.group(3))) if m else (1, "c", 1)
        if kind == "c" and i == 3:
            line = c.code.splitlines().index(next(x for x in c.code.splitlines() if "InitBuffer(work" in x)) + 1
            return Evaluation("build_failed", build_ok=False, diagnostics=[{
                "id": "L2.UB_CAPACITY", "severity": "error", "line": line,
                "message": "InitBuffer sizes exceed usable UB (196608 B): 2 x 2 x 65536 + 131072 B",
                "hint": "shrink the tile, the buffer count or the scratch",
                "cards": ["L2.UB_CAPACITY", "L3.ub-budget"],
                "raw": "cannsim: L2.UB_CAPACITY: pipe.InitBuffer total 393216 B > UB 196608 B"}])
        t = 100.0 / (1 + 0.1 * r * i) if kind == "c" else 100.0 / (1 + 0.15 * r * (i + 4))
        return Evaluation("passed", time_us=round(t, 3), timing="estimate",
                          roofline_fraction=round(min(0.95, 21.0 / t), 3),
                          cases=[{"id": "perf-1", "role": "performance", "est_us": round(t, 3), "est_band": 0.35}],
                          diagnostics=[{"id": "L2.ALIGN_32B", "severity": "warning", "line": 18,
                                        "message": "DataCopy length is not a multiple of 32 B on the tail tile",
                                        "hint": "pad the tail or use DataCopyPad",
                                        "cards": ["L2.ALIGN_32B", "L4.DataCopyPad"]}] if i == 2 else [])


def agent_factory(delay: float = 0.0):
    return lambda cfg: FakeAgent(delay)


def evaluator_factory(delay: float = 0.0, hold: set[str] | None = None):
    return lambda cfg: FakeEvaluator(delay, hold)
