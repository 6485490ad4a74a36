"""The error mapper on real-format compiler, emulator and runtime output (formats from
ascendc-facts.md §4.6 and g++/clang conventions), and attach_cards for emulator diagnostics."""

from __future__ import annotations

import json

import pytest

from copilot.diagnostics import Diagnostic
from knowledge import attach_cards, explain
from knowledge.cards import card_index

HDR = "/work/main/copilot/backends/sim/include"

# (name, text, expected ids in order, expected candidate line of the first finding or None)
CORPUS = [
    # ---- g++ against our emulator headers ------------------------------------------------
    ("gxx-static-assert-dtype",
     f"""In file included from {HDR}/kernel_operator.h:12,
                 from /tmp/cand/kernel.cpp:1:
{HDR}/cannsim/vec_ops.h: In instantiation of 'void AscendC::Exp(LocalTensor<T>&, const LocalTensor<T>&, const int32_t&) [with T = bfloat16_t]':
/tmp/cand/kernel.cpp:57:12:   required from here
{HDR}/cannsim/vec_ops.h:88:19: error: static assertion failed: current data type is not supported on current device!
   88 |     static_assert(cannsim::supported<T>(), "current data type is not supported on current device!");
      |                   ^~~~~~~~~~~~~~~~~~~~~~~~
""", ["L2.DTYPE_UNSUPPORTED"], 57),
    ("gxx-no-matching-adds",
     f"""/tmp/cand/kernel.cpp: In member function 'void KernelAdd::Compute(int32_t)':
/tmp/cand/kernel.cpp:63:13: error: no matching function for call to 'Adds(AscendC::LocalTensor<half>&, AscendC::LocalTensor<half>&, double, int32_t&)'
   63 |         Adds(yLocal, xLocal, 1.0, this->tileLength);
      |         ~~~~^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
{HDR}/cannsim/vec_ops.h:140:13: note: candidate: 'template<class T> void AscendC::Adds(LocalTensor<T>&, const LocalTensor<T>&, const T&, const int32_t&)'
{HDR}/cannsim/vec_ops.h:140:13: note:   template argument deduction/substitution failed:
/tmp/cand/kernel.cpp:63:13: note:   deduced conflicting types for parameter 'T' ('half' and 'double')
""", ["L4.API_SIGNATURE"], 63),
    ("gxx-not-member",
     "/tmp/cand/kernel.cpp:41:18: error: 'Sigmoid' is not a member of 'AscendC'\n"
     "   41 |         AscendC::Sigmoid(y, x, n);\n      |                  ^~~~~~~\n",
     ["L4.API_UNKNOWN"], 41),
    ("gxx-not-declared",
     "/tmp/cand/kernel.cpp: In member function 'void K::Compute()':\n"
     "/tmp/cand/kernel.cpp:77:9: error: 'ReduceMean' was not declared in this scope\n",
     ["L4.API_UNKNOWN"], 77),
    ("gxx-no-member-named",
     "/tmp/cand/kernel.cpp:30:15: error: 'class AscendC::TPipe' has no member named 'AllocBuffer'\n",
     ["L4.API_UNKNOWN"], 30),
    ("gxx-two-errors",
     """/tmp/cand/kernel.cpp:12:5: error: expected ';' before '}' token
/tmp/cand/kernel.cpp:20:9: error: 'DataCopyPadd' was not declared in this scope; did you mean 'DataCopyPad'?
""", ["CPP.COMPILE", "L4.API_UNKNOWN"], 12),
    ("gxx-cannot-convert",
     "/tmp/cand/kernel.cpp:88:30: error: cannot convert 'AscendC::GlobalTensor<float>' to 'const AscendC::LocalTensor<float>&'\n",
     ["L4.API_SIGNATURE"], 88),
    ("gxx-too-few-args",
     "/tmp/cand/kernel.cpp:52:16: error: too few arguments to function 'void AscendC::ReduceSum(...)'\n",
     ["L4.API_SIGNATURE"], 52),
    ("gxx-missing-include",
     "/tmp/cand/kernel.cpp:3:10: fatal error: acl/acl.h: No such file or directory\n    3 | #include \"acl/acl.h\"\ncompilation terminated.\n",
     ["CPP.COMPILE"], 3),
    ("ld-undefined",
     "/usr/bin/ld: /tmp/cand/kernel.o: in function `run_block':\nharness.cpp:(.text+0x1c): undefined reference to `sigmoid_custom'\ncollect2: error: ld returned 1 exit status\n",
     ["CPP.COMPILE"], None),
    # ---- bisheng / ccec (CANN toolchain) ---------------------------------------------------
    ("bisheng-cast-intrinsics",
     """In file included from /usr/local/Ascend/ascend-toolkit/latest/compiler/tikcpp/tikcfw/kernel_operator.h:30:
/usr/local/Ascend/ascend-toolkit/latest/compiler/tikcpp/tikcfw/impl/kernel_operator_vec_vconv_impl.h:450:5: error: no matching function for call to 'CastIntrinsicsImpl'
    CastIntrinsicsImpl(dst, src, roundMode, calCount);
    ^~~~~~~~~~~~~~~~~~
/usr/local/Ascend/ascend-toolkit/latest/compiler/tikcpp/tikcfw/impl/dav_m200/kernel_operator_vec_vconv_impl.h:120:20: note: candidate function not viable: no known conversion from '__ubuf__ AscendC::IntegerSubType<4, true> *' to '__ubuf__ int32_t *' (aka '__ubuf__ int *') for 2nd argument
""", ["L2.DTYPE_UNSUPPORTED"], None),
    ("bisheng-static-assert",
     "/home/op/AddCustom/op_kernel/add_custom.cpp:58:9: error: static_assert failed due to requirement 'SupportType<bfloat16_t, half, float>()' \"current data type is not supported on current device!\"\n",
     ["L2.DTYPE_UNSUPPORTED"], 58),
    ("bisheng-divs-type",
     "/home/op/k.cpp:40:5: error: static_assert failed \"Divs not support current datatype!\"\n",
     ["L2.DTYPE_UNSUPPORTED"], 40),
    ("bisheng-datacopypad-310p",
     """/home/op/k.cpp:71:9: warning: 'DataCopyPadUB2GMImpl<float>' is deprecated: NOTICE: DataCopyPad is not deprecated. Currently, DataCopyPad is an unsupported API on current device. Please check your code! [-Wdeprecated-declarations]
        DataCopyPad(yGm[off], y, cp);
        ^
""", ["L4.API_UNKNOWN"], 71),
    ("bisheng-reserved-ubuf",
     "/home/op/k.asc:33:5: error: static_assert failed \"Add is forbidden when compile option --cce-disable-asc-reserved-ubuf is enabled\"\n",
     ["CPP.COMPILE"], 33),
    ("ascplugin-wrapper",
     """/home/op/op_kernel/k.cpp:19:1: error: unknown type name 'LocalTensr'
[ERROR] ASCPLUGIN [pid:331, tid:331] [/usr/local/Ascend/asc_utils.cpp:263] Function ExecuteCompile at line 263: Command: [/usr/local/Ascend/compiler/ccec_compiler/bin/bisheng -c --cce-auto-sync -x cce -std=c++17 --cce-aicore-arch=dav-c220-vec -O3 k.cpp]
""", ["CPP.COMPILE"], 19),
    ("build-sh-failure",
     """[ 50%] Building CXX object op_kernel/CMakeFiles/ascendc_kernels.dir/add_custom.cpp.o
/home/op/AddCustom/op_kernel/add_custom.cpp:44:22: error: no member named 'DataCopyPadd' in namespace 'AscendC'
gmake[2]: *** [op_kernel/CMakeFiles/ascendc_kernels.dir/build.make:76: add_custom.o] Error 1
gmake[1]: *** [CMakeFiles/Makefile2:120: all] Error 2
""", ["L4.API_UNKNOWN"], 44),
    ("msopgen-failure",
     "[ERROR] msopgen: op json add_custom.json error: input_desc[0] lacks 'name'\n",
     ["CPP.COMPILE"], None),
    ("bisheng-bad-arch",
     "bisheng: error: unsupported option '--npu-arch=dav-2202'\n",
     ["CPP.COMPILE"], None),
    # ---- CPU-debug API checks (tikicpulib) ---------------------------------------------------
    ("cpudebug-buffer-overflow",
     "[ERROR][AIV_5][pid 1022] TPipe::InitBuffer, Allocated buffer size overflow, allocate buffer size is 262144, the limit size is 196352.\n",
     ["L2.UB_CAPACITY"], None),
    ("cpudebug-align",
     "[ERROR][AIV_0][pid 1000] alignment in DataCopy, current tensor address is 100, which should be 32 byte aligned.\n",
     ["L2.ALIGN_32B"], None),
    ("cpudebug-instr-align",
     "[ERROR][AIV_3] instr vadd dst addr is 1048, which should be 32 B Aligned\n",
     ["L2.ALIGN_32B"], None),
    ("cpudebug-worktensor",
     "[ERROR][AIV_1] ReduceMax Worktensor's size should be more than 64, but get 16\n",
     ["L2.TMP_BUFFER"], None),
    ("cpudebug-mask",
     "[ERROR][AIV_2] Failed to check mask in counter mode, mask must be in range 0 ~ 128, current value is 256\n",
     ["L2.MASK_RANGE"], None),
    ("cpudebug-mask-zero",
     "[ERROR] normal mode in Ascend910 / Ascend310p / Ascend610, maskHigh 0 and maskLow 0 cannot be both 0.\n",
     ["L2.MASK_RANGE"], None),
    ("cpudebug-core-num",
     "[ERROR] block dim 64 exceed max core num of ascend910B1!\n",
     ["L2.CORE_COUNT"], None),
    ("cpudebug-leftpadding",
     "[ERROR][AIV_0] Failed to check leftPadding value in DataCopyPad, its valid range is 0 ~ 32, current value is 40\n",
     ["L2.DATACOPY_32B"], None),
    ("cpudebug-repeat",
     "[ERROR][AIV_0] Failed to check repeatTimes value in Add, its valid range is 0 ~ 255, current value is 300\n",
     ["L2.REPEAT_LIMIT"], None),
    ("cpudebug-reducesum-type",
     "[ERROR] ReduceSum need dst data type (1) should be same or 2x of src type (2)\n",
     ["L2.DTYPE_UNSUPPORTED"], None),
    # ---- device runtime on an NPU box ---------------------------------------------------------
    ("runtime-ub-oob",
     """[ERROR] RUNTIME(2412,python3):2026-05-02-10:11:12.345.679 [device_error_proc.cc:1101]2412 ProcessStarsCoreErrorInfo:The error from device(chipId:0, dieId:0), serial number is 3, there is an aivec error, core id is 5, error code = 0x10
[ERROR] RUNTIME(2412,python3):2026-05-02-10:11:12.345.680 [device_error_proc.cc:1102]2412 errorStr: VEC instruction error: the ub address out of bounds.
[ERROR] RUNTIME(2412,python3):2026-05-02-10:11:12.345.690 Kernel task happen error, retCode=0x31, [vector core exception].
[ERROR] ASCENDCL(2412,python3): aclrtSynchronizeStream(stream) failed: 507035
""", ["L2.UB_BOUNDS"], None),
    ("runtime-gm-oob",
     """[ERROR] RUNTIME(88,python):2026-03-01-08:00:00.000.001 [device_error_proc.cc:900]88 there is an aicore error, core id is 12, error code = 0x800000
[ERROR] RUNTIME(88,python):2026-03-01-08:00:00.000.002 [device_error_proc.cc:901]88 errorStr: The DDR address of the MTE instruction is out of range.
""", ["L2.GM_BOUNDS"], None),
    ("runtime-unaligned-uub",
     "EZ9999: Inner Error!\n[ERROR] RUNTIME there is an aivec error, core id is 5, error code = 0x10\n"
     "errorStr: Illegal instruction, which is usually caused by unaligned UUB addresses.\n",
     ["L2.ALIGN_32B"], None),
    ("runtime-timeout",
     "[ERROR] RUNTIME(3000,python3): aicore timeout, stream_id=2, task_id=17\n"
     "RuntimeError: ACL stream synchronize failed, error code:507014\n",
     ["L2.SYNC_PAIRING"], None),
    ("runtime-aicore-exception-alone",
     "[W compiler_depend.ts:133] Warning: NPU warning, error code is 507015 [Error]: The aicore execution is abnormal.\n"
     "rtDeviceSynchronizeWithTimeout execute failed, reason=[aicore exception]\n",
     ["RUN.CRASH"], None),
    ("runtime-aicpu",
     "RuntimeError: The Inner error is reported as above. ERR99999 UNKNOWN application exception. error code is 507018\n",
     ["RUN.CRASH"], None),
    # ---- our emulator and runner ---------------------------------------------------------------
    ("emulator-json",
     '{"id":"L2.ALIGN_32B","severity":"error","api":"DataCopy","line":42,"block":3,"message":"DataCopy dst at UB offset 100 is not 32-byte aligned"}\n'
     '{"id":"L2.DATACOPY_32B","severity":"warning","api":"DataCopy","line":44,"block":3,"message":"DataCopy of 1021 float is not a 32-byte multiple"}\n',
     ["L2.ALIGN_32B", "L2.DATACOPY_32B"], 42),
    ("emulator-text",
     "kernel.cpp:61: error [L2.QUEUE_PROTOCOL] DeQue on queue inQueueX with nothing enqueued (would hang on the chip)\n",
     ["L2.QUEUE_PROTOCOL"], None),
    ("runner-segfault",
     "block 7 died with signal 11 (Segmentation fault)\n",
     ["RUN.CRASH"], None),
    ("runner-oom",
     "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n",
     ["RUN.MEMORY"], None),
    ("emulator-tiling",
     "[RUN.TILING] TilingFunc: optiling::TilingFunc returned 1 instead of ge::GRAPH_SUCCESS\n",
     ["RUN.TILING"], None),
    ("emulator-compare-count",
     '{"id":"L2.CMP_COUNT_256B","severity":"error","api":"Compare","line":88,"block":0,"message":"Compare count 1021 x 4 B = 4084 B is not a multiple of 256 B"}\n',
     ["L2.CMP_COUNT_256B"], 88),
    ("runner-timeout",
     "block 0 timed out after 20 s of CPU time\n",
     ["RUN.TIMEOUT"], None),
]


