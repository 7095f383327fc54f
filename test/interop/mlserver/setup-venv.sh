#!/usr/bin/env bash
# Create/refresh test/interop/mlserver/.venv with the pinned MLServer requirements.
# Idempotent and quiet on success (~25 s the first time); prints what failed otherwise.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../venv-common.sh
source "$HERE/../venv-common.sh"
VENV="$HERE/.venv"
REQ="$HERE/requirements.txt"

venv_is_current "$VENV" "$REQ" && exit 0

PY="$(find_python 9 12)"
if [[ -z "$PY" ]]; then
  echo "setup-venv.sh: no Python 3.9-3.12 found (mlserver 1.7.1 supports those)." >&2
  exit 1
fi

build_venv "$PY" "$VENV" "$REQ" mlserver/setup-venv.sh
