"""ballcl: the ball update of ballcl on NumPy arrays, on any OpenCL device.

    import numpy as np, ballcl
    state = np.zeros((100000, 4), np.float32)
    new, result = ballcl.run(state, 1000)          # result: the `ballcl run --json` fields
    with ballcl.Context(device="cpu") as ctx:      # device, program and state kept
        s, r = ctx.run(10, state)                  # uploads state
        s, r = ctx.run(10)                         # continues on the device: no upload

docs/PYTHON.md has the whole interface.
"""
import os as _os

# In the build tree the kernels are in build/cl, two folders above this
# package (build/python/ballcl); installed, the library finds them in its
# data folder. The public API has no setting for the kernel folder, so the
# build tree's is passed the way the CLI's tests pass it.
_build_cl = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", "..", "cl")
if not _os.environ.get("BALLCL_KERNEL_DIR") and _os.path.isfile(_os.path.join(_build_cl, "seed.cl")):
    _os.environ["BALLCL_KERNEL_DIR"] = _os.path.normpath(_build_cl)

from ._core import (Context, DeviceError, Error, InputError, MismatchError,  # noqa: E402
                    cached, close, devices, run, version)

__all__ = ["Context", "DeviceError", "Error", "InputError", "MismatchError", "Result",
           "cached", "close", "devices", "run", "version"]


class Result:
    """What a run did: the fields of `ballcl run --json` as attributes (device,
    model, params, balls, steps, buffers, launch, cache, first_launch_ms,
    timing, validation; context for a Context call). as_dict() gives them all."""

    __slots__ = ("_fields",)

    def __init__(self, fields):
        self._fields = fields

    def __getattr__(self, name):
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"Result has no field '{name}'") from None

    def __getitem__(self, name):
        return self._fields[name]

    def __dir__(self):
        return list(self._fields)

    def as_dict(self):
        """A deep copy of every field, as `ballcl run --json` would print them."""
        import copy
        return copy.deepcopy(self._fields)

    def __repr__(self):
        t, v = self._fields["timing"], self._fields["validation"]
        check = ("passed" if v["passed"] else "FAILED") if v["performed"] else "skipped"
        return (f"<ballcl.Result {self._fields['model']}: {self._fields['balls']} balls x "
                f"{self._fields['steps']} steps on {self._fields['device']['name']!r}, "
                f"{t['us_per_step']:.3f} us/step device, validation {check}>")


from . import _core  # noqa: E402

_core._set_result_type(Result)
