"""What the fleet tests share (test_survey_fleet.py, test_survey_fleet_page.py)."""

import copy
import json
import os


def vary(obj, rng):
    """Every float of obj, times 0.9 to 1.1 (integers kept)."""
    if isinstance(obj, dict):
        return {k: vary(v, rng) for k, v in obj.items()}
    if isinstance(obj, list):
        return [vary(v, rng) for v in obj]
    if isinstance(obj, float):
        return obj * rng.uniform(0.9, 1.1)
    return obj


def host_fleet(base, folder, rng):
    """1000 surveys of base's first device, each on a host of its own
    (node0000...), its figures varied, written into folder; returns the
    devices' (name, host)."""
    devices = []
    for i in range(1000):
        s = copy.deepcopy(base)
        dev = s["devices"][0]
        dev["identity"]["host"] = f"node{i:04d}"
        dev["measured"] = vary(dev["measured"], rng)
        s["date"] = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"
        devices.append((dev["identity"]["name"], f"node{i:04d}"))
        with open(os.path.join(folder, f"node{i:04d}.json"), "w") as f:
            json.dump(s, f)
    return devices
