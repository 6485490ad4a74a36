"""Reply parsing: code out of prose, several blocks, cut-off replies, search/replace edits."""

from __future__ import annotations

from copilot.llm.parsing import apply_edits, find_edit_blocks, parse_reply

KERNEL = '''#include "kernel_operator.h"
constexpr int32_t TILE = 1024;
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                GM_ADDR workspace, GM_ADDR tiling) {
    KernelAdd op;
    op.Init(x, y, z, TILE);
    op.Process();
}
'''


def fence(code: str, lang: str = "cpp") -> str:
    return f"```{lang}\n{code}```\n"


def test_prose_around_one_block():
    reply = "Sure! Here is a kernel that tiles by 1024.\n\n" + fence(KERNEL) + "\nIt uses double buffering."
    parsed = parse_reply(reply)
    assert parsed.ok and parsed.kind == "block" and parsed.code == KERNEL and not parsed.truncated


def test_several_blocks_pick_the_kernel_entry():
    helper = "struct TilingData { uint32_t total; uint32_t tile; };\n" * 5   # longer, but no entry
    golden = "import torch\ndef add(x, y):\n    return x + y\n"
    reply = ("The reference:\n" + fence(golden, "python") + "A helper:\n" + fence(helper, "cpp")
             + "The kernel:\n" + fence(KERNEL, "c++") + "Build with:\n" + fence("bash build.sh\n", "bash"))
    parsed = parse_reply(reply)
    assert parsed.ok and parsed.code == KERNEL
    assert any("4 code blocks" in n for n in parsed.notes)


def test_several_blocks_without_entry_take_the_longest_cpp_block():
    short = "int a = 1;\n"
    longer = "struct TilingData {\n  uint32_t total;\n  uint32_t tile;\n};\n"
    parsed = parse_reply(fence(short) + "and\n" + fence(longer) + fence("x = 1\n" * 20, "python"))
    assert parsed.ok and parsed.code == longer


def test_truncated_block_is_still_extracted_and_marked():
    cut = KERNEL[:KERNEL.index("op.Process")]
    parsed = parse_reply("Here you go:\n```cpp\n" + cut)
    assert parsed.ok and parsed.truncated and parsed.code.startswith('#include "kernel_operator.h"')
    assert "op.Init" in parsed.code
    assert parse_reply(fence(KERNEL), finish_reason="length").truncated


def test_edit_blocks_are_applied_to_the_parent():
    reply = """Double the tile and add a sync.
```cpp
<<<<<<< SEARCH
constexpr int32_t TILE = 1024;
=======
constexpr int32_t TILE = 2048;
>>>>>>> REPLACE
```
and
```cpp
<<<<<<< SEARCH
    op.Process();
=======
    op.Process();
    AscendC::PipeBarrier<PIPE_ALL>();
>>>>>>> REPLACE
```
"""
    parsed = parse_reply(reply, parent_code=KERNEL)
    assert parsed.ok and parsed.kind == "edits" and parsed.edits_applied == 2
    assert "TILE = 2048;" in parsed.code and "TILE = 1024" not in parsed.code
    assert "op.Process();\n    AscendC::PipeBarrier<PIPE_ALL>();\n}" in parsed.code


def test_edit_block_matches_despite_indentation_drift():
    reply = "<<<<<<< SEARCH\nop.Init(x, y, z, TILE);\n=======\n    op.Init(x, y, z, TILE * 2);\n>>>>>>> REPLACE\n"
    parsed = parse_reply(reply, parent_code=KERNEL)
    assert parsed.ok and "TILE * 2" in parsed.code and parsed.notes


def test_edit_block_that_does_not_match_names_the_first_bad_line():
    reply = """<<<<<<< SEARCH
    KernelAdd op;
    op.Init(x, y, z, BLOCK);
    op.Process();
=======
    KernelAdd op;
>>>>>>> REPLACE
"""
    parsed = parse_reply(reply, parent_code=KERNEL)
    assert not parsed.ok and parsed.code == ""
    assert "SEARCH text not found" in parsed.reason
    assert "op.Init(x, y, z, BLOCK);" in parsed.reason and "SEARCH line 2" in parsed.reason


def test_a_failing_edit_leaves_the_parent_untouched():
    edits = find_edit_blocks("<<<<<<< SEARCH\nconstexpr int32_t TILE = 1024;\n=======\nX\n>>>>>>> REPLACE\n"
                             "<<<<<<< SEARCH\nnot there\n=======\nY\n>>>>>>> REPLACE\n")
    result = apply_edits(KERNEL, edits)
    assert not result.ok and result.applied == 1 and result.code == KERNEL
    assert result.reason.startswith("edit 2 of 2")


def test_edit_blocks_without_a_parent_are_a_recorded_failure():
    parsed = parse_reply("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n")
    assert not parsed.ok and "no parent kernel" in parsed.reason


def test_cut_off_edit_block_is_ignored_and_marked():
    reply = ("<<<<<<< SEARCH\nconstexpr int32_t TILE = 1024;\n=======\nconstexpr int32_t TILE = 4096;\n"
             ">>>>>>> REPLACE\n<<<<<<< SEARCH\n    op.Process();\n=======\n    op.Pro")
    parsed = parse_reply(reply, parent_code=KERNEL)
    assert parsed.ok and parsed.truncated and parsed.edits_applied == 1 and "4096" in parsed.code


def test_no_code_is_a_failure_not_an_exception():
    parsed = parse_reply("I am not able to write this kernel, but here are some thoughts on tiling.")
    assert not parsed.ok and parsed.reason == "no code block and no edit block"
    only_python = parse_reply(fence("def f():\n    pass\n", "python"))
    assert not only_python.ok and "python" in only_python.reason
    assert not parse_reply("").ok
