#!/usr/bin/env bash
# Runs every test: manifest validation, pure solver tests (no Blender), in-Blender tests (real bpy).
# Usage: bash tools/test.sh [pytest args]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo/tools/venv.sh"
cd "$repo"
echo "== Blender's extension validator"
"$PY" tools/validate.py
echo "== pytest"
exec "$PY" -m pytest "$@"
