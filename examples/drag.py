"""The NumPy step of examples/drag.cl: balls (x, y, vx, vy) under gravity
along +y with linear drag, one step of every ball at once.

It is the reference the Python module validates a model file against
(docs/PYTHON.md, docs/MODELS.md): step(state, dt, gravity, drag) takes the
(N, 4) float32 state and the parameters in the order the file declares
them, and returns the new state. It must give the kernel's bits, so every
operation is one float32 operation in the kernel's order: the state is
float32 and the parameters are made numpy.float32, so that NumPy never
computes in float64 (which would round differently), and a product of
three, drag * vx * dt, is (drag * vx) * dt as in C.
"""

import numpy as np
import numpy.typing as npt


def step(state: npt.NDArray[np.float32], dt: float, gravity: float,
         drag: float) -> npt.NDArray[np.float32]:
    """One step of examples/drag.cl on the (N, 4) float32 array state; a new
    array."""
    t, g, d = np.float32(dt), np.float32(gravity), np.float32(drag)
    s = np.array(state, dtype=np.float32, copy=True)
    s[:, 2] = s[:, 2] - d * s[:, 2] * t
    s[:, 3] = s[:, 3] + (g - d * s[:, 3]) * t
    s[:, 0] = s[:, 0] + s[:, 2] * t
    s[:, 1] = s[:, 1] + s[:, 3] * t
    return s
