"""ballcl.run over several devices (device="all" or a list): two PoCL
devices in a subprocess (POCL_DEVICES="pthread pthread" is read when PoCL
starts), each shard on its own device, the whole state bit for bit against
NumPy, every shard validated."""
from conftest import two_pocl_devices

SCRIPT = """
    from conftest import bits, mixed_state, seed_reference
    s = mixed_state(np.random.default_rng(3), 100003)
    for device, spl in (("all", None), (",".join(sels[:2]), 1)):
        new, r = ballcl.run(s, 40, device=device, steps_per_launch=spl)
        assert np.array_equal(bits(new), bits(seed_reference(s, 40))), device
        used = [d for d in r.devices if d["balls"]]
        assert r.aggregate["devices"] == len(r.devices) >= 2
        assert sum(d["balls"] for d in r.devices) == len(s)
        assert all(d["validation"]["passed"] for d in used)
        assert r.validation["passed"] and r.validation["compared"] == 4 * len(s)
        if spl:
            assert all(d["launch"]["steps_per_launch"] == 1 for d in used)
        print(device, [(d["selector"], d["balls"]) for d in r.devices])
    for bad, word in (("0:0,0:0", "second time"), ("0:0,", "")):
        try:
            ballcl.run(s, 1, device=bad)
        except ballcl.InputError as e:
            assert word in str(e), str(e)
        else:
            raise AssertionError(bad)
    try:
        ballcl.Context(device="all")
    except ballcl.InputError as e:
        assert "several devices" in str(e)
    else:
        raise AssertionError("Context(device='all')")
    print("ok")
"""


def test_two_devices():
    two_pocl_devices(SCRIPT)
