"""Prints 'N passed, N failed[, N skipped]' over the test cases of the given
Bazel test targets, read from their bazel-testlogs/**/test.xml files.

Usage: count_tests.py TESTLOGS_DIR TARGET...
"""
import os
import sys
import xml.etree.ElementTree as ET

logs, targets = sys.argv[1], sys.argv[2:]
passed = failed = skipped = 0
for target in targets:
    path = os.path.join(logs, target.lstrip("/").replace(":", "/"), "test.xml")
    if not os.path.exists(path):
        print(f"no test result for {target}", file=sys.stderr)
        failed += 1
        continue
    try:
        cases = ET.parse(path).getroot().iter("testcase")
    except ET.ParseError:
        print(f"unreadable test result for {target}", file=sys.stderr)
        failed += 1
        continue
    for case in cases:
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
