#!/usr/bin/env bash
# Runs the experiment runner on a config shipped in the runfiles; extra arguments are passed on
# (e.g. --set train.steps=500).
set -euo pipefail
here="${RUNFILES_DIR:-$0.runfiles}/mimetic"
exec "$here/mimetic/experiments/run" "$here/$1" "${@:2}"
