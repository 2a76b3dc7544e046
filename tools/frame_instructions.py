#!/usr/bin/env python3
"""A frame loop to count under valgrind --tool=callgrind (docs/PYTHON.md,
"Frame loops"): N balls, F frames of 100 steps, validate=False, through a
Context ("ctx") or ballcl.run ("run"). Instruction counts do not depend on
the machine's load, unlike times. Per-frame counts are the inclusive counts
of frame_locked (Context) or bpy_run_py (ballcl.run) over F + 1 calls,
less the one-time costs (device enumeration, context creation):

  PYTHONPATH=build/python POCL_MAX_PTHREAD_COUNT=1 valgrind --tool=callgrind \\
      --callgrind-out-file=cg.out /usr/bin/python3 tools/frame_instructions.py 1000 300 ctx
  callgrind_annotate --inclusive=yes cg.out | grep -E 'frame_locked|bpy_result|bpy_run_py'
"""
import sys

import numpy as np

import ballcl

n, frames, way = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s0 = np.zeros((n, 4), np.float32)
s0[:, 2] = 1
s0[:, 3] = 1e-3
dev = sys.argv[4] if len(sys.argv) > 4 else "cpu"
if way == "ctx":
    ctx = ballcl.Context(device=dev)
    frame = lambda s: ctx.run(100, state=s, validate=False)  # noqa: E731
else:
    frame = lambda s: ballcl.run(s, 100, device=dev, validate=False)  # noqa: E731
s, r = frame(s0)
for _ in range(frames):
    s, r = frame(s)
