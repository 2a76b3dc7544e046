"""python -m ballcl devices|survey|version (docs/PYTHON.md, "From the shell"):
the program's own commands linked into the extension, so the output is
byte for byte the program's (text and --json, messages and exit statuses
too); the survey's figures differ from run to run, its structure does not."""
import json
import os
import subprocess
import sys

import pytest

import ballcl


def module(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "ballcl", *args], capture_output=True,
                          timeout=timeout)


def program(*args, timeout=120):
    cli = os.environ.get("BALLCL")
    if not cli or not os.path.exists(cli):
        pytest.skip("no ballcl program to compare with (an installed package has none)")
    return subprocess.run([cli, *args], capture_output=True, timeout=timeout)


def test_lists_the_devices():
    p = module("devices")
    assert p.returncode == 0, p.stderr
    names = [d["name"] for d in ballcl.devices()]
    assert all(n[:20].encode() in p.stdout for n in names), p.stdout
    doc = json.loads(module("devices", "--json").stdout)
    assert [d["selector"] for d in doc["devices"]] == [d["selector"] for d in ballcl.devices()]
    assert module("version").stdout == f"ballcl {ballcl.__version__}\n".encode()


def test_the_module_has_three_commands():
    """The program's usage and messages, naming the commands the module has."""
    p = module("no-such-command")
    assert p.returncode == 2 and p.stderr == (b"ballcl: unknown command 'no-such-command': "
                                              b"expected one of devices, survey, version\n")
    p = module()
    assert p.returncode == 2 and b"  version " in p.stderr and b"  run " not in p.stderr


@pytest.mark.parametrize("args", [
    ["devices"], ["devices", "--json"], ["devices", "-v"], ["version"], ["version", "--json"],
    ["devices", "--no-such-option"], ["survey", "--help"], ["survey", "--small", "0"],
    ["survey", "-d", "no-such-device-xyz", "--no-db"],
])
def test_byte_identical_to_the_program(args):
    p, q = module(*args), program(*args)
    # PoCL derives its memory sizes from the memory free when it starts.
    if args[:2] == ["devices", "--json"]:
        def steady(out):
            doc = json.loads(out)
            for d in doc["devices"]:
                d.pop("global_mem_bytes"), d.pop("max_alloc_bytes")
            return doc
        assert steady(p.stdout) == steady(q.stdout)
        assert p.stdout.count(b"\n") == q.stdout.count(b"\n")
    elif args[:1] == ["devices"] and p.returncode == 0:
        strip = [line for line in p.stdout.splitlines() if b"GiB" not in line]
        assert strip == [line for line in q.stdout.splitlines() if b"GiB" not in line]
    else:
        assert p.stdout == q.stdout
    assert (p.stderr, p.returncode) == (q.stderr, q.returncode)


def structure(x):
    if isinstance(x, dict):
        return {k: structure(v) for k, v in x.items()}
    if isinstance(x, list):
        return [structure(v) for v in x]
    return None


def test_survey_json_has_the_program_structure(dev):
    args = ["survey", "--quick", "-d", dev, "--json", "-", "--no-db"]
    p = module(*args, timeout=600)
    assert p.returncode in (0, 3), p.stderr
    doc = json.loads(p.stdout)
    assert doc["command"] == "ballcl " + " ".join(args)
    assert doc["schema"].startswith("ballcl-survey/") and len(doc["devices"]) == 1
    q = program(*args, timeout=600)
    assert structure(doc) == structure(json.loads(q.stdout))
