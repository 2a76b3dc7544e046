"""An independent NumPy implementation of the bounce model (docs/MODELS.md),
and of the seed update the tests check against.

Written from the spec, not from the C or OpenCL code. Every value is a
float32 array or an np.float32 scalar, so every operation is one rounded
float32 operation, as the spec asks (a Python float would promote to float64).
"""
import numpy as np

F32 = np.float32


def params(dt="0.016666668", gravity="980", box="800,600", restitution="0.9"):
    """Parameter texts as the command line takes them, parsed to float32."""
    w, h = box.split(",")
    return F32(dt), F32(gravity), F32(w), F32(h), F32(restitution)


def reflect(m, pos, mirrored, vel, e):
    """Where m (past a wall): the mirrored position, the velocity reversed
    and scaled by the restitution e."""
    return np.where(m, mirrored, pos), np.where(m, (-vel) * e, vel)


def step(s, p):
    """One step of docs/MODELS.md on an (N, 4) float32 array; returns a new array."""
    dt, g, w, h, e = p
    x, y, vx, vy = (s[:, c].copy() for c in range(4))
    two = F32(2)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        vy = vy + g * dt
        x = x + vx * dt
        y = y + vy * dt
        x, vx = reflect(x < 0, x, -x, vx, e)
        x, vx = reflect(x > w, x, (two * w) - x, vx, e)
        y, vy = reflect(y < 0, y, -y, vy, e)
        y, vy = reflect(y > h, y, (two * h) - y, vy, e)
        x = np.where(x < 0, F32(0), x)
        x = np.where(x > w, w, x)
        y = np.where(y < 0, F32(0), y)
        y = np.where(y > h, h, y)
    out = np.stack([x, y, vx, vy], axis=1)
    assert out.dtype == np.float32
    return out


def seed_reference(s, steps):
    """docs/MODELS.md's seed update in float32: x += z (the old z); y += w;
    z += w."""
    assert s.dtype == np.float32
    x, y, z, w = (s[:, c].copy() for c in range(4))
    for _ in range(steps):
        x = x + z
        y = y + w
        z = z + w
    assert x.dtype == y.dtype == z.dtype == np.float32
    return np.stack([x, y, z, w], axis=1)


def run(s, p, steps):
    for _ in range(steps):
        s = step(s, p)
    return s


def any_floats(rng, n):
    """Finite float32 values of every sign and magnitude, denormals included:
    random sign, exponent field 0..254 and mantissa, assembled from bits."""
    sign = rng.integers(0, 2, n, dtype=np.uint32) << 31
    exp = rng.integers(0, 255, n, dtype=np.uint32) << 23
    mant = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    return (sign | exp | mant).view(np.float32)


def random_state(rng, n, w, h):
    """Positions inside and outside the box, velocities of both signs and all
    magnitudes, plus the special values a wall test needs."""
    s = np.empty((n, 4), dtype=np.float32)
    k = n // 3
    # A third uniform in the box, moving at ordinary speeds.
    s[:k, 0] = rng.uniform(0, 1, k).astype(np.float32) * w
    s[:k, 1] = rng.uniform(0, 1, k).astype(np.float32) * h
    s[:k, 2:] = rng.uniform(-2000, 2000, (k, 2)).astype(np.float32)
    # The rest anywhere, at any speed.
    s[k:, :] = any_floats(rng, (n - k) * 4).reshape(n - k, 4)
    special = np.array([0.0, -0.0, w, h, -w, 2 * w, np.finfo(np.float32).max,
                        -np.finfo(np.float32).max, np.finfo(np.float32).tiny, 1e-45],
                       dtype=np.float32)
    for c in range(4):
        idx = rng.integers(k, n, 40)
        s[idx, c] = rng.choice(special, 40)
    # Signed zeros and balls on the walls, whole rows at once: a clamp or a
    # reflection done with fmin/fmax or min/max instructions gets their sign
    # wrong.
    edges = np.array([[-0.0, -0.0, -0.0, -0.0], [0.0, -0.0, -0.0, 0.0], [-0.0, 0.0, 0.0, -0.0],
                      [w, h, 0.0, 0.0], [w, h, -0.0, -0.0], [-0.0, h, -0.0, 0.0],
                      [w, -0.0, 0.0, -0.0], [0.0, 0.0, -1e-45, -1e-45]], dtype=np.float32)
    s[k:k + len(edges)] = edges
    assert np.isfinite(s).all()
    return s
