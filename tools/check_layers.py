#!/usr/bin/env python3
"""The layers of src/ as a check over the includes and the calls
(docs/DESIGN.md, "Layers").

Every `#include "..."` of src/**/*.{c,h} and tools/cli/*.{c,h} is read and
mapped to the file it names. It fails, printing each offence as file:line,
when

  - a folder of src/ includes a header of a folder above it in STACK, or of
    a folder STACK does not name (a new folder must take its place first);
  - the files of src/ include one another in a circle (a .c file and its own
    .h are one node);
  - with --cli: the files of tools/cli do (the same rule; the layers test
    runs with it).

With --build DIR (a meson build folder: its compile_commands.json names
each source's object file), the calls are checked too. A file calls another
when an undefined symbol of its object (`nm`) is a function the other's
object defines. It fails when a file of a src/ folder calls one of a folder
above it (or outside src/), and on any circle of calls between the .c files
of src/, tools/cli and python/ballcl, printing the circle.

include/ballcl/*.h is the public interface: anyone may include it, and it
counts for no folder. Headers found nowhere (system ones) are ignored.

  check_layers.py ROOT            check src/
  check_layers.py ROOT --cli      check src/ and tools/cli
  check_layers.py ROOT --build=DIR  check the calls too
  check_layers.py ROOT --graph    print the stack and the folder arrows
  check_layers.py --self-test     the check must fail on small bad trees
"""
import json
import os
import re
import subprocess
import sys

from tree_cases import run_cases, walk

