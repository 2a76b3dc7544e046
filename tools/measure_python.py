#!/usr/bin/python3
"""Per-call overhead of ballcl.run against the CLI's (docs/PYTHON.md).

A Python program without the module hands its state to the CLI through
files: np.save, `ballcl run --input --output --json`, np.load (and the CLI alone,
--init random, is timed too: the stricter bound). With it, one
ballcl.run call. For N balls x 1 step both are timed side by side, in
interleaved repeats; the overhead is the wall time minus the device time the
run itself reports. Then a Context loop: its calls must not rebuild or
re-upload (checked through the Result's fields and the context's counters).

    PYTHONPATH=build/python /usr/bin/python3 tools/measure_python.py [-d SEL] [-n N] [-r R]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import ballcl


def timed(fn, *args, **kw):
    """(what fn returns, its wall time in ms)."""
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, (time.perf_counter() - t0) * 1e3


def device_ms(p):
    """The device time a `ballcl run --json` reports."""
    return json.loads(p.stdout)["timing"]["device_ms"]


def median_range(xs):
    return f"{statistics.median(xs):8.2f} ms ({min(xs):.2f}..{max(xs):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-d", "--device", default=os.environ.get("BALLCL_DEVICE"))
    ap.add_argument("-n", "--balls", type=int, default=100000)
    ap.add_argument("-r", "--repeats", type=int, default=15)
    ap.add_argument("--cli", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "build", "tools", "ballcl"))
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    state = rng.uniform(-100, 100, (a.balls, 4)).astype(np.float32)
    # Wall times and the times beyond the device's, of the CLI via files,
    # the CLI alone and ballcl.run.
    wall, over = ({k: [] for k in ("cli", "bare", "py")} for _ in range(2))
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
        dev = ["-d", a.device] if a.device else []
        args = [a.cli, "run", "--input", inp, "--output", out, "-s", "1", "--json"] + dev
        bare = [a.cli, "run", "--init", "random", "-n", str(a.balls), "-s", "1", "--json"] + dev
        # Warm the binary cache and the page cache for both.
        ballcl.run(state, 1, device=a.device)
        np.save(inp, state)
        subprocess.run(args, check=True, capture_output=True)
        def via_files():
            np.save(inp, state)
            p = subprocess.run(args, check=True, capture_output=True, text=True)
            return np.load(out), p

        for _ in range(a.repeats):
            (back, p), w = timed(via_files)
            wall["cli"].append(w)
            over["cli"].append(w - device_ms(p))
            p, w = timed(subprocess.run, bare, check=True, capture_output=True, text=True)
            wall["bare"].append(w)
            over["bare"].append(w - device_ms(p))
            (new, r), w = timed(ballcl.run, state, 1, device=a.device)
            wall["py"].append(w)
            over["py"].append(w - r.timing["device_ms"])
            assert np.array_equal(new.view(np.uint32), back.view(np.uint32))
    d = r.device
    print(f"python_overhead: {a.balls} balls x 1 step on '{d['name']}' ({d['platform']}, "
          f"{d['selector']}), {a.repeats} interleaved repeats, median (min..max)")
    print(f"host: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, load {os.getloadavg()[0]:.1f}")
    for k, label in (("cli", "CLI via .npy files"), ("bare", "CLI alone (--init)"),
                     ("py", "ballcl.run")):
        print(f"{label:20} wall {median_range(wall[k])}  beyond device {median_range(over[k])}")
    med = {k: statistics.median(v) for k, v in over.items()}
    ratio = med["py"] / med["bare"]
    print(f"ballcl.run overhead / CLI overhead: {ratio:.2f}x against the CLI alone, "
          f"{med['py'] / med['cli']:.2f}x against the CLI via files (the bound is 1.5x)")

    with ballcl.Context(device=a.device) as ctx:
        s, r0 = ctx.run(1, state=state)
        laps = []
        for _ in range(100):
            (s, r), w = timed(ctx.run, 1, state=s)
            laps.append(w)
            assert not r.context["uploaded"] and r.cache["first_launch_ms"] == 0
        assert ctx.builds == 1 and ctx.uploads == 1 and ctx.calls == 101
        print(f"Context.run          wall {median_range(laps)}  (100 calls: builds {ctx.builds}, "
              f"uploads {ctx.uploads}, warm-ups after the first 0)")
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
