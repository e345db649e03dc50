#!/usr/bin/env bash
# Creates .venv (Python 3.11, which the pinned bpy wheel needs) and installs requirements.txt.
# Sourced by the other tools/ scripts; re-installs only when requirements.txt changes.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 "$HOME/.pyenv/versions/3.11.7/bin/python3" python3; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      python="$candidate"
      break
    fi
  done
fi
if [ -z "$python" ]; then
  echo "tools/venv.sh: Python 3.11 not found (the pinned bpy 5.0.1 wheel needs it); set PYTHON=..." >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha"
want="$(sha256sum "$repo/requirements.txt" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$repo/requirements.txt"
  echo "$want" > "$stamp"
fi
# Keep Blender from writing into the home folder (extension cache, shader caches).
export BLENDER_USER_RESOURCES="${BLENDER_USER_RESOURCES:-$(mktemp -d)}"
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$(mktemp -d)}"
PY="$venv/bin/python"
export PY
