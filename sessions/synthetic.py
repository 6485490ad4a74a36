"""A synthetic but realistic session, event by event, for the store's tests and benchmark.

It emits what an evolution run emits (the engine is issue 8): a round-1 lowering baseline and
strategy variants, later rounds of LLM variants from parents, an LLM call and a knowledge slice
per candidate, build and evaluation results with per-case figures, and a decision between rounds.
Kernels are AscendC-shaped sources of about `code_bytes` bytes.
"""

from __future__ import annotations

import random
from typing import Callable

from copilot.events import (
    Candidate,
    CandidateBuilt,
    CandidateEvaluated,
    CandidateProposed,
    DecisionMade,
    DecisionNeeded,
    Event,
    KnowledgeSliceUsed,
    LLMCall,
    RoundFinished,
    RoundStarted,
    SessionFinished,
    SessionStarted,
)

STRATEGIES = ["L3.DOUBLE_BUFFER", "L3.TILE_SIZE", "L3.MULTICORE_BALANCE", "L3.UB_PARTITION",
              "L3.UPCAST_POLICY", "L3.ROW_MERGE", "L3.SPLIT_D", "L3.GM_ALIGN_512"]

_HEAD = """#include "kernel_operator.h"
using namespace AscendC;

struct ScaledTanhTiling {{
    uint32_t totalLength;
    uint32_t tileLength;
    uint32_t tileNum;
    uint32_t bufferNum;
    float scale;
}};

constexpr int32_t BUFFER_NUM = {buffers};
constexpr int32_t TILE_LENGTH = {tile};

class KernelScaledTanh {{
public:
    __aicore__ inline KernelScaledTanh() {{}}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ScaledTanhTiling &t)
    {{
        blockLength = t.totalLength / GetBlockNum();
        tileNum = t.tileNum;
        scale = t.scale;
        xGm.SetGlobalBuffer((__gm__ half *)x + blockLength * GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + blockLength * GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(tmpBuf, TILE_LENGTH * sizeof(float));
    }}
"""

_STAGE = """
    __aicore__ inline void Stage{n}(int32_t progress)
    {{
        // stage {n}: {strategy}, unroll {unroll}
        LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        LocalTensor<half> yLocal = outQueueY.AllocTensor<half>();
        LocalTensor<float> acc = tmpBuf.Get<float>();
        Cast(acc, xLocal, RoundMode::CAST_NONE, TILE_LENGTH);
        Muls(acc, acc, scale * {factor}f, TILE_LENGTH);
        Tanh(acc, acc, TILE_LENGTH);
        Cast(yLocal, acc, RoundMode::CAST_ROUND, TILE_LENGTH);
        outQueueY.EnQue<half>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }}
"""

_TAIL = """
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<QuePosition::VECCALC> tmpBuf;
    GlobalTensor<half> xGm, yGm;
    uint32_t blockLength, tileNum;
    float scale;
};

extern "C" __global__ __aicore__ void scaled_tanh_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                        GM_ADDR tiling)
{
    ScaledTanhTiling t;
    CopyTiling(&t, tiling);
    KernelScaledTanh op;
    op.Init(x, y, t);
}
"""


def kernel_source(rng: random.Random, code_bytes: int, strategy: str) -> str:
    """An AscendC-shaped kernel of about `code_bytes` bytes whose numbers depend on `rng`."""
    parts = [_HEAD.format(buffers=rng.choice((1, 2, 3)), tile=rng.choice((512, 1024, 2048, 4096)))]
    n = 0
    while sum(map(len, parts)) + len(_TAIL) < code_bytes:
        parts.append(_STAGE.format(n=n, strategy=strategy, unroll=rng.randint(1, 8),
                                   factor=f"{rng.uniform(0.5, 2):.6f}"))
        n += 1
    return "".join(parts) + _TAIL


