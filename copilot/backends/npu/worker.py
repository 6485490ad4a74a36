"""The child process that touches the device: `python -m copilot.backends.npu.worker REQUEST.json`.

It imports torch_npu and the installed `cann_bench` (from the per-session prefix on PYTHONPATH),
moves the oracle's inputs to the device, calls the operator, checks each output is a plain,
contiguous torch.Tensor, and brings the outputs back. With `timing`, it then runs §4.5: warm-up
calls, then under the profiler, per repeat a clock warm-up / L2 flush (MatMul + ReduceMax) and one
call on fresh copies of the inputs (each repeat its own addresses). It writes a JSON result; a
crash or a hang is seen by the parent as the exit status or the timeout.
"""

from __future__ import annotations

import json
import sys
import traceback


def _flush(a, big):
    import torch

    torch.matmul(a, a)
    big.max()


def main(request_path: str) -> int:
    with open(request_path) as f:
        req = json.load(f)
    result = {"ok": False, "failure": None, "message": ""}

    def done() -> int:
        with open(req["result"], "w") as f:
            json.dump(result, f)
        return 0

    import torch
    import torch_npu  # noqa: F401  (adds torch.npu and Tensor.npu)

    torch.npu.set_device(req["device"])
    try:
        import cann_bench
    except Exception as e:   # EVAL-CANN-004
        result.update(failure="import_failed", message=f"import cann_bench: {type(e).__name__}: {e}")
        return done()
    fn = getattr(cann_bench, req["op"], None)
    if fn is None or isinstance(fn, type) or not callable(fn):
        result.update(failure="no_callable", message=f"cann_bench has no callable {req['op']} (EVAL-CANN-005)")
        return done()
    inputs = torch.load(req["inputs"])
    attrs = req["attrs"]
    dev_inputs = [t.npu() if isinstance(t, torch.Tensor) else t for t in inputs]
    try:
        out = fn(*dev_inputs, **attrs)
        torch.npu.synchronize()
    except Exception as e:
        result.update(failure="runtime_error", message=f"{type(e).__name__}: {str(e)[:2000]}")
        return done()
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for i, o in enumerate(outs):
        if type(o) is not torch.Tensor:
            result.update(failure="not_a_tensor", message=f"output {i} is {type(o).__name__}, not a torch.Tensor (SUB-BEH-007)")
            return done()
        if not o.is_contiguous():
            result.update(failure="non_contiguous", message=f"output {i} is not contiguous (strides {tuple(o.stride())}): "
                                                             "a view, not a computed tensor")
            return done()
    torch.save([o.cpu() for o in outs], req["outputs"])
    result["ok"] = True
    if req.get("timing"):
        warmup, repeat = req["warmup"], req["repeat"]
        fresh = [[t.clone() if isinstance(t, torch.Tensor) else t for t in dev_inputs] for _ in range(warmup + repeat)]
        a = torch.randn(req["flush_n"], req["flush_n"]).npu()
        big = torch.empty(req["flush_bytes"] // 4, dtype=torch.float32).npu()
        for i in range(warmup):
            fn(*fresh[i], **attrs)
        torch.npu.synchronize()
        prof_api = torch_npu.profiler
        cfg = prof_api._ExperimentalConfig(profiler_level=prof_api.ProfilerLevel.Level1,
                                           aic_metrics=prof_api.AiCMetrics.PipeUtilization)
        with prof_api.profile(activities=[prof_api.ProfilerActivity.CPU, prof_api.ProfilerActivity.NPU],
                              on_trace_ready=prof_api.tensorboard_trace_handler(req["profile_dir"]),
                              experimental_config=cfg):
            for r in range(repeat):
                _flush(a, big)
                fn(*fresh[warmup + r], **attrs)
            torch.npu.synchronize()
        result["profile_dir"] = req["profile_dir"]
    return done()


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except Exception:
        traceback.print_exc()
        sys.exit(70)
