"""Model files through the command line (docs/MODELS.md, "Your own update"):
every example of examples/ runs and validates bit for bit against its C
reference (and examples/drag.py, the NumPy step, gives the same bits); the
seed's and bounce's updates as model files give the built-in models' bits;
a run without a reference says so and exits 0; and every bad input is one
line on stderr with its exit status: 2 for the user's input (the model
file, its parameters, the reference and how it fails), 1 for a reference
that disagrees with the kernel. Exits 77 when there is no device."""

import hashlib
import importlib.util
import os
import time

import numpy as np

import testlib
from testlib import check, expect_error, run

dev = testlib.require_device()
tmp = testlib.tempdir()
EXAMPLES = os.path.join(testlib.SOURCE_ROOT, "examples")
SMALL = ["-d", dev, "-n", "1000", "-s", "50"]


def example(name):
    return os.path.join(EXAMPLES, name)


def write(name, text):
    """A file of the scratch folder holding text; its path."""
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def validated(args, what, quiet=True):
    """Runs `run args`; checks exit 0, the bit-for-bit line and (quiet)
    nothing on stderr. A failed wide build is not quiet: the OpenCL
    compiler may print its own count of errors there."""
    r = run(["run"] + args)
    check(r.rc == 0 and "validation  passed: " in r.out and "bit-identical to the C reference"
          in r.out and (r.err == "" or not quiet), what, r.describe())
    return r


def state_of(args, name):
    """The final state of `run args --output FILE.npy`, or None."""
    out = os.path.join(tmp, name + ".npy")
    r = run(["run"] + args + ["--output", out])
    if not check(r.rc == 0, f"{name}: the run exits 0", r.describe()):
        return None
    return np.load(out)


def same_bits(a, b, what):
    ok = a is not None and b is not None and a.shape == b.shape and a.dtype == b.dtype and \
        a.tobytes() == b.tobytes()
    check(ok, what)


with open(example("seed.cl"), encoding="utf-8") as f:
    SEED = f.read()
with open(example("drag.cl"), encoding="utf-8") as f:
    DRAG = f.read()
with open(example("drag.c"), encoding="utf-8") as f:
    DRAG_C = f.read()


def drag_with(old, new, what="examples/drag.cl"):
    """drag.cl with old replaced by new (old must occur: if the example
    changes shape, this test must be changed, not pass on by accident)."""
    check(old in DRAG, f"{what} contains {old!r}")
    return DRAG.replace(old, new)


# ---- every example runs and validates bit for bit -------------------------------------
for name in ("seed", "drag", "bounce"):
    cl, c = example(name + ".cl"), example(name + ".c")
    for init in ("seed", "random"):
        validated(SMALL + ["--model-file", cl, "--reference", c, "--init", init],
                  f"examples/{name}.cl --init {init} validates against examples/{name}.c")
validated(SMALL + ["--model-file", example("drag.cl"), "--reference", example("drag.c"),
                   "--param", "drag=0.25", "--param", "gravity=-9.8"],
          "examples/drag.cl with --param drag=0.25 --param gravity=-9.8 validates")
validated(SMALL + ["--model-file", example("bounce.cl"), "--reference", example("bounce.c"),
                   "--param", "e=0", "--param", "w=10", "--init", "random"],
          "examples/bounce.cl with e=0, w=10 (every wall, every step) validates")
# The wide CPU variants and the single step: one ball per work-item.
validated(["-d", dev, "-n", "999", "-s", "7", "--steps-per-launch", "1", "--model-file",
           example("drag.cl"), "--reference", example("drag.c")],
          "examples/drag.cl one step a launch validates")
r = run(["run", "--json"] + SMALL + ["--model-file", example("drag.cl"), "--reference",
                                     example("drag.c")])
j = r.json() if r.rc == 0 else {}
v = j.get("validation", {})
with open(example("drag.cl"), "rb") as f:
    digest = hashlib.sha256(f.read()).hexdigest()
