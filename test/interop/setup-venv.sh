#!/usr/bin/env bash
# Create/refresh test/interop/.venv with the pinned interop requirements.
# Idempotent and quiet on success; prints what is missing on failure.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=venv-common.sh
source "$HERE/venv-common.sh"
VENV="$HERE/.venv"
REQ="$HERE/requirements.txt"

venv_is_current "$VENV" "$REQ" && exit 0

PY="$(find_python 11 11)"
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

build_venv "$PY" "$VENV" "$REQ" setup-venv.sh