# Bottom first: each folder may include only its own headers and those of
# the folders before it.
STACK = ["util", "models", "files", "cache", "ocl", "run", "measure", "survey", "job"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# The folders whose .c files' calls are checked for circles.
CALLERS = ("src", os.path.join("tools", "cli"), os.path.join("python", "ballcl"))


def sources(root, part):
    """Every .c and .h under root/part, as paths relative to root."""
    return [rel for rel in walk(root, [part]) if rel.endswith((".c", ".h"))]


def includes(path):
    """(line number, included name) of each quoted include of path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def resolve(root, path, name, search):
    """The file an include names: beside the includer first, then each
    folder of the search path (the build's -I); None when none holds it."""
    for base in [os.path.dirname(path)] + search:
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            return os.path.relpath(candidate, root)
    return None


def node(rel):
    """A file's node in the file graph: a .c and its .h are one."""
    return os.path.splitext(rel)[0]


def find_cycles(edges):
    """The strongly connected components of more than one node, each as a
    list of nodes in a circle's order where one is found."""
    return [circle(c, edges) for c in components(edges)]


def below(mine, verb="use"):
    """The end of a message on a use up the stack from src/MINE/."""
    return (f"src/{mine}/ may {verb} only the folders below it "
            f"({', '.join(STACK[:STACK.index(mine)]) or 'none'})")


def reachable(v, edges):
    """The nodes one or more arrows away from v."""
    seen, todo = set(), list(edges.get(v, ()))
    while todo:
        w = todo.pop()
        if w not in seen:
            seen.add(w)
            todo.extend(edges.get(w, ()))
    return seen


def components(edges):
    """The strongly connected components of more than one node (the nodes
    each reaches and is reached from), each sorted."""
    reach = {v: reachable(v, edges) for v in edges}
    comps = {tuple(sorted(w for w in reach[v] if v in reach.get(w, ()))) for v in edges}
    return sorted(list(c) for c in comps if len(c) > 1)


def circle(comp, edges):
    """One circle through the first node of a component, for the message."""
    members, start = set(comp), comp[0]
    paths, seen, queue = {start: [start]}, {start}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                return paths[v] + [start]
            if w in members and w not in seen:
                seen.add(w)
                paths[w] = paths[v] + [w]
                queue.append(w)
    return comp


def scan(root, part, search):
    """(file graph, [(file, line, included file)]) of the sources under part."""
    edges, found = {}, []
    for rel in sources(root, part):
        path = os.path.join(root, rel)
        edges.setdefault(node(rel), set())
        for number, name in includes(path):
            target = resolve(root, path, name, search)
            if target is None or target.startswith("include" + os.sep):
                continue
            found.append((rel, number, target))
            if node(target) != node(rel):
                edges[node(rel)].add(node(target))
    return edges, found


def folder_of(rel):
    """The folder of src/ a path lies in, or None outside src/."""
    parts = rel.split(os.sep)
    return parts[1] if len(parts) > 2 and parts[0] == "src" else None


def check_src(root, problems):
    src = os.path.join(root, "src")
    edges, found = scan(root, "src", [src, os.path.join(root, "include")])
    for rel, number, target in found:
        mine, theirs = folder_of(rel), folder_of(target)
        if mine is None or theirs is None or mine == theirs:
            continue
        if mine not in STACK or theirs not in STACK:
            unknown = mine if mine not in STACK else theirs
            problems.append(f"{rel}:{number}: includes {target}: folder src/{unknown}/ is not "
                            f"in the stack of tools/check_layers.py")
        elif STACK.index(theirs) > STACK.index(mine):
            problems.append(f"{rel}:{number}: includes {target}: {below(mine)}")
    for c in find_cycles(edges):
        problems.append("circle between files of src/: " + " -> ".join(c))
    return found


def check_cli(root, problems):
    cli = os.path.join(root, "tools", "cli")
    edges, _ = scan(root, os.path.join("tools", "cli"),
                    [cli, os.path.join(root, "src"), os.path.join(root, "include")])
    edges = {v: ws & edges.keys() for v, ws in edges.items()}
    for c in find_cycles(edges):
        problems.append("circle between files of tools/cli: " + " -> ".join(c))


def objects(root, build):
    """{source relative to root: its object file} of the .c files under
    CALLERS, from the build's compile_commands.json (a source built twice
    counts once)."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = json.load(f)
    out = {}
    for c in commands:
        source = os.path.normpath(os.path.join(c["directory"], c["file"]))
        rel = os.path.relpath(source, root)
        obj = os.path.join(c["directory"], c["output"])
        if rel.startswith(tuple(p + os.sep for p in CALLERS)) and rel not in out:
            if os.path.isfile(obj):
                out[rel] = obj
    return out


def call_graph(root, build):
    """{file: {files it calls}} over the objects of the build."""
    objs = objects(root, build)
    source = {obj: rel for rel, obj in objs.items()}
    defined, undefined = {}, {}
    # One nm for all: "OBJECT: SYMBOL TYPE ..." a line (-A -P).
    text = subprocess.run(["nm", "-A", "-P"] + sorted(source), capture_output=True, text=True,
                          check=True).stdout if source else ""
    for line in text.splitlines():
        obj, _, rest = line.rpartition(": ")
        fields = rest.split()
        if obj not in source or len(fields) < 2:
            continue
        if fields[1] == "U":
            undefined.setdefault(source[obj], set()).add(fields[0])
        elif fields[1] in ("T", "W"):
            defined.setdefault(fields[0], source[obj])
    edges = {rel: set() for rel in objs}
    for rel, names in undefined.items():
        for name in names:
            target = defined.get(name)
            if target and target != rel:
                edges[rel].add(target)
    return edges


def check_calls(root, build, problems):
    edges = call_graph(root, build)
    for rel in sorted(edges):
        mine = folder_of(rel)
        if mine not in STACK:
            continue
        for target in sorted(edges[rel]):
            theirs = folder_of(target)
            if theirs is None or theirs not in STACK or STACK.index(theirs) > STACK.index(mine):
                problems.append(f"{rel}: calls {target}: {below(mine, 'call')}")
    for c in find_cycles(edges):
        problems.append("circle of calls between files: " + " -> ".join(c))


def graph(found):
    arrows = {}
    for rel, _, target in found:
        mine, theirs = folder_of(rel), folder_of(target)
        if mine and theirs and mine != theirs:
            arrows.setdefault(mine, set()).add(theirs)
    lines = ["The stack of src/, top first (each folder uses only those below it):", ""]
    for f in reversed(STACK):
        uses = ", ".join(sorted(arrows.get(f, ()), key=STACK.index)) if f in STACK else ""
        lines.append(f"  src/{f + '/':10} includes {uses or 'no other folder'}")
    return "\n".join(lines)


def run(root, cli=False, show=False, build=None):
    problems = []
    found = check_src(root, problems)
    if cli:
        check_cli(root, problems)
    if build:
        check_calls(root, os.path.join(root, build), problems)
    if show:
        print(graph(found))
    for p in problems:
        print(p)
    return 1 if problems else 0


def compile_tree(root):
    """Builds the .c files under CALLERS of a self-test tree into
    root/build, with its compile_commands.json, as meson would."""
    build = os.path.join(root, "build")
    os.makedirs(build, exist_ok=True)
    commands = []
    for part in CALLERS:
        for rel in sources(root, part):
            if rel.endswith(".c"):
                path = os.path.join(root, rel)
                obj = os.path.join(build, rel.replace(os.sep, "_") + ".o")
                subprocess.run([os.environ.get("CC", "cc"), "-I", os.path.join(root, "src"), "-I",
                                os.path.join(root, "include"), "-c", path, "-o", obj], check=True)
                commands.append({"directory": build, "file": path, "output": obj})
    with open(os.path.join(build, "compile_commands.json"), "w") as f:
        json.dump(commands, f)


def run_built(root, cli=False, show=False, build=None):
    """run() on a self-test tree, built first when its calls are checked."""
    if build:
        compile_tree(root)
    return run(root, cli, show, build)


def self_test():
    """The check must pass a good tree and fail bad ones."""
    good = {"src/util/util.h": '#include "ballcl/ballcl.h"\n',
            "src/ocl/ocl.h": '#include "util/util.h"\n',
            "src/ocl/a.c": '#include "ocl/ocl.h"\n#include <stdio.h>\n',
            "include/ballcl/ballcl.h": "\n",
            "tools/cli/x.c": '#include "x.h"\n#include "y.h"\n',
            "tools/cli/x.h": "\n", "tools/cli/y.h": "\n"}
    upward = {**good, "src/util/fault.c": '#include "util/util.h"\n#include "ocl/ocl.h"\n'}
    unknown = {**good, "src/util/b.c": '#include "extra/extra.h"\n', "src/extra/extra.h": "\n"}
    loop = {**good, "src/ocl/p.h": '#include "ocl/q.h"\n', "src/ocl/q.h": '#include "ocl/p.h"\n'}
    cli_loop = {**good, "tools/cli/y.c": '#include "y.h"\n#include "x.h"\n'}
    # Trees for the calls (built by run_built): f calls g when f's body calls it.
    def calling(f, g):
        return f"int {g}(void);\nint {f}(void) {{ return {g}(); }}\n"
    calls = {**good, "src/util/u.c": "int u(void) { return 0; }\n",
             "src/ocl/o.c": calling("o", "u")}
    upcall = {**calls, "src/util/w.c": calling("w", "o")}
    call_loop = {**calls, "python/ballcl/p.c": calling("p", "q"),
                 "python/ballcl/q.c": calling("q", "r"), "python/ballcl/r.c": calling("r", "p")}
    calls_both = {**calls, "tools/cli/x.c": calling("x", "y"), "tools/cli/y.c": calling("y", "x")}
    built = (False, False, "build")
    cases = [("a good tree", good, 0, None, (False,)),
             ("calls down the stack", calls, 0, None, built),
             ("an upward call", upcall, 1, "src/util/w.c: calls src/ocl/o.c", built),
             ("a circle of calls around three files", call_loop, 1,
              "python/ballcl/p.c -> python/ballcl/q.c -> python/ballcl/r.c -> python/ballcl/p.c",
              built),
             ("two files calling each other", calls_both, 1,
              "circle of calls between files: tools/cli/x.c -> tools/cli/y.c", built),
             ("an upward include", upward, 1, "src/util/fault.c:2", (False,)),
             ("a folder outside the stack", unknown, 1, "src/util/b.c:1", (False,)),
             ("a circle of headers", loop, 1, "circle between files of src/", (False,)),
             ("a circle of tools/cli, unchecked", cli_loop, 0, None, (False,)),
             ("a circle of tools/cli, --cli", cli_loop, 1, "tools/cli/x -> tools/cli/y", (True,))]
    return run_cases(cases, run_built)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    build = [a[len("--build="):] for a in argv if a.startswith("--build=")]
    flags = {a for a in argv if a.startswith("--") and not a.startswith("--build=")}
    if (flags - {"--cli", "--graph", "--self-test"} or len(build) > 1 or
            (len(args) != 1 and "--self-test" not in flags)):
        print(__doc__, file=sys.stderr)
        return 2
    status = self_test() if "--self-test" in flags else 0
    if args:
        status |= run(args[0], cli="--cli" in flags, show="--graph" in flags,
                      build=build[0] if build else None)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
