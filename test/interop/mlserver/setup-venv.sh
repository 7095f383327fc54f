#!/usr/bin/env bash
# Create/refresh test/interop/mlserver/.venv with the pinned MLServer requirements.
# Idempotent and quiet on success (~25 s the first time); prints what failed otherwise.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
REQ="$HERE/requirements.txt"
STAMP="$VENV/.infergate-requirements"

if [[ -x "$VENV/bin/python" && -f "$STAMP" ]] && cmp -s "$REQ" "$STAMP"; then
  exit 0
fi

PY=""
for cand in /root/.pyenv/versions/3.11.7/bin/python3 python3.11 python3; do
  if command -v "$cand" >/dev/null 2>&1 &&
    "$cand" -c 'import sys; sys.exit(0 if (3, 9) <= sys.version_info[:2] <= (3, 12) else 1)' 2>/dev/null; then
    PY="$(command -v "$cand")"
    break
  fi
done
if [[ -z "$PY" ]]; then
  echo "setup-venv.sh: no Python 3.9-3.12 found (mlserver 1.7.1 supports those)." >&2
  exit 1
fi

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
if ! {
  { [[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"; } &&
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQ"
} >"$LOG" 2>&1; then
  echo "setup-venv.sh: creating $VENV failed:" >&2
  cat "$LOG" >&2
  exit 1
fi
cp "$REQ" "$STAMP"