check(v.get("performed") is True and v.get("passed") is True and v.get("note") is None
      and v.get("compared") == 4000 and j.get("model_file") == {"path": example("drag.cl"),
                                                                   "sha256": digest},
      "--json: validation passed, model_file names the file and its sha256", r.describe())

# An update that does not compile on vectors of balls (a swizzle) runs
# without the wide CPU variants, and the program line says why.
narrow = write("swizzle.cl", drag_with("""    b.x = b.x + b.z * dt;
    b.y = b.y + b.w * dt;""", "    b.xy = b.xy + b.zw * dt;"))
r = validated(SMALL + ["--model-file", narrow, "--reference", example("drag.c")],
              "drag with a swizzle (b.xy = b.xy + b.zw * dt) validates against examples/drag.c",
              quiet=False)
check("no wide variants: the update does not compile on vectors of balls" in r.out
      and "kernel      swizzle_steps " in r.out,
      "... without the wide variants, the program line says so", r.describe())

# NaNs compare equal whatever their sign and payload: 0/0 is a NaN whose
# bits the device and the C compiler need not agree on. Validation comes
# first (a NaN unequal to the reference's would be exit 1, FAILED); then the
# run refuses a state that left float32's finite numbers, as for every model.
NAN_UPDATE = """float4 update(float4 b)
{
    b.x = (b.x - b.x) / (b.y - b.y);
    b.z = b.z + 1.0f;
    return b;
}
"""
expect_error(["run"] + SMALL + ["--model-file", write("nans.cl", NAN_UPDATE), "--reference",
                                write("nans.c", NAN_UPDATE)], 2,
             "ball 0 overflowed", "its x became nan",
             what="an update that makes NaNs (0/0) passes validation (a NaN equals any NaN), "
             "then is refused as non-finite")
# The kernels are named after the file: a name that is also one of OpenCL's
# built-in functions (which an implementation may define as a macro, as
# PoCL does step and nan) must not change them.
for name in ("nan", "step", "sin"):
    r = run(["run"] + SMALL + ["--model-file", write(name + ".cl", SEED)])
    check(r.rc == 0 and f"kernel      {name}_steps" in r.out,
          f"a model file named {name}.cl, as an OpenCL built-in function, runs", r.describe())

# ---- examples/drag.py, the NumPy step, gives the kernel's bits --------------------------
spec = importlib.util.spec_from_file_location("drag_example", example("drag.py"))
drag_py = importlib.util.module_from_spec(spec)
spec.loader.exec_module(drag_py)
rng = np.random.default_rng(38)
start = np.empty((5000, 4), np.float32)
start[:, 0:2] = rng.uniform(0, 800, (5000, 2))
start[:, 2:4] = rng.uniform(-200, 200, (5000, 2))
start_npy = os.path.join(tmp, "start.npy")
np.save(start_npy, start)
STEPS = 40
want = start
for _ in range(STEPS):
    want = drag_py.step(want, 0.016666668, 980.0, 0.5)
check(want.dtype == np.float32 and want.shape == start.shape and
      not np.array_equal(want, start), "examples/drag.py steps an (N, 4) float32 state")
got = state_of(["-d", dev, "-s", str(STEPS), "--input", start_npy, "--model-file",
                example("drag.cl")], "drag-numpy")
same_bits(want, got, f"examples/drag.py's {STEPS} steps equal the kernel's bit for bit")

# ---- the built-in models' updates as files give the built-ins' bits --------------------
same_bits(state_of(SMALL + ["--model-file", example("seed.cl"), "--init", "random"], "seed-file"),
          state_of(SMALL + ["--model", "seed", "--init", "random"], "seed-builtin"),
          "examples/seed.cl --init random equals --model seed --init random bit for bit")
