"""The npu backend: candidates built with CANN's toolchain through the exported project, installed
into a per-session prefix, run through torch_npu and timed with its profiler (CANN-Bench §4.5).

Never run on hardware: the machines this was written on have no NPU and no CANN. Tests drive it
with a fake toolchain and a fake torch_npu (tests/fakes/).
"""

NAME = "npu"
