"""Results travel between processes (docs/PYTHON.md, "Many processes"): a
Result pickles, copies and deep-copies to an equal one, field by field;
ballcl.run in a multiprocessing pool of 2 (spawn, forkserver, and fork from
a parent that has not used OpenCL) and in a concurrent.futures process pool
returns the states a run in the parent returns, bit for bit."""
import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ballcl
from conftest import mixed_state

STEPS = 7


def start(i):
    return mixed_state(np.random.default_rng(100 + i), 257)


def same_fields(a, b):
    assert isinstance(b, ballcl.Result) and b is not a
    assert a == b and not (a != b)
    assert list(a.as_dict()) == list(b.as_dict())
    for name in a.as_dict():
        assert getattr(a, name) == getattr(b, name), name
        assert type(getattr(a, name)) is type(getattr(b, name)), name


def test_result_pickles_and_copies(dev):
    _, r = ballcl.run(start(0), STEPS, device=dev)
    with ballcl.Context(device=dev) as ctx:
        _, rc = ctx.run(STEPS, state=start(1))
    for result in (r, rc):
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            same_fields(result, pickle.loads(pickle.dumps(result, protocol)))
        shallow, deep = copy.copy(result), copy.deepcopy(result)
        same_fields(result, shallow)
        same_fields(result, deep)
        assert shallow.timing is result.timing          # copy.copy shares the fields
        assert deep.timing is not result.timing         # deepcopy does not
        assert repr(deep) == repr(result)
    assert r != rc and r != r.as_dict()
    with pytest.raises(TypeError):
        hash(r)


# A user's script, as the multiprocessing documentation says to write one:
# the worker function importable, the pools under the __main__ guard (spawn
# and forkserver import the main module in each worker, so they run in a
# script of their own, not inside pytest). fork is safe only while the
# parent has made no OpenCL call: its pool runs first.
POOL_SCRIPT = textwrap.dedent("""
    import concurrent.futures, multiprocessing, sys
    import numpy as np, ballcl
    sys.path.insert(0, sys.argv[2])
    from conftest import mixed_state

    def job(i):
        state = mixed_state(np.random.default_rng(100 + i), 257)
        return ballcl.run(state, 7, device=sys.argv[1])

    if __name__ == "__main__":
        ways = {}
        with multiprocessing.get_context("fork").Pool(2) as pool:
            ways["fork"] = pool.map(job, range(4))
        for method in ("spawn", "forkserver"):
            with multiprocessing.get_context(method).Pool(2) as pool:
                ways[method] = pool.map(job, range(4))
        ctx = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
            ways["futures"] = list(ex.map(job, range(4)))
        here = [job(i) for i in range(4)]
        for way, there in ways.items():
            same = all(np.array_equal(a.view(np.uint32), b.view(np.uint32))
                       and r.validation["passed"] and r.balls == 257 and r.steps == 7
                       and isinstance(r, ballcl.Result)
                       for (a, _), (b, r) in zip(here, there))
            print(way, same)
""")


def test_pool_results_are_bit_identical(dev, tmp_path):
    script = tmp_path / "pool.py"
    script.write_text(POOL_SCRIPT)
    p = subprocess.run([sys.executable, str(script), dev, os.path.dirname(__file__)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.split("\n")[:4] == ["fork True", "spawn True", "forkserver True",
                                         "futures True"], p.stdout + p.stderr


def test_errors_pickle():
    with pytest.raises(ballcl.InputError) as info:
        ballcl.run(np.zeros((3, 3), np.float32), 1)
    e = pickle.loads(pickle.dumps(info.value))
    assert type(e) is ballcl.InputError and str(e) == str(info.value) and e.exit_code == 2
