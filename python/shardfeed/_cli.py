"""The `shardfeed` console script of the wheel: the same command as the
binary built from source (`shardfeed convert|check|bench|cat|copy|index|merge`),
run inside the extension module, so the package needs no second executable."""
import os
import sys

from . import _shardfeed


def main():
    """Runs the command line in sys.argv; exits with its status (0, 1 data problem, 2 usage/I/O)."""
    argv = [b"shardfeed"] + [os.fsencode(a) for a in sys.argv[1:]]
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(_shardfeed.run_cli(argv))


if __name__ == "__main__":
    main()
