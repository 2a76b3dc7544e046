"""What the tree checks (tools/check_layers.py, tools/check_doc_names.py)
share: their walk over a tree, and their self-tests, where each case is a
small tree of files written to a temporary folder, the check run on it, its
exit status and printed words compared with what the case expects."""
import contextlib
import io
import os
import shutil
import tempfile

SKIP_DIRS = {".git", "build", "__pycache__", "subprojects"}


def walk(root, tops):
    """Every file under the folders tops of root, as paths relative to root
    (sorted; build output and version control left out)."""
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def run_cases(cases, check):
    """cases: (what, files {relative path: text}, want status, words or
    None, args); check(root, *args) prints its problems and returns the
    status. Prints one line a case; returns 1 when any case failed."""
    failed = 0
    for what, files, want, words, args in cases:
        root = tempfile.mkdtemp(prefix="tree_cases.")
        try:
            for rel, text in files.items():
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                got = check(root, *args)
        finally:
            shutil.rmtree(root)
        ok = got == want and (words is None or words in out.getvalue())
        print(f"{'ok' if ok else 'FAILED'}: {what}" + ("" if ok else f": {out.getvalue()!r}"))
        failed += not ok
    return 1 if failed else 0