def emit_session(emit: Callable[[Event], object], name: str, *, rounds: int = 3, variants: int = 4,
                 cases: int = 10, code_bytes: int = 6000, seed: int = 0, finish: bool = True,
                 start: float = 1_790_000_000.0) -> None:
    """Emit a whole session of `rounds` rounds with `variants` candidates each."""
    rng = random.Random(seed)
    clock = [start]

    def at() -> float:
        clock[0] += rng.uniform(0.05, 2.0)
        return clock[0]

    emit(SessionStarted(session=name, task="scaled_tanh", chip="910B2", backend="sim",
                        agent="gpt-4o", settings={"rounds": rounds, "variants": variants, "seed": seed,
                                                  "decide": "auto"}, at=at()))
    passing: list[tuple[float, str]] = []
    base_time = 100.0
    for r in range(1, rounds + 1):
        emit(RoundStarted(session=name, round=r, strategies=STRATEGIES[:variants], at=at()))
        results = []
        for k in range(1, variants + 1):
            cid = f"r{r}-c{k}"
            strategy = STRATEGIES[(k - 1) % len(STRATEGIES)]
            lowering = r == 1 and k == 1
            parents = [] if r == 1 else [rng.choice(passing)[1]] if passing else []
            emit(KnowledgeSliceUsed(session=name, round=r, phase="init" if r == 1 else "mutation",
                                    cards=[{"id": strategy, "level": "L3", "tokens": 420,
                                            "reason": "strategy"},
                                           {"id": "L2.UB_CAPACITY", "level": "L2", "tokens": 180,
                                            "reason": "constraint"}],
                                    total_tokens=600, candidate_id=cid, at=at()))
            if not lowering:
                emit(LLMCall(session=name, model="gpt-4o", role="cake-partial", phase="mutation",
                             prompt_tokens=rng.randint(3000, 9000),
                             completion_tokens=rng.randint(800, 2500),
                             cost_usd=round(rng.uniform(0.01, 0.05), 5),
                             latency_s=rng.uniform(2, 20), round=r, candidate_id=cid, at=at()))
            cand = Candidate(id=cid, code=kernel_source(rng, code_bytes, strategy), round=r,
                             origin="lowering" if lowering else "llm", strategy=strategy,
                             agency_mode="lowering" if lowering else "single_pass",
                             parent_ids=parents, knobs={"tile": 1024, "buffers": 2} if lowering else {})
            emit(CandidateProposed(session=name, candidate=cand, at=at()))
            ok = lowering or rng.random() > 0.1
            emit(CandidateBuilt(session=name, candidate_id=cid, ok=ok, seconds=rng.uniform(0.2, 1.5),
                                diagnostics=[] if ok else [{"id": "L2.ALIGN_32B", "severity": "error",
                                                            "message": "DataCopy length not 32B aligned",
                                                            "line": 40, "hint": "pad", "cards": []}],
                                at=at()))
            if not ok:
                results.append(None)
                continue
            passed = lowering or rng.random() > 0.2
            t = base_time if lowering else base_time * rng.uniform(0.4, 1.3)
            case_rows = [{"id": f"case{j}", "passed": passed, "mere": rng.uniform(0, 1e-3),
                          "mare": rng.uniform(0, 1e-2), "est_us": t * rng.uniform(0.8, 1.2),
                          "pipes": {"MTE2": t * 0.6, "V": t * 0.3, "MTE3": t * 0.2, "S": t * 0.05},
                          "failure_class": None if passed else "localized_outlier"}
                         for j in range(cases)]
            emit(CandidateEvaluated(session=name, candidate_id=cid,
                                    status="passed" if passed else "incorrect", cases=case_rows,
                                    time_us=t if passed else None, timing="estimate",
                                    roofline_fraction=min(1.0, 40 / t) if passed else None, at=at()))
            results.append(t if passed else None)
            if passed:
                passing.append((t, cid))
        times = sorted(t for t in results if t is not None)
        best = min(passing) if passing else None
        emit(RoundFinished(session=name, round=r, candidates=variants, passed=len(times),
                           best_id=best[1] if best else None, best_time_us=best[0] if best else None,
                           median_time_us=times[len(times) // 2] if times else None, at=at()))
        emit(DecisionNeeded(session=name, round=r,
                            leaderboard=[{"id": c, "time_us": t} for t, c in sorted(passing)[:5]],
                            at=at()))
        pins = [best[1]] if best else []
        vetoes = [max(passing)[1]] if len(passing) > 2 and max(passing)[1] not in pins else []
        emit(DecisionMade(session=name, round=r, pins=pins, vetoes=vetoes,
                          steer="keep the pipeline, try larger tiles" if r % 2 else "",
                          action="continue" if r < rounds else "stop", at=at()))
    if finish:
        best = min(passing) if passing else None
        emit(SessionFinished(session=name, status="finished", best_id=best[1] if best else None,
                             reason=f"max rounds ({rounds})", at=at()))
