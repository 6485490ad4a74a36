"""The sim backend's build: compiler errors at the candidate's line, entry checks, the cache."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import build, run  # noqa: E402
from copilot.backends.sim.build import find_entry, parse_compiler_output  # noqa: E402
from copilot.oracle import make_inputs  # noqa: E402
from copilot.sandbox import sandbox_capabilities  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

build_module = importlib.import_module("copilot.backends.sim.build")

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

RELU = """#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
struct T0 { uint32_t n; };
extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(T0);
    GET_TILING_DATA(t, tiling);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    AscendC::LocalTensor<float> f = buf.Get<float>();
    AscendC::LocalTensor<half> h = buf.Get<half>();
    BODY
}
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    context->GetTilingData<T0>()->n = 1;
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}
namespace ops {
class ReluCustom : public OpDef {
public:
    explicit ReluCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ReluCustom);
}
"""


@pytest.fixture(scope="module")
def relu():
    return load_task("relu")


def _candidate(tmp_path: Path, body: str) -> tuple[Path, int]:
    text = RELU.replace("BODY", body)
    path = tmp_path / "cand.cpp"
    path.write_text(text)
    return path, text.splitlines().index("    " + body.splitlines()[0].strip()) + 1


def test_wrong_argument_types_are_an_api_signature_error_at_the_candidate_line(tmp_path, relu):
    path, line = _candidate(tmp_path, "AscendC::Add(f, h, h, 16);")
    b = build(path, relu, ["float32", "float32"])
    assert not b.ok
    assert ("L4.API_SIGNATURE", line) in {(d.id, d.line) for d in b.diagnostics}
    assert "no matching function" in b.raw_output


def test_an_unknown_api_is_reported_at_the_candidate_line(tmp_path, relu):
    path, line = _candidate(tmp_path, "AscendC::NoSuchApi(f, f, 16);")
    b = build(path, relu, ["float32", "float32"])
    assert ("L4.API_UNKNOWN", line) in {(d.id, d.line) for d in b.diagnostics}


def test_an_error_inside_the_emulator_headers_is_attributed_to_the_instantiating_line(tmp_path, relu):
    # A LocalTensor of a struct type fails deep inside the header templates.
    body = "struct P { int a; }; AscendC::LocalTensor<P> p = buf.Get<P>(); AscendC::Add(p, p, p, 4);"
    path, line = _candidate(tmp_path, body)
    b = build(path, relu, ["float32", "float32"])
    assert not b.ok
    assert b.diagnostics, "a failed build names at least one problem"
    assert all(d.line == line for d in b.diagnostics), [(d.id, d.line, d.message) for d in b.diagnostics]


def test_plain_cpp_errors_are_cpp_compile(tmp_path, relu):
    path, line = _candidate(tmp_path, "int z = ;")
    b = build(path, relu, ["float32", "float32"])
    assert [(d.id, d.line) for d in b.diagnostics][0] == ("CPP.COMPILE", line)


def test_entry_argument_count_must_match_the_task(tmp_path, relu):
    text = RELU.replace("BODY", "").replace("GM_ADDR y, GM_ADDR workspace", "GM_ADDR workspace")
    path = tmp_path / "cand.cpp"
    path.write_text(text)
    b = build(path, relu, ["float32", "float32"])
    assert not b.ok
    d = b.diagnostics[0]
    assert d.id == "L4.API_SIGNATURE" and d.line == 4
    assert "takes 3 arguments" in d.message and "needs 4" in d.message


def test_missing_tiling_function_is_reported(tmp_path, relu):
    text = RELU.replace("BODY", "").replace("TilingFunc", "Tiling")
    path = tmp_path / "cand.cpp"
    path.write_text(text)
    b = build(path, relu, ["float32", "float32"])
    assert not b.ok and "TilingFunc" in b.diagnostics[0].message


def test_second_build_comes_from_the_cache(tmp_path, relu):
    path, _ = _candidate(tmp_path, "AscendC::Duplicate(f, 1.0f, 8);")
    first = build(path, relu, ["float32", "float32"])
    assert first.ok, [d.message for d in first.diagnostics]
    second = build(path, relu, ["float32", "float32"])
    assert second.cached and second.artifact == first.artifact


def test_entry_scanner_ignores_comments_and_counts_arguments():
    src = '// extern "C" __global__ __aicore__ void fake(GM_ADDR a)\n' \
          'extern "C" __global__ __aicore__ void real_k(GM_ADDR a, GM_ADDR b /* , c */, GM_ADDR w, GM_ADDR t)\n{}'
    e = find_entry(src)
    assert (e.name, e.num_args, e.line) == ("real_k", 4, 2)


def test_required_from_here_chain_maps_to_the_candidate(tmp_path):
    cand = tmp_path / "k.cpp"
    raw = (f"/inc/cannsim/vec_ops.h: In instantiation of 'void AscendC::Add(...) [with T = P]':\n"
           f"/inc/cannsim/vec_ops.h:40:5:   required from 'void run(...)'\n"
           f"{cand}:17:9:   required from here\n"
           f"/inc/cannsim/vec_ops.h:12:20: error: no match for 'operator+'\n")
    diags = parse_compiler_output(raw, cand, {})
    assert [(d.id, d.line) for d in diags] == [("CPP.COMPILE", 17)]


def test_a_candidate_given_as_text_is_built_from_the_cache_dir(relu):
    text = RELU.replace("BODY", "AscendC::Duplicate(f, 2.0f, 8);")
    b = build(text, relu, ["float32", "float32"])
    assert b.ok, [d.message for d in b.diagnostics]
    assert b.source_path.read_text() == text and b.source_path.name == "relu.cpp"


def _small_float_case(task):
    return next(c for c in task.cases if c.dtypes == ["float32"] and c.max_numel <= 1 << 16)


def _build_command(b) -> list[str]:
    return json.loads((b.artifact.parent / "build.json").read_text())["command"]


def test_the_generic_launcher_is_compiled_once_and_linked_into_every_build(tmp_path, relu):
    first = build(_candidate(tmp_path, "AscendC::Duplicate(f, 3.0f, 8);")[0], relu, ["float32", "float32"])
    assert first.ok, [d.message for d in first.diagnostics]
    objs = [Path(a) for a in _build_command(first) if a.endswith("harness.o")]
    assert len(objs) == 1 and objs[0].is_file()
    stamp = objs[0].stat().st_mtime_ns
    second = build(_candidate(tmp_path, "AscendC::Duplicate(f, 4.0f, 8);")[0], relu, ["float32", "float32"])
    assert second.ok and not second.cached
    assert [a for a in _build_command(second) if a.endswith("harness.o")] == [str(objs[0])]
    assert objs[0].stat().st_mtime_ns == stamp
    launcher = (second.artifact.parent / "launcher.cpp").read_text()
    assert '"cannsim/harness_entry.h"' in launcher and '"cannsim/harness.cpp"' not in launcher


def test_without_the_prebuilt_launcher_object_the_launcher_is_compiled_whole(tmp_path, relu, monkeypatch):
    monkeypatch.setattr(build_module, "ensure_harness_object", lambda chip, hh=None: None)
    case = _small_float_case(relu)
    b = build(_candidate(tmp_path, "AscendC::Duplicate(f, 5.0f, 8); // whole")[0], relu, ["float32", "float32"])
    assert b.ok, [d.message for d in b.diagnostics]
    assert not any(a.endswith("harness.o") for a in _build_command(b))
    assert '"cannsim/harness.cpp"' in (b.artifact.parent / "host_unit.cpp").read_text()
    r = run(b, relu, case, make_inputs(relu, case), timing=False)
    assert r.block_dim == 1


def test_without_a_precompiled_header_the_launcher_object_is_built_and_linked(tmp_path, relu, monkeypatch):
    monkeypatch.setenv("CANNPILOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(build_module, "ensure_pch", lambda chip, hh=None: None)
    case = _small_float_case(relu)
    b = build(_candidate(tmp_path, "AscendC::Duplicate(f, 6.0f, 8);")[0], relu, ["float32", "float32"])
    assert b.ok, [d.message for d in b.diagnostics]
    objs = [a for a in _build_command(b) if a.endswith("harness.o")]
    assert len(objs) == 1 and objs[0].startswith(str(tmp_path / "cache"))
    assert "cannsim_pch.h" not in (Path(objs[0]).parent / "harness_main.cpp").read_text()
    r = run(b, relu, case, make_inputs(relu, case), timing=False)
    assert r.block_dim == 1


def test_a_candidate_defining_main_gets_the_error_at_its_line(tmp_path, relu):
    text = RELU.replace("BODY", "") + "int main(int argc, char** argv) { return argc; }\n"
    path = tmp_path / "cand.cpp"
    path.write_text(text)
    assert [d.id for d in build(path, relu, ["float32", "float32"]).diagnostics] == ["SEC.SOURCE"]
    b = build_module.build(path, relu, ["float32", "float32"], source_policy=False)   # the compiler's own check
    assert not b.ok
    assert [(d.id, d.line) for d in b.diagnostics] == [("CPP.COMPILE", len(text.splitlines()))]
    assert "redefinition of 'int main" in b.diagnostics[0].message


# The initialiser sits in the host half (the unit whose TilingFunc reads it).
FILTER_FIRST = RELU.replace("BODY", "").replace(
    "struct T0 { uint32_t n; };",
    "#include <cerrno>\n#include <sys/socket.h>\nstruct T0 { uint32_t n; };"
).replace("namespace optiling {", "namespace optiling {\n"
          "static int g_socket_errno = [] { errno = 0; return socket(AF_UNIX, SOCK_STREAM, 0) < 0 ? errno : 0; }();"
).replace("context->SetBlockDim(1);", "context->SetBlockDim(g_socket_errno == EPERM ? 3 : 1);")


@pytest.mark.skipif(not sandbox_capabilities()["seccomp"], reason="seccomp is not available")
def test_the_syscall_filter_is_in_place_before_candidate_static_initialisers(tmp_path, relu):
    path = tmp_path / "cand.cpp"
    path.write_text(FILTER_FIRST)
    case = _small_float_case(relu)
    b = build_module.build(path, relu, ["float32", "float32"], source_policy=False)   # the layer behind the scan
    assert b.ok, [d.message for d in b.diagnostics]
    r = run(b, relu, case, make_inputs(relu, case), timing=False)
    assert r.block_dim == 3   # the initialiser's socket() was refused with EPERM


def test_comments_and_string_contents_are_blanked_with_lines_kept():
    from copilot.backends.sim.build import strip_comments

    src = ('extern "C" __global__ void k() { // note "x"\n'
           '  /* two\n lines */ const char* s = "a\\"b // not a comment";\n'
           '  int y = 1; /* unterminated\n')
    out = strip_comments(src)
    assert len(out) == len(src) and out.count("\n") == src.count("\n")
    assert out.splitlines()[0] == 'extern "C" __global__ void k() { ' + " " * len('// note "x"')
    assert "two" not in out and "lines" not in out and "not a comment" not in out
    assert 'const char* s = "' + " " * len('a\\"b // not a comment') + '";' in out
    assert "int y = 1;" in out and "unterminated" not in out


def _stopping(monkeypatch, times: int) -> list[int]:
    """Make the first `times` sandboxed compiles end as if killed from outside (signal 9)."""
    real, stopped = build_module.sandbox.run_sandboxed, []

    def run_sandboxed(cmd, *a, **k):
        if len(stopped) < times:
            stopped.append(1)
            return build_module.sandbox.SandboxResult(None, 9, False, 0.0, "", "")
        return real(cmd, *a, **k)

    monkeypatch.setattr(build_module.sandbox, "run_sandboxed", run_sandboxed)
    return stopped


def test_a_compile_stopped_from_outside_is_run_again(tmp_path, relu, monkeypatch):
    stopped = _stopping(monkeypatch, 1)
    b = build(_candidate(tmp_path, f"AscendC::Duplicate(f, 7.{os.getpid()}f, 8); // {tmp_path.name}")[0], relu,
              ["float32", "float32"])
    assert stopped == [1]
    assert b.ok, [d.message for d in b.diagnostics]


def test_a_compile_stopped_twice_is_an_error_that_is_not_cached(tmp_path, relu, monkeypatch):
    path = _candidate(tmp_path, f"AscendC::Duplicate(f, 8.{os.getpid()}f, 8); // {tmp_path.name}")[0]
    stopped = _stopping(monkeypatch, 2)
    first = build(path, relu, ["float32", "float32"])
    assert len(stopped) == 2 and not first.ok
    assert "stopped by signal 9" in first.raw_output
    monkeypatch.undo()
    second = build(path, relu, ["float32", "float32"])      # the machine is quiet again: compiled, not the cached failure
    assert second.ok and not second.cached, [d.message for d in second.diagnostics]


def test_a_new_precompiled_header_removes_only_the_stale_ones(tmp_path, monkeypatch):
    """Every change of the headers, flags or g++ makes a new precompiled header (~140 MB): the
    first build of a new one removes those unused for PCH_KEEP_DAYS, keeps recent ones, and a
    directory already in use prunes nothing."""
    import time

    sim_build = build_module
    monkeypatch.setattr(sim_build, "_PCH_SEEN", set())
    pch = tmp_path / "pch"
    stale, recent, other_stale = pch / "stale", pch / "recent", pch / "other"
    for d in (stale, recent, other_stale):
        d.mkdir(parents=True)
        (d / ".used").touch()
    old = time.time() - (sim_build.PCH_KEEP_DAYS + 1) * 86400
    os.utime(stale / ".used", (old, old))
    os.utime(other_stale / ".used", (old, old))

    sim_build._note_pch_use(other_stale)             # in use: stamped, prunes nothing
    assert stale.exists() and other_stale.exists()
    assert (other_stale / ".used").stat().st_mtime > old + 86400

    sim_build._note_pch_use(pch / "new")
    assert not stale.exists()
    assert recent.exists() and other_stale.exists() and (pch / "new" / ".used").exists()
