"""Device tests (docs/MODELS.md, docs/BENCHMARK.md, docs/DESIGN.md): ballcl run on the test device must be
bit-identical to the C reference for N in {1, 7, 1000, 100003}, both
initial states, and local sizes 1, auto, driver and 24 (not a power of
two); K steps per launch must give the bits of single steps, also when K
does not divide the step count; --sync every and a state split over
several buffers must validate too. Exits 77 when there is no device."""

import os

import testlib
from testlib import check, run

dev = testlib.require_device()
tmp = testlib.tempdir()

STEPS = 23
SIZES = (1, 7, 1000, 100003)
LOCALS = ("1", "auto", "driver", "24")


def run_json(args, env=None):
    r = run(["run", "-d", dev, "--json"] + args, env=env)
    if r.rc != 0:
        check(False, f"ballcl {' '.join(r.args)} exits 0", r.describe())
        return None
    return r.json()


def validated(j, n, what):
    v = j["validation"]
    ok = (v["performed"] and v["passed"] and v["compared"] == 4 * n and v["mismatches"] == 0
          and v["max_ulp"] == 0 and v["tolerance_ulp"] == 0 and v["first_mismatches"] == []
          and j["balls"] == n)
    return check(ok, f"{what}: {4 * n} floats bit-identical to the C reference", str(v))


def round_up(n, m):
    return (n + m - 1) // m * m


# ---- the grid ---------------------------------------------------------------
max_wg = None
for n in SIZES:
    for init in ("seed", "random"):
        for local in LOCALS:
            what = f"N={n} init={init} local={local}"
            # One step per launch: these are the one-step kernel's local sizes.
            j = run_json(["-n", n, "-s", STEPS, "--init", init, "--seed", 1000 + n,
                          "--local", local, "--steps-per-launch", 1])
            if j is None:
                continue
            validated(j, n, what)
            l = j["launch"]
            if local == "driver":
                ok = l["how"] == "driver" and l["local"] == 0 and l["global"] == n
            elif local == "auto":
                # Never the seed's mistake, a group of 1 (PoCL's kernel limit is
                # far above 1), and the global size covers N in whole groups.
                ok = (l["how"] == "auto" and l["local"] > 1
                      and l["global"] == round_up(n, l["local"]) and l["local"] <= 256)
            else:
                ok = (l["how"] == "user" and l["local"] == int(local)
                      and l["global"] == round_up(n, int(local)))
            check(ok and l["steps_per_launch"] == 1 and l["sync"] == "end" and j["steps"] == STEPS
                  and j["init"] == init, f"{what}: launch reported as asked", str(l))


# ---- steps per launch -------------------------------------------------------
def final_state(args, name):
    path = os.path.join(tmp, name)
    j = run_json(["-n", 1000, "--init", "random", "--seed", 5, "--output", path] + args)
    if j is None or not os.path.exists(path):
        check(False, f"{name} written")
        return None, j
    with open(path, "rb") as f:
        return f.read(), j


single, j1 = final_state(["-s", 50], "k1.npy")
if j1:
    validated(j1, 1000, "50 single steps")
for k in (7, 50, 64):
    fused, jk = final_state(["-s", 50, "--steps-per-launch", k], f"k{k}.npy")
    if jk:
        validated(jk, 1000, f"50 steps, {k} per launch")
        check(jk["launch"]["steps_per_launch"] == k, f"K={k} reported", str(jk["launch"]))
    check(single is not None and fused == single,
          f"50 steps, {k} per launch: output file bit-identical to 50 single steps")
# The state really moved: K steps that did nothing would also agree.
init_state, j0 = final_state(["-s", 0], "k0.npy")
check(init_state is not None and init_state != single, "50 steps change the state")

# ---- synchronisation and split buffers -----------------------------------------
j = run_json(["-n", 1000, "-s", 30, "--init", "random", "--sync", "every"])
if j:
    validated(j, 1000, "--sync every")
    check(j["launch"]["sync"] == "every", "--sync every reported", str(j["launch"]))

# BALLCL_TEST_MAX_ALLOC lowers the allocation limit so that the state is
# split over several buffers (docs/BENCHMARK.md) on any device.
j = run_json(["-n", 2500, "-s", 30, "--init", "random", "--steps-per-launch", 4],
             env={"BALLCL_TEST_MAX_ALLOC": str(1000 * 16)})
if j:
    validated(j, 2500, "2500 balls split over buffers of 1000")
    check(j["buffers"] == 3, "three buffers reported", str(j["buffers"]))

testlib.finish()
