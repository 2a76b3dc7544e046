"""python -m ballcl devices|survey|version [options]: the ballcl program's
commands, run by its own code (linked into the extension), so that the
output is byte for byte what `ballcl devices`, `ballcl survey` and `ballcl
version` print, --json included. `python -m ballcl --help` lists them."""
import sys

from . import _core


def main() -> int:
    """Runs the command; returns its exit status (0 success, 2 usage or
    input error, 3 OpenCL or runtime error)."""
    return _core._cli(["ballcl"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
