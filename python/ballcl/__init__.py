"""ballcl: the ball update of ballcl on NumPy arrays, on any OpenCL device.

    import numpy as np, ballcl
    state = np.zeros((100000, 4), np.float32)
    new, result = ballcl.run(state, 1000)          # result: the `ballcl run --json` fields
    with ballcl.Context(device="cpu") as ctx:      # device, program and state kept
        s, r = ctx.run(10, state=state)            # uploads state
        s, r = ctx.run(10)                         # continues on the device: no upload

docs/PYTHON.md has the whole interface. The kernels are found beside the
extension (ballcl/cl); BALLCL_KERNEL_DIR, when set, is used instead.
Importing the package changes nothing in os.environ.
"""
from typing import (Any as _Any, Dict as _Dict, List as _List, Optional as _Optional,
                    Tuple as _Tuple, TypeVar as _TypeVar)

import atexit as _atexit
import sys as _sys
import typing as _typing


def _import_error(e: ImportError) -> ImportError:
    """The extension did not load: say which interpreter it was built for
    (another one fails deep inside NumPy's import or finds no _core)."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    this = f"{_sys.implementation.name} {_sys.version_info.major}.{_sys.version_info.minor}"
    try:
        with open(os.path.join(here, "build-python.txt"), encoding="utf-8") as f:
            built = f.read().strip()  # "cpython 3.11 (/usr/bin/python3)"
    except OSError:
        built = ""
    # The build's interpreter, unless it is this one, or one of this version
    # that is gone (the isolated environment pip built a wheel in).
    path = built.partition(" (")[2][:-1]
    same = built.startswith(this + " (") and (
        not os.path.exists(path) or os.path.samefile(path, _sys.executable))
    if not built or same:
        return ImportError(f"ballcl: cannot load its extension ballcl._core from {here}: {e}")
    return ImportError(f"ballcl: the package in {here} was built for {built}, with NumPy; "
                       f"this is {this} ({_sys.executable}): run it with that interpreter, or "
                       f"pip install ballcl into this one (its extension did not load: {e})")


try:
    from . import _core
except ImportError as _e:
    raise _import_error(_e) from _e
from ._core import (Context, DeviceError, Error, InputError, MismatchError, Model, __version__,
                    cached, close, devices, run, survey, version)

__all__ = ["Context", "DeviceError", "Error", "InputError", "MismatchError", "Model", "Result",
           "__version__", "cached", "close", "devices", "run", "survey", "version"]


_T = _TypeVar("_T")


class _Field(_typing.Generic[_T]):
    """A field every Result has, as a typed attribute."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: _Optional["Result"], owner: object = None) -> _T:
        if obj is None:  # the class's attribute (help(), inspect)
            return self  # type: ignore[return-value]
        value: _T = obj._fields[self.name]
        return value


class Result:
    """What a run did: the fields of `ballcl run --json` (docs/PYTHON.md,
    "result"), as attributes (``result.timing["us_per_step"]``) or items
    (``result["timing"]``); as_dict() gives them all.

    ballcl.run and Context.run return one; MismatchError carries one. A Result
    pickles, copies and deep-copies to an equal one (== compares every field),
    so that it comes back from a multiprocessing worker or a
    concurrent.futures process pool.

    Parameters:
        fields: the fields by name (a dict the Result keeps, no copy), or the
            module's tree of them, converted to that dict when first asked
            (a frame loop that never looks pays for no dicts).

    Raises:
        AttributeError (for an attribute) or KeyError (for an item): a field
        this Result does not have (``aggregate`` exists only for a run on
        several devices).
    """

    __slots__ = ("_made", "_tree")
    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __init__(self, fields: _Any) -> None:
        made = isinstance(fields, dict)
        self._made: _Optional[_Dict[str, _Any]] = fields if made else None
        self._tree = None if made else fields

    @property
    def _fields(self) -> _Dict[str, _Any]:
        if self._made is None:
            self._made = _core._result_fields(self._tree)
            self._tree = None
        return self._made

    def __getattr__(self, name: str) -> _Any:
        # A Result made by pickle or copy has no _made yet while its state
        # is set: looking for it here was an endless recursion.
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"Result has no field '{name}'") from None

    def __getitem__(self, name: str) -> _Any:
        return self._fields[name]

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def __dir__(self) -> _List[str]:
        return sorted(set(self._fields) | {"as_dict"})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return self._fields == other._fields

    def __reduce__(self) -> _Tuple[_Any, _Tuple[_Dict[str, _Any]]]:
        # pickle, copy and deepcopy: a new Result over the fields.
        return (Result, (self._fields,))

    def as_dict(self) -> _Dict[str, _Any]:
        """A deep copy of every field, as `ballcl run --json` would print them.

        Returns:
            dict: field name to value (dicts, lists, str, int, float, bool,
            None), a new object the caller may change.
        """
        import copy
        return copy.deepcopy(self._fields)

    # The fields every Result has, typed (docs/PYTHON.md lists their keys).
    device = _Field[_Dict[str, _Any]]("The device: name, platform, selector, type, driver.")
    model = _Field[str]("The model's name: 'seed', 'bounce' or a ballcl.Model's name.")
    model_file = _Field[_Optional[_Dict[str, _Any]]](
        "A ballcl.Model's path (None for text) and sha256; None for a built-in model.")
    params = _Field[_Dict[str, _Any]]("The model's parameters by name ({} for the seed).")
    balls = _Field[int]("The number of balls, N.")
    steps = _Field[int]("The steps applied.")
    buffers = _Field[int]("The device buffers the run used.")
    launch = _Field[_Dict[str, _Any]](
        "The launch plan: local, global, how, why, variant, steps_per_launch, ...")
    cache = _Field[_Dict[str, _Any]](
        "The program's binary cache: hit, program_ms, note, stored, ...")
    tuned = _Field[_Dict[str, _Any]]("The record of `ballcl tune`: stored, used, note.")
    timing = _Field[_Dict[str, _Any]](
        "device_ms, wall_ms, us_per_step, wall_us_per_step, ball_steps_per_s, ...")
    validation = _Field[_Dict[str, _Any]](
        "performed, passed, compared, mismatches, max_ulp, first_mismatches, ...")
    devices = _Field[_List[_Dict[str, _Any]]](
        "One entry per device of the run: its share, rates, launch, validation.")
    context = _Field[_Optional[_Dict[str, _Any]]](
        "None for ballcl.run; for Context.run: uploaded, calls, builds, uploads.")
    readback = _Field[_Dict[str, _Any]]("memory ('pinned' or 'pageable') and plan_reused.")

    @property
    def init(self) -> str:
        """Where the state came from: always the caller's array, 'array' (no
        field: the CLI's key, docs/PYTHON.md)."""
        return "array"

    def __repr__(self) -> str:
        f = self._fields
        t, v = f["timing"], f["validation"]
        check = ("passed" if v["passed"] else "FAILED") if v["performed"] else "skipped"
        return (f"<ballcl.Result {f['model']}: {f['balls']} balls x "
                f"{f['steps']} steps on {f['device']['name']!r}, "
                f"{t['us_per_step']:.3f} us/step device, validation {check}>")


_core._set_result_type(Result)
_atexit.register(_core._close_at_exit)  # ballcl.close(), not waiting for daemon threads