same_bits(state_of(SMALL + ["--model-file", example("bounce.cl"), "--init", "seed"],
                   "bounce-file"),
          state_of(SMALL + ["--model", "bounce", "--init", "seed"], "bounce-builtin"),
          "examples/bounce.cl --init seed equals --model bounce bit for bit")

# ---- no reference: runs, says so, exits 0 ----------------------------------------------
r = run(["run"] + SMALL + ["--model-file", example("drag.cl")])
check(r.rc == 0 and "validation  not validated: no reference (--reference FILE.c gives one)"
      in r.out.splitlines() and r.err == "", "without --reference: exit 0, 'not validated: no "
      "reference'", r.describe())
r = run(["run", "--json"] + SMALL + ["--model-file", example("drag.cl")])
v = r.json().get("validation", {}) if r.rc == 0 else {}
check(v.get("performed") is False and v.get("passed") is False
      and v.get("note") == "not validated: no reference",
      "without --reference, --json: validation.note 'not validated: no reference'", r.describe())

# ---- bad model files: exit 2, one line naming the file ----------------------------------
missing = os.path.join(tmp, "no-such-model.cl")
expect_error(["run"] + SMALL + ["--model-file", missing], 2,
             f"--model-file '{missing}'", "No such file")
bad = write("syntax.cl", drag_with("b.x = b.x + b.z * dt;", "b.x = b.x + speed * dt;"))
line = DRAG.splitlines().index("    b.x = b.x + b.z * dt;") + 1
r = run(["run"] + SMALL + ["--model-file", bad])
# The OpenCL compiler may print its own lines on stderr ("1 error
# generated."), and the build log follows ballcl's line.
first = next((l for l in r.err_lines() if l.startswith("ballcl: ")), "")
check(r.rc == 2 and f"model '{bad}' does not compile" in first and f"{bad}:{line}:" in first
      and "undeclared identifier 'speed'" in first,
      f"a kernel that does not compile -> exit 2, ballcl's line names {os.path.basename(bad)}:{line}",
      r.describe())
bad = write("pragma.cl", drag_with("#pragma ballcl flops 11", "#pragma ballcl flop 11"))
expect_error(["run"] + SMALL + ["--model-file", bad], 2, f"{bad}:", "unknown '#pragma ballcl "
             "flop'", "expected param, flops, ops or sets")
bad = write("default.cl", drag_with("param drag 0.5", "param drag half"))
expect_error(["run"] + SMALL + ["--model-file", bad], 2, f"{bad}:", "default of 'drag'", "half")
bad = write("literal.cl", drag_with("b.z - drag * b.z * dt", "b.z - 0.5 * b.z * dt"))
line = DRAG.splitlines().index("    b.z = b.z - drag * b.z * dt;") + 1
col = DRAG.splitlines()[line - 1].index("drag * b.z") + 1
expect_error(["run"] + SMALL + ["--model-file", bad], 2, f"{bad}:{line}:{col}", "'0.5'",
             "0.5f")
bad = write("float8.cl", drag_with("float4 update(float4 b,", "float4 update(float8 b,"))
expect_error(["run"] + SMALL + ["--model-file", bad], 2, f"{bad}:", "4 floats", "float8")
bad = write("count.cl", drag_with(", float drag)", ")"))
expect_error(["run"] + SMALL + ["--model-file", bad], 2, f"{bad}:", "2 parameters",
             "declare 3", "dt, gravity, drag")

# ---- parameters ----------------------------------------------------------------------
expect_error(["run"] + SMALL + ["--model-file", example("drag.cl"), "--param", "drga=1"], 2,
             "parameter 'drga' does not apply to model 'drag'", "expected one of dt, gravity, drag")
expect_error(["run"] + SMALL + ["--model-file", example("seed.cl"), "--param", "dt=1"], 2,
             "parameter 'dt' does not apply to model 'seed'", "it takes none")
expect_error(["run"] + SMALL + ["--model-file", example("drag.cl"), "--param", "drag"], 2,
             "--param 'drag': expected NAME=VALUE")
