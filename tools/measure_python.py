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
    cli_over, py_over, cli_wall, py_wall, bare_wall, bare_over = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
        args = [a.cli, "run", "--input", inp, "--output", out, "-s", "1", "--json"]
        bare = [a.cli, "run", "--init", "random", "-n", str(a.balls), "-s", "1", "--json"]
        if a.device:
            args += ["-d", a.device]
            bare += ["-d", a.device]
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
            cli_wall.append(w)
            cli_over.append(w - device_ms(p))
            p, w = timed(subprocess.run, bare, check=True, capture_output=True, text=True)
            bare_wall.append(w)
            bare_over.append(w - device_ms(p))
            (new, r), w = timed(ballcl.run, state, 1, device=a.device)
            py_wall.append(w)
            py_over.append(w - r.timing["device_ms"])
            assert np.array_equal(new.view(np.uint32), back.view(np.uint32))
    d = r.device
    print(f"python_overhead: {a.balls} balls x 1 step on '{d['name']}' ({d['platform']}, "
          f"{d['selector']}), {a.repeats} interleaved repeats, median (min..max)")
    print(f"host: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, load {os.getloadavg()[0]:.1f}")
    print(f"CLI via .npy files   wall {median_range(cli_wall)}  beyond device {median_range(cli_over)}")
    print(f"CLI alone (--init)   wall {median_range(bare_wall)}  beyond device {median_range(bare_over)}")
    print(f"ballcl.run           wall {median_range(py_wall)}  beyond device {median_range(py_over)}")
    ratio = statistics.median(py_over) / statistics.median(bare_over)
    print(f"ballcl.run overhead / CLI overhead: {ratio:.2f}x against the CLI alone, "
          f"{statistics.median(py_over) / statistics.median(cli_over):.2f}x against the CLI via "
          f"files (the bound is 1.5x)")

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
