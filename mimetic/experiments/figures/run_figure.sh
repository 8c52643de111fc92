#!/usr/bin/env bash
# Runs the figure binary from the runfiles with the target's --figure=... and any extra arguments
# (e.g. --preset=paper --jobs=2 --set seeds=[1,2]).
set -euo pipefail
here="${RUNFILES_DIR:-$0.runfiles}/mimetic"
exec "$here/mimetic/experiments/figure" "$@"