expect_error(["run"] + SMALL + ["--model-file", example("drag.cl"), "--param", "drag=fast"], 2,
             "drag", "fast")

# ---- the C reference -----------------------------------------------------------------
# Every failure of the reference is the user's input (2) but a disagreement,
# which is a validation failure (1).
DRAG_ARGS = SMALL + ["--model-file", example("drag.cl"), "--reference"]
bad = write("nocompile.c", DRAG_C.replace("b.x = b.x + b.z * dt;", "b.x = b.x + speed * dt;"))
line = DRAG_C.splitlines().index("    b.x = b.x + b.z * dt;") + 1
r = run(["run"] + DRAG_ARGS + [bad])
# The compiler's log follows ballcl's line.
first = r.err_lines()[0] if r.err_lines() else ""
check(r.rc == 2 and first.startswith(f"ballcl: reference '{bad}' does not compile: ")
      and f"nocompile.c:{line}:" in first and "speed" in first,
      f"a reference that does not compile -> exit 2, ballcl's line names nocompile.c:{line}",
      r.describe())
bad = write("disagrees.c", DRAG_C.replace("b.x = b.x + b.z * dt;", "b.x = b.x - b.z * dt;"))
r = run(["run"] + DRAG_ARGS + [bad])
lines = r.out.splitlines()
check(r.rc == 1 and any(l.startswith("validation  FAILED: ") for l in lines)
      and any(l.startswith("  ball 0: want (") for l in lines),
      "a reference that disagrees (one operator) -> exit 1, FAILED with the first balls",
      r.describe())
r = run(["run", "--json"] + DRAG_ARGS + [bad])
v = r.json().get("validation", {}) if r.rc == 1 else {}
check(v.get("performed") is True and v.get("passed") is False and v.get("mismatches", 0) > 0
      and v.get("first_mismatches", [{}])[0].get("ball") == 0,
      "--json of the disagreeing reference: failed, first_mismatches from ball 0", r.describe())
bad = write("segfault.c", DRAG_C.replace("    return b;", "    *(volatile int *)0 = 0;\n"
                                           "    return b;"))
expect_error(["run"] + DRAG_ARGS + [bad], 2, f"reference '{bad}'", "signal 11")
bad = write("loops.c", DRAG_C.replace("    return b;", "    for (volatile int i = 1; i;)\n"
                                        "        ;\n    return b;"))
# Stopped at its limit: the run takes the limit more than a run of a
# reference that ends (the same compile and build: a copy of drag.c, so
# that neither finds the other's compiled reference), give or take a
# loaded machine's seconds.
t0 = time.monotonic()
r = run(["run"] + DRAG_ARGS + [write("ends.c", DRAG_C + "\n")])
ends = time.monotonic() - t0
check(r.rc == 0, "a copy of examples/drag.c as the reference validates", r.describe())
t0 = time.monotonic()
expect_error(["run"] + DRAG_ARGS + [bad, "--reference-limit", "2"], 2, f"reference '{bad}'",
             "time limit of 2 s")
took = time.monotonic() - t0
check(2 <= took < ends + 2 + 5, f"the looping reference is stopped at its limit of 2 s "
      f"({took:.1f} s, a reference that ends {ends:.1f} s)")
bad = write("literal.c", DRAG_C.replace("b.z - drag * b.z * dt", "b.z - 0.5 * b.z * dt"))
expect_error(["run"] + DRAG_ARGS + [bad], 2, f"{bad}:", "'0.5'", "0.5f")

# ---- options that do not go together ---------------------------------------------------
expect_error(["run"] + SMALL + ["--reference", example("drag.c")], 2,
             "--reference: only with --model-file")
expect_error(["run"] + SMALL + ["--model", "bounce", "--model-file", example("drag.cl")], 2,
             "--model and --model-file: give one")

testlib.finish()
