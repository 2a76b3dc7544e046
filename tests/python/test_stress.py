"""Reference counts and memory over 10000 calls, threads calling at once,
the GIL released while the device works, and Ctrl-C in the middle of a run."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc

import numpy as np

import ballcl
from conftest import bits, mixed_state, seed_reference


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_no_leak_over_10000_calls(dev):
    s = mixed_state(np.random.default_rng(21), 64)
    bad = np.zeros((3, 3), np.float32)
    with ballcl.Context(device=dev) as ctx:
        ctx.run(1, state=s)
        for _ in range(200):   # warm every allocator first
            ctx.run(1)
            ctx.run(1, state=s)
        refs = sys.getrefcount(s)
        tracemalloc.start()
        snap0 = tracemalloc.take_snapshot()
        rss0 = rss_bytes()
        for i in range(10000):
            # Continue, upload, and fail: every path of a call.
            ctx.run(1, state=s if i % 3 == 0 else None, validate=(i % 100 == 0))
            try:
                ballcl.run(bad, 1, device=dev)
            except ballcl.InputError:
                pass
        grown = rss_bytes() - rss0
        snap1 = tracemalloc.take_snapshot()
        tracemalloc.stop()
        assert sys.getrefcount(s) == refs
        py_grown = sum(d.size_diff for d in snap1.compare_to(snap0, "filename"))
        assert py_grown < 256 * 1024, f"Python allocations grew by {py_grown} bytes"
        assert grown < 8 << 20, f"RSS grew by {grown} bytes over 10000 calls"
        assert ctx.calls == 10401


def test_no_leak_over_ballcl_run_calls(dev):
    """ballcl.run makes a context per call (about 50 ms on a loaded PoCL
    machine), so 300 calls here; the 10000-call test covers the rest."""
    s = mixed_state(np.random.default_rng(22), 64)
    for _ in range(30):
        ballcl.run(s, 1, device=dev)
    refs = sys.getrefcount(s)
    rss0 = rss_bytes()
    for _ in range(300):
        out, r = ballcl.run(s, 1, device=dev)
    del out, r
    assert sys.getrefcount(s) == refs
    assert rss_bytes() - rss0 < 8 << 20


def test_threads_in_parallel(dev):
    """Separate ballcl.run calls at once (each on its own context), and
    threads sharing one Context (calls take turns)."""
    errors, results = [], {}

    def worker(i):
        try:
            s = mixed_state(np.random.default_rng(100 + i), 3000 + i)
            for j in range(3):
                out, r = ballcl.run(s, 50 + j, device=dev)
                results[(i, j)] = np.array_equal(bits(out), bits(seed_reference(s, 50 + j)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 12 and all(results.values())

    s = mixed_state(np.random.default_rng(7), 2000)
    with ballcl.Context(device=dev) as ctx:
        ctx.run(0, state=s)

        def stepper():
            try:
                for _ in range(10):
                    ctx.run(3)
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
        threads = [threading.Thread(target=stepper) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert np.array_equal(bits(ctx.state), bits(seed_reference(s, 120)))
        assert ctx.uploads == 1 and ctx.calls == 41


def test_gil_released_while_the_device_works(dev):
    s = mixed_state(np.random.default_rng(8), 100000)
    ticks = 0
    done = threading.Event()

    def run():
        ballcl.run(s, 20000, device=dev, validate=False)
        done.set()
    t = threading.Thread(target=run)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    # Had the call held the GIL, this loop would have ticked once or twice.
    assert ticks > 20


INTERRUPT_SCRIPT = textwrap.dedent("""
    import sys, time, numpy as np, ballcl
    dev, which = sys.argv[1], sys.argv[2]
    s = np.ones((200000, 4), np.float32)
    ctx = ballcl.Context(device=dev)
    ctx.run(1, state=s)
    print("running", flush=True)
    t0 = time.monotonic()
    try:
        if which == "run":
            ballcl.run(s, 10**9, device=dev)
        else:
            ctx.run(10**9)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.monotonic() - t0:.2f} s", flush=True)
    # Still usable: the context continues from its last completed state.
    out, r = ctx.run(2)
    print("after", r.validation["passed"], r.context["uploaded"], float(out[0, 0]), flush=True)
    ballcl.run(s, 1, device=dev)
    print("done", flush=True)
""")


def interrupt(dev, which):
    p = subprocess.Popen([sys.executable, "-c", INTERRUPT_SCRIPT, dev, which],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "running"
    time.sleep(1.5)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err, sent


def test_interrupt_run(dev):
    rc, out, err, _ = interrupt(dev, "run")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("KeyboardInterrupt after"), out + err
    assert lines[1] == "after True False 7.0" and lines[2] == "done", out


def test_interrupt_context(dev):
    rc, out, err, _ = interrupt(dev, "context")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("KeyboardInterrupt after"), out + err
    # The device's state was abandoned mid-run: the last completed state
    # (one step) is uploaded again and continued.
    assert lines[1] == "after True True 7.0" and lines[2] == "done", out
