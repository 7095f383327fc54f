#!/usr/bin/env bash
# Create/refresh test/interop/.venv with the pinned interop requirements.
# Idempotent and quiet on success; prints what is missing on failure.
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
    "$cand" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
    PY="$(command -v "$cand")"
    break
  fi
done
if [[ -z "$PY" ]]; then
  echo "setup-venv.sh: Python 3.11 not found (tried /root/.pyenv/versions/3.11.7/bin/python3, python3.11, python3)." >&2
  echo "  nvidia-pytriton needs CPython 3.11 with a shared libpython3.11.so (e.g. pyenv: PYTHON_CONFIGURE_OPTS=--enable-shared pyenv install 3.11.7)." >&2
  exit 1
fi

LIBDIR="$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')"
if [[ ! -e "$LIBDIR/libpython3.11.so" && ! -e "$LIBDIR/libpython3.11.so.1.0" ]]; then
  echo "setup-venv.sh: $PY has no shared libpython3.11.so in '$LIBDIR'; Triton's Python backend stub needs it." >&2
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
