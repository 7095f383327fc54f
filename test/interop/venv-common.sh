# Shared by setup-venv.sh and mlserver/setup-venv.sh (sourced, not run): find a Python in a version
# range and create/refresh a venv from a pinned requirements file, quietly and idempotently.

# venv_is_current VENV REQ: the venv exists and was built from exactly this requirements file.
venv_is_current() {
  [[ -x "$1/bin/python" && -f "$1/.infergate-requirements" ]] && cmp -s "$2" "$1/.infergate-requirements"
}

# find_python MIN_MINOR MAX_MINOR: prints the first Python 3.MIN..3.MAX found, or nothing.
find_python() {
  local cand
  for cand in /root/.pyenv/versions/3.11.7/bin/python3 python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 &&
      "$cand" -c "import sys; sys.exit(0 if (3, $1) <= sys.version_info[:2] <= (3, $2) else 1)" 2>/dev/null; then
      command -v "$cand"
      return
    fi
  done
}

# build_venv PY VENV REQ NAME: creates the venv if needed and installs REQ; prints pip's output on failure.
build_venv() {
  local log
  log="$(mktemp)"
  if ! {
    { [[ -x "$2/bin/python" ]] || "$1" -m venv "$2"; } &&
      "$2/bin/python" -m pip install --disable-pip-version-check -q -r "$3"
  } >"$log" 2>&1; then
    echo "$4: creating $2 failed:" >&2
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
  cp "$3" "$2/.infergate-requirements"
}
