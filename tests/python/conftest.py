"""Shared fixtures of the module's tests: the device to test on and NumPy
references of the models."""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/: bounce_reference.py

import ballcl  # noqa: E402


@pytest.fixture(scope="session")
def dev():
    """BALLCL_TEST_DEVICE, else the first CPU (PoCL in CI), else the first device."""
    sel = os.environ.get("BALLCL_TEST_DEVICE")
    if sel:
        return sel
    devs = ballcl.devices()
    cpus = [d for d in devs if d["type"] == "cpu"]
    return cpus[0]["selector"] if cpus else devs[0]["selector"]


def mixed_state(rng, n):
    """Finite float32 values of mixed sign and magnitude, w never zero, so a
    kernel that drops a term or reorders the update gives other bits."""
    sign = rng.choice(np.array([-1, 1], np.float32), size=(n, 4))
    mag = np.exp2(rng.integers(-6, 15, size=(n, 4))).astype(np.float32)
    frac = rng.uniform(1, 2, size=(n, 4)).astype(np.float32)
    return (sign * mag * frac).astype(np.float32)


def seed_reference(s, steps):
    """docs/MODELS.md's seed update in float32: x += z; y += w; z += w."""
    x, y, z, w = (s[:, c].copy() for c in range(4))
    for _ in range(steps):
        x = x + z
        y = y + w
        z = z + w
    return np.stack([x, y, z, w], axis=1)


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
