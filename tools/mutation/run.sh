#!/bin/sh
# Mutation check (see docs/testing.md): python3 does the work; this wrapper only finds it.
exec python3 "$(dirname "$0")/run.py" "$@"
