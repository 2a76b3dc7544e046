#!/usr/bin/env python3
"""Runs one test on one OpenCL implementation (docs/IMPLEMENTATIONS.md).

    with_impl.py IMPL PROGRAM [ARGS...]

IMPL is pocl, rusticl or oclgrind. The environment is set so that the
implementation's device is the one the test uses, whatever the test does:

  * rusticl: RUSTICL_ENABLE=llvmpipe (Mesa's rusticl lists no device
    without it; llvmpipe is its CPU driver);
  * oclgrind: OCL_ICD_VENDORS is a folder holding only an ICD file for
    Oclgrind's runtime (the Debian package installs none), so Oclgrind is
    the only platform, as a user of its ICD would have it;
  * then BALLCL_DEVICE and BALLCL_TEST_DEVICE are the P:D selector of the
    implementation's first device, so both ballcl's default and the tests'
    own choice land on it.

PROGRAM is run with Python when it ends in .py, else directly; its exit
status is this script's. Exit 77 (skipped) when the implementation is not
installed or lists no device, so a machine without it never reports its
tests as passed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
# The platform name each implementation reports (CL_PLATFORM_NAME).
PLATFORMS = {
    "pocl": "Portable Computing Language",
    "rusticl": "rusticl",
    "oclgrind": "Oclgrind",
}
OCLGRIND_ICD = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"


def environment(impl, tmp):
    env = dict(os.environ)
    if impl == "rusticl":
        env["RUSTICL_ENABLE"] = "llvmpipe"
        # Mesa prints a line on stderr when it cannot create its shader
        # cache folder (a test running as user nobody has no home): a folder
        # anyone may write keeps stderr to ballcl's own lines.
        shader = os.path.join(tmp, "mesa-shader-cache")
        os.mkdir(shader)
        os.chmod(tmp, 0o755)
        os.chmod(shader, 0o1777)
        env["MESA_SHADER_CACHE_DIR"] = shader
    elif impl == "oclgrind":
        if not os.path.exists(OCLGRIND_ICD):
            print(f"skip: Oclgrind's ICD runtime {OCLGRIND_ICD} is not installed")
            sys.exit(SKIP)
        vendors = os.path.join(tmp, "vendors")
        os.mkdir(vendors)
        with open(os.path.join(vendors, "oclgrind.icd"), "w") as f:
            f.write(OCLGRIND_ICD + "\n")
        env["OCL_ICD_VENDORS"] = vendors
        env.pop("OCL_ICD_FILENAMES", None)
    return env


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in PLATFORMS:
        print(f"usage: with_impl.py {'|'.join(PLATFORMS)} PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    impl, program, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    tmp = tempfile.mkdtemp(prefix=f"ballcl-{impl}.")
    try:
        env = environment(impl, tmp)
        p = subprocess.run([os.environ["BALLCL"], "devices", "--json"], env=env,
                           capture_output=True, text=True, timeout=120)
        if p.returncode == 3:
            print(f"skip: no OpenCL device at all: {p.stderr.strip()}")
            return SKIP
        if p.returncode != 0:
            print(f"'ballcl devices --json' failed (exit {p.returncode}): {p.stderr}")
            return 1
        devs = [d for d in json.loads(p.stdout)["devices"] if d["platform"] == PLATFORMS[impl]]
        if not devs:
            print(f"skip: {impl} lists no device (platforms: "
                  f"{sorted({d['platform'] for d in json.loads(p.stdout)['devices']})})")
            return SKIP
        env["BALLCL_DEVICE"] = env["BALLCL_TEST_DEVICE"] = devs[0]["selector"]
        print(f"implementation {impl}: device {devs[0]['selector']} {devs[0]['name']}", flush=True)
        cmd = ([sys.executable, program] if program.endswith(".py") else [program]) + args
        return subprocess.run(cmd, env=env).returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
