#!/usr/bin/env bash
# Runs the headless leg demo in real Blender (the bpy module): builds a leg rig, adds a chain with the
# add operator, animates the target, checks every frame and renders a filmstrip.
# Writes out/demo/: table.csv, filmstrip.png, tiles/, leg.blend, blender.log. Exits non-zero when a
# check fails.
# Usage: bash tools/demo.sh [--out DIR]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$repo/tools/venv.sh"
cd "$repo"
exec "$PY" demo/leg.py "$@"
