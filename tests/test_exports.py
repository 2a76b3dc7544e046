"""The shared library exports exactly the public API: every function
declared in include/ballcl/*.h (and the model table), nothing internal.
Arguments: the shared library, then the public headers."""
import re
import subprocess
import sys

lib, headers = sys.argv[1], sys.argv[2:]
declared = {"bcl_models", "bcl_model_count"}
for h in headers:
    text = open(h).read()
    # A declaration: a return type at the start of a line, then bcl_name(.
    declared |= set(re.findall(r"^[a-z][\w \*]*?\b(bcl_\w+)\(", text, re.M))
out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                     check=True).stdout
names = [line.split()[-1].split("@")[0] for line in out.splitlines()]
exported = {name for name in names if name.startswith("bcl_")}
problems = []
if declared - exported:
    problems.append("declared but not exported: " + ", ".join(sorted(declared - exported)))
if exported - declared:
    problems.append("exported but not declared: " + ", ".join(sorted(exported - declared)))
if problems:
    print("FAIL the shared library's exports match the public headers")
    for p in problems:
        print("     " + p)
    sys.exit(1)
print(f"ok   the shared library exports the {len(declared)} names of the public headers, no more")
