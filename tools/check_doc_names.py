#!/usr/bin/env python3
"""A document names only what exists: the names and paths of docs/DESIGN.md.

It reads the document and fails, printing each offence as doc:line, when

  - a ballcl name (`bcl_...`, `BCL_...`: a function, type, macro, constant
    or field), anywhere in the text, appears in no code of src/, include/,
    tools/, python/ or cl/ (comments do not count: a name that only a
    comment still mentions is gone). `bcl_group_*` stands for the names
    that start with bcl_group_;
  - another name in backticks that looks like C (a lower-case identifier
    with an underscore, `name` or `name()`) appears in none of them, nor in
    the build files (meson.build, tests/**/meson.build: a test's name);
  - a path (src/..., include/..., tools/..., tests/..., cl/..., python/...,
    examples/..., docs/...) names no file or folder of the tree, or a file
    name alone (timer.c, ranks.h, setup.sh, SCALING.md; ranks*.c a
    pattern) matches no file of the tree.

  check_doc_names.py ROOT [DOC...]   check DOC (default docs/DESIGN.md)
  check_doc_names.py --self-test     the check must fail on small bad trees
"""
import fnmatch
import os
import re
import sys

from tree_cases import run_cases, walk

# Where the code is: a name counts as existing when it appears here.
CODE_DIRS = ["src", "include", "tools", "python", "cl"]
CODE_EXT = (".c", ".h", ".cl", ".py", ".pyi", ".sh", ".build", ".txt", ".map")
# Folders of the tree a path may start with.
TREE_DIRS = ["src", "include", "tools", "tests", "cl", "python", "examples", "docs"]
NOWHERE = "names nothing in the code of " + ", ".join(d + "/" for d in CODE_DIRS)

BCL_NAME = re.compile(r"\b(bcl_[a-z0-9_]*[a-z0-9]|BCL_[A-Z0-9_]*[A-Z0-9])(_\*)?")
TICKED = re.compile(r"`([^`\n]+)`")
C_NAME = re.compile(r"^([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(\(\))?$")
FILE_NAME = re.compile(r"(?<![\w./*<>-])"
                       r"([A-Za-z0-9_*][A-Za-z0-9_.*-]*\.(?:c|h|cl|py|sh|md|map|toml))(?![\w/*-])")
PATH = re.compile(r"(?<![\w./<-])((?:%s)/[A-Za-z0-9_.*/-]*)" % "|".join(TREE_DIRS))
WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
# A C comment (an unclosed one runs to the end), or a string or character
# literal (group 1: kept, an unclosed one ends at its line's end).
C_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)|//[^\n]*|(\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?)",
                       re.S)


def strip_comments(text, path):
    """The code of a source file without its comments (C's /* */ and //,
    a script's #), string literals kept (a name may be built into one)."""
    if path.endswith((".c", ".h", ".cl")):
        return C_COMMENT.sub(lambda m: m.group(1) or (" " if m.group(0)[1] == "*" else ""), text)
    if path.endswith((".py", ".pyi", ".sh", ".build", ".txt")):
        return re.sub(r"(?m)(^|\s)#.*$", r"\1", text)
    return text


def code_words(root):
    """Every word of the code (comments left out), and of the build files
    (the tests' names are in tests/meson.build)."""
    words = set()
    builds = [rel for rel in walk(root, ["tests"]) if os.path.basename(rel) == "meson.build"]
    builds += [n for n in ("meson.build", "meson_options.txt")
               if os.path.isfile(os.path.join(root, n))]
    for rel in list(walk(root, CODE_DIRS)) + builds:
        # Not this script: its self-test's names are made up.
        if not rel.endswith(CODE_EXT) or rel == os.path.join("tools", "check_doc_names.py"):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            words.update(WORD.findall(strip_comments(f.read(), rel)))
    return words


