# Type stubs of the extension ballcl._core, which ballcl/__init__.py
# re-exports; the 'mypy' test checks them with examples/*.py.
import os
from types import TracebackType
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Type, Union,
                    final)

import numpy as np
import numpy.typing as npt

from . import Result

__version__: str
version: str  # the same as __version__, kept for programs written before it

# A model parameter: one number, or a sequence of as many as the parameter has.
_ParamValue = Union[float, int, Sequence[float]]
# The work-group size: 'auto', 'driver', 'tuned' or a size.
_Local = Union[str, int, None]

class Error(Exception):
    """Any error ballcl reports; exit_code is the CLI's exit status for it."""
    exit_code: int
    detail: Optional[str]

class DeviceError(Error):
    """An OpenCL or other runtime failure (exit status 3)."""
    call: Optional[str]    # the OpenCL function that failed, e.g. 'clFinish'
    status: Optional[str]  # its status, e.g. 'CL_OUT_OF_RESOURCES'

class InputError(Error, ValueError):
    """A bad argument or input (exit status 2)."""

class MismatchError(Error):
    """The device's result differs from the C reference (exit status 1)."""
    result: Result
    state: npt.NDArray[np.float32]

# A Model's NumPy reference: step(state, *params) -> new state.
_Step = Callable[..., npt.NDArray[np.float32]]

@final
class Model:
    """A model file: OpenCL C text or a .cl file, with an optional NumPy reference."""
    def __init__(self, source: Union[str, "os.PathLike[str]"], reference: Optional[_Step] = ...,
                 *, name: Optional[str] = ...,
                 reference_limit_s: Optional[float] = ...) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def params(self) -> Dict[str, float]: ...
    @property
    def sha256(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def path(self) -> Optional[str]: ...
    @property
    def reference(self) -> Optional[_Step]: ...
    @property
    def reference_limit_s(self) -> Optional[float]: ...

_ModelArg = Union[str, Model, None]

def devices() -> List[Dict[str, Any]]: ...

def run(state: npt.NDArray[np.float32], steps: int, *, device: Optional[str] = ...,
        model: _ModelArg = ..., params: Optional[Mapping[str, _ParamValue]] = ...,
        steps_per_launch: Optional[int] = ..., local: _Local = ...,
        validate: bool = ..., out: Optional[npt.NDArray[np.float32]] = ...,
        cache: bool = ...,
        progress: Union[bool, Callable[[int, int], object]] = ...
        ) -> Tuple[npt.NDArray[np.float32], Result]: ...

def cached() -> List[Dict[str, Any]]: ...

def close() -> None: ...

def survey(device: Optional[str] = ..., *, quick: bool = ...) -> Dict[str, Any]: ...

def _close_at_exit() -> None: ...

def _set_result_type(type: Type[Result]) -> None: ...

def _result_fields(tree: object, /) -> Dict[str, Any]: ...

def _cli(argv: List[str], /) -> int: ...

class Context:
    def __init__(self, device: Optional[str] = ..., model: _ModelArg = ...,
                 params: Optional[Mapping[str, _ParamValue]] = ...) -> None: ...
    def run(self, steps: int, *, state: Optional[npt.NDArray[np.float32]] = ...,
            steps_per_launch: Optional[int] = ..., local: _Local = ...,
            validate: bool = ..., out: Optional[npt.NDArray[np.float32]] = ...
            ) -> Tuple[npt.NDArray[np.float32], Result]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Context": ...
    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType], /) -> None: ...
    @property
    def state(self) -> Optional[npt.NDArray[np.float32]]: ...
    @property
    def device(self) -> Optional[Dict[str, Any]]: ...
    @property
    def calls(self) -> int: ...
    @property
    def builds(self) -> int: ...
    @property
    def uploads(self) -> int: ...
    @property
    def closed(self) -> bool: ...
