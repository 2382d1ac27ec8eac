#!/usr/bin/env bash
# Runs install_tree_test.py with the system Python (no Python rules needed).
exec python3 "$(dirname "$0")/install_tree_test.py" "$@"
