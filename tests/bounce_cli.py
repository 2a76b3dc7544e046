"""Device and command-line tests of the bounce model and of run --snapshot:

- a validated run writes a PNG of the requested size (decoded by
  png_decode.py, independent of libpng) with the box outlined, a dot on the
  pixel of every ball of the --output state and nothing outside the box;
- the seed model (no box) gets a picture too;
- fused launches (--steps-per-launch K) give the same bits as single steps;
- bad parameters and snapshot options are one-line input errors (exit 2)
  naming the option, with nothing written.

Exits 77 (skipped) when there is no OpenCL device.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

import png_decode

BALLCL = os.environ["BALLCL"]
MARGIN = 4  # pixels around the outline, as src/files/snapshot.c draws it

failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


def ballcl(*args):
    return subprocess.run([BALLCL] + list(args), capture_output=True, text=True)


def ball_area(width, height, box):
    """The ball area (c0, r0, bw, bh) in pixels, by the rule docs/MODELS.md
    gives: the box's aspect kept inside the margins, centred."""
    x0, y0, x1, y1 = box
    fw, fh = x1 - x0, y1 - y0
    aw, ah = width - 2 * MARGIN, height - 2 * MARGIN
    if fw / fh >= aw / ah:
        bw, bh = aw, max(1, math.floor(aw * fh / fw + 0.5))
    else:
        bw, bh = max(1, math.floor(ah * fw / fh + 0.5)), ah
    return (width - bw) // 2, (height - bh) // 2, bw, bh


