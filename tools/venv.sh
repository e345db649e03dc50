#!/usr/bin/env bash
# Pinned virtual environments. Sourced by the other tools/ scripts.
#
# Sourcing it sets up the default venv, .venv: Python 3.11, requirements.txt (bpy 5.0.1, the test
# tools) and requirements-dev.txt (ruff, mypy, fake-bpy-module); it exports PY (that venv's python).
# It also defines, for tools/matrix.sh:
#   find_python 3.13            prints the path of a Python 3.13 (PYTHON3_13=... overrides the search)
#   ensure_venv DIR 3.13 REQ..  makes DIR with that Python and installs the requirement files; it
#                               re-installs only when a requirement file or the Python changes.
# Set TWO_BONE_IK_VENV_ONLY_FUNCTIONS=1 before sourcing to get the functions without the default venv.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Prints the first Python of version $1 (major.minor) found, or fails. Looks at PYTHON3_<minor>
# (PYTHON too for 3.11, as before), pythonX.Y on PATH, pyenv's versions (newest first) and the usual
# install prefixes: a fresh machine may have the version under pyenv without it being on PATH.
find_python() {
  local want="$1" var="PYTHON${1/./_}" candidate
  local -a candidates=()
  [ -n "${!var:-}" ] && candidates+=("${!var}")
  [ "$want" = "3.11" ] && [ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
  candidates+=("python$want")
  local root="${PYENV_ROOT:-$HOME/.pyenv}"
  if [ -d "$root/versions" ]; then
    while IFS= read -r candidate; do
      candidates+=("$candidate")
    done < <(ls -d "$root/versions/$want".*/bin/python"$want" 2>/dev/null | sort -rV)
  fi
  candidates+=("/usr/local/bin/python$want" "/usr/bin/python$want" "/opt/python$want/bin/python$want" python3)
  for candidate in "${candidates[@]}"; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c "import sys, venv; sys.exit(f'{sys.version_info[0]}.{sys.version_info[1]}' != '$want')" \
        >/dev/null 2>&1; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "tools/venv.sh: Python $want not found (looked at \$$var, python$want, $root/versions/$want.*," \
    "/usr/local/bin, /usr/bin); install it or set $var=/path/to/python$want" >&2
  return 1
}

# ensure_venv DIR MAJOR.MINOR REQUIREMENTS...: a venv at DIR with that Python and exactly those pins.
ensure_venv() {
  local dir="$1" want="$2"
  shift 2
  local python stamp wanted requirement
  local -a pip_args=()
  for requirement in "$@"; do
    pip_args+=(-r "$requirement")
  done
  if [ -x "$dir/bin/python" ] \
    && ! "$dir/bin/python" -c "import sys; sys.exit(f'{sys.version_info[0]}.{sys.version_info[1]}' != '$want')"; then
    echo "tools/venv.sh: $dir is not Python $want: making it again" >&2
    rm -rf "$dir" || return 1
  fi
  if [ ! -x "$dir/bin/python" ]; then
    python="$(find_python "$want")" || return 1
    "$python" -m venv "$dir" || return 1
  fi
  stamp="$dir/.requirements.sha"
  wanted="$( (echo "$want"; cat "$@") | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
    rm -f "$stamp"
    # Explicit checks: callers may run this inside `if`, where `set -e` does not apply.
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "${pip_args[@]}" || return 1
    echo "$wanted" > "$stamp"
  fi
}

if [ "${TWO_BONE_IK_VENV_ONLY_FUNCTIONS:-0}" != "1" ]; then
  # The default environment: Python 3.11 and bpy 5.0.1 (the pinned wheel needs 3.11).
  ensure_venv "$repo/.venv" 3.11 "$repo/requirements.txt" "$repo/requirements-dev.txt"
  # Keep Blender from writing into the home folder (extension cache, shader caches).
  export BLENDER_USER_RESOURCES="${BLENDER_USER_RESOURCES:-$(mktemp -d)}"
  export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$(mktemp -d)}"
  PY="$repo/.venv/bin/python"
  export PY
fi