def tree_files(root):
    """(every file and folder path of the tree, every file's base name)."""
    files = list(walk(root, TREE_DIRS))
    files += [n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n))]
    paths = set(files)
    for rel in files:
        d = os.path.dirname(rel)
        while d:
            paths.add(d)
            d = os.path.dirname(d)
    return paths, {os.path.basename(rel) for rel in files}


def check(root, doc, words, paths, names, problems):
    rel_doc = os.path.relpath(doc, root)
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        where = f"{rel_doc}:{number}"
        for m in BCL_NAME.finditer(line):
            name, prefix = m.group(1), bool(m.group(2))
            if not (any(w.startswith(name + "_") for w in words) if prefix else name in words):
                problems.append(f"{where}: {name + ('_*' if prefix else '')} {NOWHERE}")
        for m in TICKED.finditer(line):
            text = m.group(1).strip()
            c = C_NAME.match(text)
            if c and not c.group(1).startswith("bcl_") and c.group(1) not in words:
                problems.append(f"{where}: `{text}` {NOWHERE}")
        for m in FILE_NAME.finditer(line):
            name = m.group(1)
            if not any(fnmatch.fnmatch(n, name) for n in names):
                problems.append(f"{where}: {name}: no file of the tree has that name")
        for m in PATH.finditer(line):
            path = m.group(1).rstrip("/.,;:")  # a sentence's punctuation after it
            if path and not (any(fnmatch.fnmatch(p, path) for p in paths) if "*" in path
                             else path in paths):
                problems.append(f"{where}: {path}: no such file or folder")


def run(root, docs):
    problems = []
    words = code_words(root)
    paths, names = tree_files(root)
    for doc in docs:
        check(root, os.path.join(root, doc), words, paths, names, problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


def self_test():
    """The check must pass a good tree and fail bad ones."""
    good = {"src/run/run.h": "#define BCL_MAX 4\n"
                             "typedef struct bcl_plan { int k_rule; } bcl_plan;\n"
                             "int bcl_plan_resolve(bcl_plan *p);\n",
            "src/run/run.c": "/* bcl_gone was here */\nint bcl_plan_resolve(bcl_plan *p) "
                             "{ return group_each(p, \"x\"); }\n",
            "tools/cli/ranks.c": "int ranks_size(void);\n",
            "docs/DESIGN.md": "The plan (`bcl_plan`, its `k_rule`) from bcl_plan_resolve() in\n"
                              "src/run/run.c and `ranks.c`, the `bcl_plan_*` functions, "
                              "`BCL_MAX`, `group_each()`, src/run/.\n"}
    cases = [("a good tree", good, 0, None, (["docs/DESIGN.md"],))]
    for what, doc, words in [
            ("a function that is gone", "`bcl_plan_make()`", "bcl_plan_make names nothing"),
            ("a name only a comment mentions", "bcl_gone", "bcl_gone names nothing"),
            ("a prefix nothing has", "`bcl_sim_*`", "bcl_sim_* names nothing"),
            ("a macro that is gone", "BCL_MIN", "BCL_MIN names nothing"),
            ("another C name that is gone", "`group_all()`", "`group_all()` names nothing"),
            ("a path that is gone", "src/measure/measure.c", "src/measure/measure.c: no such"),
            ("a file name that is gone", "`timer.c`", "timer.c: no file"),
            ("a file name outside backticks", "measure.c", "measure.c: no file"),
            ("a pattern nothing matches", "`run_ranks*.c`", "run_ranks*.c: no file")]:
        bad = dict(good)
        bad["docs/DESIGN.md"] = good["docs/DESIGN.md"] + "\nAnd " + doc + ".\n"
        cases.append((what, bad, 1, "docs/DESIGN.md:4: " + words, (["docs/DESIGN.md"],)))
    return run_cases(cases, run)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    if flags - {"--self-test"} or (not args and "--self-test" not in flags):
        print(__doc__, file=sys.stderr)
        return 2
    status = self_test() if "--self-test" in flags else 0
    if args:
        status |= run(args[0], args[1:] or [os.path.join("docs", "DESIGN.md")])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
