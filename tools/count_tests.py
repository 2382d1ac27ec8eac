"""Prints 'N passed, N failed[, N skipped]' over the test cases of the given
Bazel test targets, read from their bazel-testlogs/**/test.xml files.

Usage: count_tests.py TESTLOGS_DIR TARGET... [-- TESTLOGS_DIR TARGET...]...

Each group after a `--` is another build configuration's test logs (e.g.
the emulated GPU suite under --config=tsan and --config=asan) and its
targets: a target run in several configurations counts in each. With more
than one group, each group's counts go to stderr first, then the total line
to stdout.
"""
import os
import sys
import xml.etree.ElementTree as ET


def count(logs, targets):
    """(passed, failed, skipped) over the targets' test cases in `logs`."""
    passed = failed = skipped = 0
    for target in targets:
        path = os.path.join(logs, target.lstrip("/").replace(":", "/"), "test.xml")
        if not os.path.exists(path):
            print(f"no test result for {target} in {logs}", file=sys.stderr)
            failed += 1
            continue
        try:
            cases = ET.parse(path).getroot().iter("testcase")
        except ET.ParseError:
            print(f"unreadable test result for {target} in {logs}", file=sys.stderr)
            failed += 1
            continue
        for case in cases:
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.get("result") == "skipped" or case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped


def line(passed, failed, skipped):
    text = f"{passed} passed, {failed} failed"
    return text + f", {skipped} skipped" if skipped else text


def groups(args):
    """[(logs, [targets])] from `LOGS T... -- LOGS T... ...`."""
    out, current = [], []
    for a in args + ["--"]:
        if a != "--":
            current.append(a)
        elif current:
            out.append((current[0], current[1:]))
            current = []
    return out


def main(args):
    parts = groups(args)
    if not parts:
        sys.exit(__doc__)
    total = [0, 0, 0]
    for logs, targets in parts:
        counts = count(logs, targets)
        if len(parts) > 1:
            print(f"{os.path.basename(os.path.dirname(logs.rstrip('/')))}: {len(targets)} "
                  f"targets: {line(*counts)}", file=sys.stderr)
        total = [t + c for t, c in zip(total, counts)]
    print(line(*total))


if __name__ == "__main__":
    main(sys.argv[1:])