def test_corpus_has_at_least_30_messages():
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("name,text,ids,line", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_message_maps_to_its_constraint(name, text, ids, line):
    found = explain(text)
    assert [d.id for d in found] == ids, [(d.id, d.message) for d in found]
    if line is not None:
        assert found[0].line == line
    for d in found:
        assert d.hint, d
        assert d.raw.strip()
        idx = card_index()
        assert d.cards and all(c in idx for c in d.cards), d.cards


def test_corpus_coverage_is_complete():
    """Figure for docs/knowledge.md: how many corpus messages map to a specific id."""
    mapped = sum(1 for _, text, _, _ in CORPUS if all(d.id != "GEN.UNKNOWN" for d in explain(text)))
    assert mapped == len(CORPUS)


def test_unmatched_text_keeps_raw_and_gets_generic_id():
    text = "something odd happened in the flux capacitor\nand then it stopped"
    found = explain(text)
    assert [d.id for d in found] == ["GEN.UNKNOWN"]
    assert found[0].raw == text
    assert explain("") == []


def test_unknown_compiler_error_line_is_kept_as_cpp_compile():
    found = explain("/tmp/cand/k.cpp:9:1: error: this is not a message anybody wrote a pattern for\n")
    assert found[0].id == "CPP.COMPILE" and found[0].line == 9


def test_multiline_compiler_output_gives_one_finding_per_error_with_lines():
    text = CORPUS[0][1] + CORPUS[1][1] + CORPUS[2][1]
    found = explain(text)
    assert [(d.id, d.line) for d in found] == [("L2.DTYPE_UNSUPPORTED", 57), ("L4.API_SIGNATURE", 63),
                                               ("L4.API_UNKNOWN", 41)]
    assert found[1].api == "Adds"
    assert "L4.scalar-arith" in found[1].cards


def test_attach_cards_fills_cards_and_hint_for_emulator_ids():
    diags = [Diagnostic(id="L2.UB_CAPACITY", severity="error", message="buffers need 200 KB", api="InitBuffer"),
             Diagnostic(id="PREC.localized_outlier", severity="error", message="tail wrong"),
             Diagnostic(id="L4.API_SIGNATURE", severity="error", message="x", api="Cast", hint="keep me")]
    out = attach_cards(diags)
    assert out is diags
    assert diags[0].cards[0] == "L2.UB_CAPACITY" and "L4.TPipe-TQue-TBuf" in diags[0].cards
    assert diags[0].hint
    assert diags[1].cards[0] == "PREC.localized_outlier"
    assert diags[2].hint == "keep me" and "L4.Cast" in diags[2].cards
    as_dict = attach_cards([{"id": "L2.SYNC_MISSING", "message": "m"}])[0]
    assert as_dict["cards"][0] == "L2.SYNC_MISSING" and as_dict["hint"]


def test_every_pattern_in_the_table_names_known_cards():
    from knowledge.errors import load_patterns

    idx = card_index()
    for p in load_patterns():
        assert p.id == "@emulator" or p.id in idx, p.name
        assert all(c in idx for c in p.cards), p.name


def test_explain_output_is_json_serialisable():
    found = explain(CORPUS[0][1])
    assert found, "the first corpus entry has a finding"
    doc = json.loads(json.dumps([d.to_json() for d in found]))
    assert doc == [d.to_json() for d in found]
    assert doc[0]["id"] == "L2.DTYPE_UNSUPPORTED" and doc[0]["line"] == 57 and doc[0]["cards"]


def test_every_front_end_attaches_cards_the_same_way():
    """One path: the LLM agent's prompt, the TUI's diagnostics pane and `attach_cards` agree."""
    from copilot.agents.llm import _with_cards
    from tui.screens.main import MainScreen

    raw = [{"id": "L2.UB_CAPACITY", "message": "buffers need 200 KB", "api": "InitBuffer"},
           {"id": "L2.SYNC_MISSING", "message": "m", "cards": ["L3.double-buffering"]},
           {"id": "X.NOT_A_CARD", "message": "unknown"}]
    expected = attach_cards([dict(d) for d in raw])
    assert _with_cards(raw) == expected == MainScreen._with_cards(raw)
    assert "cards" not in raw[0]                                      # the callers' lists are not changed
    assert expected[0]["cards"][0] == "L2.UB_CAPACITY" and expected[0]["hint"]
    assert expected[1]["cards"][:2] == ["L3.double-buffering", "L2.SYNC_MISSING"]
    assert expected[2]["cards"] == [] and expected[2]["hint"] == ""
