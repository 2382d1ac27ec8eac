#!/bin/sh
echo "bazel coverage needs downloaded tools; not supported in the offline build" >&2
exit 1
