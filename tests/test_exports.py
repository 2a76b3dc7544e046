"""The shared library exports exactly the public API: every function
declared in the installed header include/ballcl/ballcl.h (and the model
table), nothing internal; src/ballcl.map lists the same names; the header
declares at most MAX_FUNCTIONS functions and is the only one installed.
Arguments: the shared library, then the public headers."""
import os
import re
import subprocess
import sys

# The issue's bound on the installed API (docs/DESIGN.md, "Public and
# internal"): what an embedding program needs, not the program's toolbox;
# 35 at the declare-once step, and model files added bcl_model_load and
# bcl_model_free.
MAX_FUNCTIONS = 37

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
functions = declared - {"bcl_models", "bcl_model_count"}
if len(functions) > MAX_FUNCTIONS:
    problems.append(f"{len(functions)} functions declared, more than {MAX_FUNCTIONS}")
include_dir = os.path.dirname(os.path.abspath(headers[0]))
others = sorted(set(os.listdir(include_dir)) - {os.path.basename(h) for h in headers})
if others:
    problems.append("headers in include/ballcl/ not checked here: " + ", ".join(others))
map_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "ballcl.map")
map_text = re.sub(r"/\*.*?\*/", "", open(map_path).read(), flags=re.S)
listed = set(re.findall(r"^\s*(bcl_\w+);", map_text, re.M))
if listed != declared:
    problems.append("src/ballcl.map and the header differ: " +
                    ", ".join(sorted(listed ^ declared)))
if declared - exported:
    problems.append("declared but not exported: " + ", ".join(sorted(declared - exported)))
if exported - declared:
    problems.append("exported but not declared: " + ", ".join(sorted(exported - declared)))
if problems:
    print("FAIL the shared library's exports match the public headers")
    for p in problems:
        print("     " + p)
    sys.exit(1)
print(f"ok   the shared library exports the {len(declared)} names of the public header "
      f"({len(functions)} functions, at most {MAX_FUNCTIONS}) and src/ballcl.map lists them, "
      "no more")
