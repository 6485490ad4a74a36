"""`cannpilot doctor`: what this machine offers Cannpilot, and what is missing."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys

# Provider keys litellm reads; doctor reports which are present, by name only.
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY",
                 "MISTRAL_API_KEY", "DASHSCOPE_API_KEY", "OPENROUTER_API_KEY", "AZURE_API_KEY",
                 "GROQ_API_KEY", "TOGETHERAI_API_KEY")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check the toolchain, NPU stack, LLM keys and sandbox",
                       description="Report what this machine offers: Python, g++, torch, the CANN "
                                   "toolkit, torch_npu, LLM provider keys (names only), the sandbox.")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(handler=run)


def _cmd_version(cmd: list[str]) -> str | None:
    if not shutil.which(cmd[0]):
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if text else None


def _torch_npu() -> dict:
    if importlib.util.find_spec("torch_npu") is None:
        return {"installed": False, "importable": False, "detail": "not installed (extra: cannpilot[npu])"}
    try:
        out = subprocess.run([sys.executable, "-c", "import torch, torch_npu; print(torch.npu.is_available())"],
                             capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return {"installed": True, "importable": False, "detail": "import timed out"}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["import failed"])[-1]
        return {"installed": True, "importable": False, "detail": last}
    return {"installed": True, "importable": True, "detail": f"npu available: {out.stdout.strip()}"}


def collect() -> dict:
    import torch

    cann_home = os.environ.get("ASCEND_HOME_PATH") or os.environ.get("ASCEND_TOOLKIT_HOME")
    bisheng = shutil.which("bisheng")
    report = {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "gxx": _cmd_version(["g++", "--version"]),
        "torch": torch.__version__,
        "cann": {
            "ascend_home_path": cann_home,
            "bisheng": bisheng,
            "bisheng_version": _cmd_version(["bisheng", "--version"]) if bisheng else None,
            "msopgen": shutil.which("msopgen"),
        },
        "torch_npu": _torch_npu(),
        "llm_keys_present": [k for k in PROVIDER_KEYS if os.environ.get(k)],
        "sandbox": _sandbox(),
    }
    report["backends"] = {
        "sim": bool(report["gxx"]),
        "npu": bool(bisheng and report["torch_npu"]["importable"]),
    }
    return report


def _sandbox() -> dict:
    try:
        from copilot.sandbox import sandbox_capabilities
    except ImportError:
        return {"detail": "sandbox module not available in this build"}
    return sandbox_capabilities()


def run(args: argparse.Namespace) -> int:
    report = collect()
    if args.json:
        json.dump(report, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.markup import escape

    con = Console()
    ok, bad = "[green]ok[/green]", "[red]missing[/red]"
    con.print(f"[bold]Python[/bold]     {report['python']} on {report['platform']}")
    con.print(f"[bold]g++[/bold]        {report['gxx'] or bad}  (needed by the sim backend)")
    con.print(f"[bold]torch[/bold]      {report['torch']}")
    cann = report["cann"]
    con.print(f"[bold]CANN[/bold]       ASCEND_HOME_PATH={cann['ascend_home_path'] or '(unset)'}; "
              f"bisheng {cann['bisheng'] or 'not on PATH'}; msopgen {cann['msopgen'] or 'not on PATH'}")
    tn = report["torch_npu"]
    con.print(f"[bold]torch_npu[/bold]  {ok if tn['importable'] else bad}: {escape(tn['detail'])}")
    keys = report["llm_keys_present"]
    con.print(f"[bold]LLM keys[/bold]   {', '.join(keys) if keys else 'none set (the offline agent works without)'}")
    con.print("[bold]sandbox[/bold]    " + escape("; ".join(f"{k}: {v}" for k, v in report["sandbox"].items())))
    backends = ", ".join(f"{k} {'available' if v else 'unavailable'}" for k, v in report["backends"].items())
    con.print(f"[bold]backends[/bold]   {backends}")
    return 0
