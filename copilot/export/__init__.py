"""Export passing candidates as projects the Ascend stack builds: a CANN-Bench submission
(`cann-bench`) or a plain custom-operator project (`opp`), then validate what was written.

`export(items, out_dir, fmt, chip)` takes (task, kernel source, candidate id, origin) items, one
per operator, and returns the files written and the validator's findings.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from copilot.errors import BadInput
from copilot.export.opspec import OpSpec, op_spec
from copilot.export.project import CHIP_SOC, MANIFEST, cann_bench_files, opp_files
from copilot.export.validate import Finding, validate

FORMATS = ("cann-bench", "opp")


@dataclass
class ExportItem:
    task: object
    source: str
    candidate_id: str = ""
    origin: str = ""


@dataclass
class ExportResult:
    directory: Path
    format: str
    specs: list[OpSpec]
    files: list[Path] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"directory": str(self.directory), "format": self.format,
                "ops": [{"name": s.name, "op_type": s.op_type, "task": s.task, "candidate": s.candidate_id,
                         "sha256": s.sha256} for s in self.specs],
                "files": [str(f.relative_to(self.directory)) for f in self.files],
                "findings": [f.to_json() for f in self.findings], "valid": not self.findings}


def socs_for(chip: str, soc: str | None = None) -> list[str]:
    if soc:
        return [soc]
    return [CHIP_SOC.get(chip, "ascend910b")]


def write_tree(files: dict[str, str], out_dir: Path) -> list[Path]:
    """Write every file into a fresh directory beside `out_dir`, then move it into place, so a
    failed export leaves nothing half-written. An existing `out_dir` must be empty or an earlier
    export (it holds our manifest)."""
    if out_dir.exists():
        if not out_dir.is_dir():
            raise BadInput(f"{out_dir}: exists and is not a directory")
        if any(out_dir.iterdir()) and not (out_dir / MANIFEST).is_file():
            raise BadInput(f"{out_dir}: not empty and not an earlier Cannpilot export; choose another -o")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}."))
    try:
        for rel, text in sorted(files.items()):
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(text.encode("utf-8"))
            if p.name.endswith(".sh"):
                p.chmod(0o755)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out_dir / rel for rel in sorted(files)]


def build_files(specs: list[OpSpec], fmt: str, chip: str, soc: str | None = None) -> dict[str, str]:
    if fmt not in FORMATS:
        raise BadInput(f"unknown export format {fmt!r}; choose {' or '.join(FORMATS)}")
    names = [s.name for s in specs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise BadInput(f"two candidates for operator {', '.join(sorted(dup))}: export one per operator")
    socs = socs_for(chip, soc)
    return (cann_bench_files if fmt == "cann-bench" else opp_files)(specs, chip, socs)


def export(items: list[ExportItem], out_dir, fmt: str = "cann-bench", chip: str = "910B2",
           soc: str | None = None) -> ExportResult:
    specs = [op_spec(i.task, i.source, i.candidate_id, i.origin) for i in items]
    files = build_files(specs, fmt, chip, soc)
    out = Path(out_dir)
    written = write_tree(files, out)
    findings = validate(out, [i.task for i in items]) if fmt == "cann-bench" else validate_opp(out)
    return ExportResult(out, fmt, specs, written, findings)


def validate_opp(root: Path) -> list[Finding]:
    """An opp project has no binding; only the kernels' integrity is checked."""
    from copilot.export.validate import _check_kernels

    return _check_kernels(root)


__all__ = ["ExportItem", "ExportResult", "FORMATS", "export", "build_files", "write_tree", "validate"]
