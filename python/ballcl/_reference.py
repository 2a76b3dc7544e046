"""A ballcl.Model's NumPy reference, run for a validation (ballcl/model.c).

The user's step(state, *params) goes `steps` times in a child process
forked for it, so that a reference that crashes the interpreter (a
segfault in an extension, os.abort) or never returns is an error of the
call, not the end of the program: the child writes the final state into
memory shared with this process and says how it ended through a pipe, and
it is killed at the time limit. Fork, not spawn: the step may be a lambda or
a closure, and a script needs no `if __name__ == "__main__"` guard. The
child only runs NumPy and the step (ballcl refuses OpenCL in it).
"""
import mmap
import multiprocessing
import os
import signal
import threading
import time
import traceback
import warnings
from typing import Any, Callable, Optional, Tuple

import numpy as np
import numpy.typing as npt

from ._core import InputError

State = npt.NDArray[np.float32]

# The default time limit: generous for NumPy's pace on one core.
LIMIT_BASE_S = 60.0
LIMIT_BALL_STEPS_PER_S = 1e7

# catch_warnings changes the process's filters: one thread at a time, or
# two validations at once could leave the "ignore" behind.
_start_lock = threading.Lock()


def _error(text: str) -> InputError:
    """The InputError of text, as the C code makes them (exit status 2)."""
    e = InputError(text)
    e.exit_code = 2
    e.detail = None
    return e


def _where(exc: BaseException) -> str:
    """file:line of the innermost frame of exc's traceback, or ''."""
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return ""
    f = tb[-1]
    return f" ({os.path.basename(f.filename)}:{f.lineno} in {f.name})"


def _checked(s: Any, n: int, step: int) -> State:
    """s when it is an (n, 4) float32 array; else ValueError saying what it was."""
    if isinstance(s, np.ndarray) and s.dtype == np.float32 and s.shape == (n, 4):
        return s
    got = (f"an array of shape {s.shape} and dtype {s.dtype}" if isinstance(s, np.ndarray)
           else f"a {type(s).__name__}")
    raise _Shape(f"step {step} returned {got}: expected an (N, 4) float32 array, N = {n} "
                 f"(write the step in float32: numpy.float32 scalars, arrays of dtype float32)")


class _Shape(Exception):
    """The step returned something other than the state."""


def _child(fn: Callable[..., Any], state: State, steps: int, params: Tuple[Any, ...],
           out: State, conn: Any) -> None:
    s = state
    n = state.shape[0]
    done = 0
    try:
        for done in range(1, steps + 1):
            s = _checked(fn(s, *params), n, done)
        out[...] = s
        conn.send(None)
    except _Shape as e:
        conn.send(f"the NumPy reference's {e}")
    except BaseException as e:  # noqa: B902 (SystemExit and all: one line to the parent)
        text = " ".join(f"{type(e).__name__}: {e}".split())
        conn.send(f"the NumPy reference raised at step {done} of {steps}: {text}{_where(e)}")


def _ended(p: Any) -> str:
    """How a child that sent nothing ended."""
    code = p.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the NumPy reference crashed ({name})"
    return f"the NumPy reference's process exited with status {code} without a result"


def _wait(conn: Any, limit_s: float) -> bool:
    """Whether conn has something (or its end closed) within limit_s. In
    short slices: a signal taken by one of OpenCL's threads sets Python's
    flag but interrupts no wait of this one, so Ctrl-C is seen between them."""
    end = time.monotonic() + limit_s
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return False
        if conn.poll(min(left, 0.1)):
            return True


def run(fn: Callable[..., Any], state: State, steps: int, params: Tuple[float, ...],
        limit_s: Optional[float], name: str) -> State:
    """fn applied steps times to state (an (N, 4) float32 array, left unchanged),
    with the params as numpy.float32 scalars; InputError naming model `name`
    when fn raises, crashes, returns another array or outlasts limit_s (None:
    LIMIT_BASE_S plus a second per LIMIT_BALL_STEPS_PER_S ball-steps)."""
    n = state.shape[0]
    if limit_s is None:
        limit_s = LIMIT_BASE_S + n * steps / LIMIT_BALL_STEPS_PER_S
    f32 = tuple(np.float32(p) for p in params)
    # Anonymous shared memory: what the child writes, this process reads.
    buf = mmap.mmap(-1, state.nbytes)
    out = np.frombuffer(buf, np.float32).reshape(n, 4)
    if steps == 0:
        out[...] = state
        return out
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(fn, state, steps, f32, out, send), daemon=True,
                    name=f"ballcl reference of {name}")
    try:
        with _start_lock, warnings.catch_warnings():
            # Python 3.12 warns of fork in a process with threads (OpenCL's):
            # the child touches no lock of theirs, and the limit bounds a hang.
            warnings.simplefilter("ignore", DeprecationWarning)
            p.start()
        send.close()
        msg: Optional[str] = None
        said = False
        if _wait(recv, limit_s):
            try:
                msg = recv.recv()
                said = True
            except EOFError:  # it ended without a word: its exit status says how
                pass
        else:
            raise _error(f"model '{name}': the NumPy reference ran past its time limit of "
                         f"{limit_s:g} s ({steps} steps of {n} balls): make it faster, or "
                         f"give ballcl.Model(reference_limit_s=...)")
        p.join()
        if not said:
            msg = _ended(p)
        if msg is not None:
            raise _error(f"model '{name}': {msg}")
        return out
    finally:
        if p.pid is not None:  # started
            if p.is_alive():
                p.kill()
            p.join()
        recv.close()
        send.close()
