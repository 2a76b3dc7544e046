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
from typing import Any as _Any, Dict as _Dict, List as _List

from . import _core
from ._core import (Context, DeviceError, Error, InputError, MismatchError, __version__,
                    cached, close, devices, run, survey, version)

__all__ = ["Context", "DeviceError", "Error", "InputError", "MismatchError", "Result",
           "__version__", "cached", "close", "devices", "run", "survey", "version"]


class Result:
    """What a run did: the fields of `ballcl run --json` as attributes (device,
    model, params, balls, steps, buffers, launch, cache, first_launch_ms,
    timing, validation, devices; context for a Context call). as_dict() gives
    them all."""

    __slots__ = ("_fields",)

    def __init__(self, fields: _Dict[str, _Any]) -> None:
        self._fields = fields

    def __getattr__(self, name: str) -> _Any:
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"Result has no field '{name}'") from None

    def __getitem__(self, name: str) -> _Any:
        return self._fields[name]

    def __dir__(self) -> _List[str]:
        return list(self._fields)

    def as_dict(self) -> _Dict[str, _Any]:
        """A deep copy of every field, as `ballcl run --json` would print them."""
        import copy
        return copy.deepcopy(self._fields)

    def __repr__(self) -> str:
        f = self._fields
        t, v = f["timing"], f["validation"]
        check = ("passed" if v["passed"] else "FAILED") if v["performed"] else "skipped"
        return (f"<ballcl.Result {f['model']}: {f['balls']} balls x "
                f"{f['steps']} steps on {f['device']['name']!r}, "
                f"{t['us_per_step']:.3f} us/step device, validation {check}>")


_core._set_result_type(Result)