def test_snapshot(tmp):
    png, out = os.path.join(tmp, "s.png"), os.path.join(tmp, "s.npy")
    r = ballcl("run", "--model", "bounce", "-n", "3000", "-s", "120", "--box", "800,500",
               "--snapshot", png, "--snapshot-size", "330x240", "--output", out)
    check(r.returncode == 0 and "bit-identical" in r.stdout,
          f"bounce run with --snapshot validates (exit {r.returncode}) {r.stderr.strip()}")
    if r.returncode:
        return
    width, height, rows = png_decode.decode(open(png, "rb").read())
    check((width, height) == (330, 240), f"the PNG decodes, {width}x{height} as asked")
    state = np.load(out)
    c0, r0, bw, bh = ball_area(width, height, (0.0, 0.0, 800.0, 500.0))

    def pixel(c, r):
        return rows[r][3 * c:3 * c + 3]

    # Every ball's pixel is drawn (blue), nothing is drawn outside the box.
    missed = 0
    for x, y in state[:, :2].astype(np.float64):
        c = c0 + min(bw - 1, int(x / 800.0 * bw))
        r = r0 + min(bh - 1, int(y / 500.0 * bh))
        p = pixel(c, r)
        missed += not p[2] > p[0] + 40
    check(missed == 0, f"a dot on the pixel of each of {len(state)} balls ({missed} missed)")
    outside = sum(1 for r in range(height) for c in range(width)
                  if not (c0 - 1 <= c <= c0 + bw and r0 - 1 <= r <= r0 + bh)
                  and pixel(c, r) != b"\xff\xff\xff")
    check(outside == 0, f"nothing drawn outside the box ({outside} pixels)")
    corners = [pixel(c0 - 1, r0 - 1), pixel(c0 + bw, r0 + bh), pixel(c0 + bw // 2, r0 - 1)]
    check(all(p[0] == p[1] == p[2] and p[0] < 128 for p in corners), "the box is outlined")
    blank = sum(1 for r in range(r0, r0 + bh // 4) for c in range(c0, c0 + bw)
                if pixel(c, r) == b"\xff\xff\xff")
    check(blank > 0, "background left where there are no balls")


def test_seed_snapshot(tmp):
    png = os.path.join(tmp, "seed.png")
    r = ballcl("run", "-n", "500", "-s", "3", "--init", "random", "--snapshot", png)
    check(r.returncode == 0, f"seed run with --snapshot (exit {r.returncode}) {r.stderr.strip()}")
    if r.returncode == 0:
        width, height, _ = png_decode.decode(open(png, "rb").read())
        check(max(width, height) == 800, f"seed picture by default 800 on the longer side "
              f"({width}x{height})")


def test_fused(tmp):
    outs = []
    for k in ("1", "7", "64"):
        out = os.path.join(tmp, f"k{k}.npy")
        r = ballcl("run", "--model", "bounce", "--init", "random", "-n", "2000", "-s", "50",
                   "--steps-per-launch", k, "--output", out, "--restitution", "1")
        check(r.returncode == 0 and "bit-identical" in r.stdout,
              f"--steps-per-launch {k} validates (exit {r.returncode})")
        outs.append(open(out, "rb").read() if r.returncode == 0 else b"")
    check(outs[0] and outs[0] == outs[1] == outs[2], "K = 1, 7, 64 give the same bits")


def test_json_params():
    r = ballcl("run", "--model", "bounce", "-n", "100", "-s", "2", "--json", "--box", "640,480",
               "--dt", "0.01", "--gravity", "-9.8", "--restitution", "0.5")
    check(r.returncode == 0, f"--json run (exit {r.returncode})")
    if r.returncode == 0:
        j = json.loads(r.stdout)
        want = {"dt": np.float32("0.01"), "gravity": np.float32("-9.8"),
                "box": [np.float32(640), np.float32(480)], "restitution": np.float32("0.5")}
        p = j["params"]
        got = {k: [np.float32(x) for x in v] if isinstance(v, list) else np.float32(v)
               for k, v in p.items()} if isinstance(p, dict) else p
        check(j["model"] == "bounce" and got == want,
              f"--json reports the parameters by name {p}")
    r = ballcl("run", "-n", "100", "-s", "2", "--json")
    check(r.returncode == 0 and json.loads(r.stdout)["params"] == {},
          "--json: the seed model has no parameters, an empty object")


def test_input_errors(tmp):
    png, out = os.path.join(tmp, "bad.png"), os.path.join(tmp, "bad.npy")
    cases = [
        (["--box", "-800,600"], "--box"),
        (["--box", "800,0"], "--box"),
        (["--box", "800"], "--box"),
        (["--box", "nan,600"], "--box"),
        (["--box", "1e39,600"], "--box"),
        (["--dt", "0"], "--dt"),
        (["--dt", "-0.1"], "--dt"),
        (["--dt", "inf"], "--dt"),
        (["--gravity", "nan"], "--gravity"),
        (["--gravity", "1e33"], "g*dt"),
        (["--restitution", "-0.5"], "--restitution"),
        (["--restitution", "1.5"], "--restitution"),
        (["--restitution", "x"], "--restitution"),
        (["--snapshot-size", "10x10", "--snapshot", png], "--snapshot-size"),
        (["--snapshot-size", "640"], "--snapshot-size"),
        (["--snapshot-size", "640x480"], "--snapshot-size"),
        (["--snapshot", os.path.join(tmp, "no", "such", "s.png")], "--snapshot"),
    ]
    for args, words in cases:
        r = ballcl("run", "--model", "bounce", "-n", "10", "-s", "1", "--output", out, *args)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and words in lines[0]
              and not os.path.exists(out) and not os.path.exists(png),
              f"{' '.join(args)}: exit {r.returncode}, {r.stderr.strip()!r}")
    r = ballcl("run", "-n", "10", "-s", "1", "--gravity", "9.8")
    check(r.returncode == 2 and "does not apply to model 'seed'" in r.stderr,
          f"--gravity with the seed model: exit {r.returncode}, {r.stderr.strip()!r}")


def main():
    if ballcl("devices").returncode == 3:
        print("no OpenCL device: skipped")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        test_snapshot(tmp)
        test_seed_snapshot(tmp)
        test_fused(tmp)
        test_json_params()
        test_input_errors(tmp)
    print(f"{failures} failures" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
