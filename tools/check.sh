#!/usr/bin/env bash
# Static checks on the whole tree: ruff lint, ruff format (check only: it never rewrites files) and
# mypy against fake-bpy-module for the pinned Blender. Settings: pyproject.toml; tool versions:
# requirements-dev.txt (installed into .venv by tools/venv.sh). Exits non-zero on any finding.
# Usage: bash tools/check.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${PY:-}" ]; then
  source "$repo/tools/venv.sh"
fi
bin="$(dirname "$PY")"
cd "$repo"
failed=()

echo "== ruff check"
"$bin/ruff" check --no-cache --output-format concise . || failed+=("ruff check")

echo "== ruff format --check"
"$bin/ruff" format --no-cache --check . || failed+=("ruff format")

# The repo root is the extension package, so mypy sees it through a link named like the installed
# module; paths are printed relative to the repo.
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
ln -s "$repo" "$stage/two_bone_ik"
mypy_args=(--config-file "$repo/pyproject.toml" --cache-dir "$stage/.mypy_cache" --no-error-summary)

echo "== mypy (extension, as package two_bone_ik)"
if ! (cd "$stage" && MYPYPATH="$stage" "$bin/mypy" "${mypy_args[@]}" \
  --exclude "^two_bone_ik/(tests|tools|bench|demo|docs|out|dist|requirements)/" -p two_bone_ik \
  | sed 's#^two_bone_ik/##'; exit "${PIPESTATUS[0]}"); then
  failed+=("mypy extension")
fi

# The tests, tools, bench and demo are scripts and test folders, not packages: each folder is its own
# import root (as pytest and the scripts run them), so each is checked on its own.
# The Blender-facing ones get the relaxation pyproject.toml gives the extension's Blender layers.
for path in tests/solver tests/static tests/support tests/blender tests/install tests/window tools bench demo docs; do
  [ -d "$path" ] || continue
  echo "== mypy ($path)"
  extra=()
  search="$repo/$path:$repo"
  case "$path" in
    tests/support | tests/blender | tests/install | tests/window | bench | demo | docs)
      extra=(--disable-error-code union-attr --disable-error-code attr-defined) ;;
  esac
  # The tests, bench, docs and command-line scripts import the in-Blender test helpers
  # (tests/support/blender_rig.py).
  case "$path" in tests/blender | tests/window | tools | bench | demo | docs) search="$search:$repo/tests/support" ;; esac
  if ! MYPYPATH="$search" "$bin/mypy" "${mypy_args[@]}" "${extra[@]}" --explicit-package-bases \
    --follow-imports=silent "$path"; then
    failed+=("mypy $path")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "static checks: findings in: ${failed[*]}" >&2
  exit 1
fi
echo "static checks: clean"
