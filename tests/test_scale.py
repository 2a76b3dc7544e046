"""A state larger than one allocation, split for real by the driver's own
limit: PoCL reports CL_DEVICE_MAX_MEM_ALLOC_SIZE as a quarter of its global
memory, and POCL_MEMORY_LIMIT (GiB) lowers that global memory, so the limit
the split obeys is the one the driver reports, not ballcl's test variable.
Also: more balls than the device's memory is refused before any work.

Skips (77) without a device, and when the device is not PoCL's (the variable
means nothing to other drivers)."""

import testlib
from testlib import check

dev = testlib.require_device()
env = {"POCL_MEMORY_LIMIT": "1", "BALLCL_TEST_MAX_ALLOC": None}
r = testlib.run(["devices", "--json"], env=env)
pocl = [d for d in r.json()["devices"] if "Portable Computing Language" in d["platform"]]
if not pocl:
    testlib.skip("no PoCL device: POCL_MEMORY_LIMIT does not apply")
limit = pocl[0]["max_alloc_bytes"]
mem = pocl[0]["global_mem_bytes"]
check(limit == 256 << 20 and mem == 1 << 30,
      "POCL_MEMORY_LIMIT=1 gives 1 GiB of memory and a 256 MiB allocation limit",
      f"{mem} {limit}")

# 20 million balls are 320 MB: two buffers of at most 256 MiB.
n = 20_000_000
r = testlib.run(["run", "-d", "pocl", "-n", n, "-s", 3, "--init", "random",
                 "--steps-per-launch", 1, "--json"], env=env, timeout=300)
j = r.json() if r.rc == 0 else None
check(j is not None and j["buffers"] == 2 and j["balls"] == n
      and j["validation"]["passed"] and j["validation"]["compared"] == 4 * n,
      f"{n} balls over the driver's 256 MiB limit: split in 2 buffers, validated", r.describe())
r = testlib.run(["run", "-d", "pocl", "-n", n, "-s", 5, "--init", "random",
                 "--steps-per-launch", 4, "--json"], env=env, timeout=300)
j = r.json() if r.rc == 0 else None
check(j is not None and j["buffers"] == 2 and j["validation"]["passed"],
      "the same, fused (K = 4, then 1), validated", r.describe())

# 70 million balls are 1.1 GB, more than the device's 1 GiB: exit 2 at once.
r = testlib.expect_error(["run", "-d", "pocl", "-n", 70_000_000, "-s", 1], 2,
                         "70000000 balls need", "more than the 1024.0 MiB of memory",
                         env=env, what="more balls than device memory")
testlib.finish()
