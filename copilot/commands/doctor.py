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


def _setting_backend() -> str:
    from copilot.config import load_settings
    from copilot.errors import CannpilotError

    try:
        return load_settings().backend
    except CannpilotError:
        return "sim"


def collect() -> dict:
    import torch

    from copilot.backends.npu.toolchain import chosen_backend, probe

    stack = probe()
    setting = _setting_backend()
    backend, why = chosen_backend(setting, stack)
    report = {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "gxx": _cmd_version(["g++", "--version"]),
        "torch": torch.__version__,
        "npu": stack.to_json(),
        "cann": {"ascend_home_path": stack.cann_home, "version": stack.cann_version, "bisheng": stack.compiler},
        "llm_keys_present": [k for k in PROVIDER_KEYS if os.environ.get(k)],
        "sandbox": _sandbox(),
    }
    report["backends"] = {"sim": bool(report["gxx"]), "npu": stack.ready}
    report["session_backend"] = {"setting": setting, "backend": backend, "why": why}
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
    bad = "[red]missing[/red]"
    con.print(f"[bold]Python[/bold]     {report['python']} on {report['platform']}")
    con.print(f"[bold]g++[/bold]        {report['gxx'] or bad}  (needed by the sim backend)")
    con.print(f"[bold]torch[/bold]      {report['torch']}")
    n = report["npu"]
    con.print(f"[bold]CANN[/bold]       {escape(n['cann_home'] or 'not found')}"
              + (f", version {escape(n['cann_version'] or 'unknown')}" if n["cann_home"] else ""))
    con.print(f"[bold]compiler[/bold]   bisheng {escape(n['compiler'] or 'missing')}; cmake {escape(n['cmake'] or 'missing')}")
    con.print(f"[bold]SoC[/bold]        {escape(n['device_name'] or 'no device')}"
              + (f" -> {n['soc']}" if n["soc"] else "")
              + f" (npu-smi {'found' if n['npu_smi'] else 'not on PATH'})")
    free = ", ".join(f"npu {d}" for d in n["free_devices"]) or "none"
    busy = ", ".join(f"npu {d}" for d in n["busy_devices"])
    con.print(f"[bold]devices[/bold]    {len(n['devices'])} found; free: {free}" + (f"; busy: {busy}" if busy else ""))
    tn = n["torch_npu"] or (f"does not import: {n['torch_npu_error']}" if n["torch_npu_error"] else "not installed")
    con.print(f"[bold]torch_npu[/bold]  {escape(tn)} (torch {report['torch']})")
    keys = report["llm_keys_present"]
    con.print(f"[bold]LLM keys[/bold]   {', '.join(keys) if keys else 'none set (the offline agent works without)'}")
    con.print("[bold]sandbox[/bold]    " + escape("; ".join(f"{k}: {v}" for k, v in report["sandbox"].items())))
    backends = ", ".join(f"{k} {'available' if v else 'unavailable'}" for k, v in report["backends"].items())
    con.print(f"[bold]backends[/bold]   {backends}")
    sb = report["session_backend"]
    con.print(f"[bold]sessions[/bold]   will use [bold]{sb['backend']}[/bold] (backend: {sb['setting']}; {escape(sb['why'])})")
    for line in n["missing"]:
        con.print(f"[yellow]missing[/yellow]    {escape(line)}")
    return 0
