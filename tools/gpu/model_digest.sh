#!/usr/bin/env bash
# tools/gpu/model_digest.sh [ROOT]: prints the digest of the model code at ROOT's HEAD (default: this
# checkout): the git tree ids of mimetic/core, ops, models, init, data and train, hashed (16 hex digits).
# Two checkouts train the same model exactly when their digests are equal, whatever else differs (docs,
# figures, claims). The campaign records it with every point it trains (provenance.textproto) and
# `campaign_tool --merge` refuses a point whose digest is not the checkout's. bundle.sh stores it in the bundle
# (payload/model_digest.txt), so a GPU machine without .git has it. Uncommitted changes under those
# folders are not in HEAD's digest: said on stderr.
set -euo pipefail
ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
DIRS=(mimetic/core mimetic/ops mimetic/models mimetic/init mimetic/data mimetic/train)
if ! git -C "$ROOT" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "model_digest.sh: '$ROOT' is not a git checkout with a commit; the digest comes from its HEAD" >&2
  exit 1
fi
if ! git -C "$ROOT" diff --quiet HEAD -- "${DIRS[@]}" 2>/dev/null; then
  echo "model_digest.sh: warning: uncommitted changes under ${DIRS[*]}; this is HEAD's digest" >&2
fi
git -C "$ROOT" ls-tree HEAD -- "${DIRS[@]}" | sha256sum | cut -c1-16
