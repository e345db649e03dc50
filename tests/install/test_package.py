# SPDX-License-Identifier: GPL-3.0-or-later
"""The built zip holds exactly what the extension needs: its manifest, its root modules and
every Python module of its packages, and nothing for development (tests, CI, tools, bench, demo,
docs, caches, build output, dev configuration)."""

import importlib.util
import pathlib
import subprocess
import sys
import tomllib
import zipfile

REPO = pathlib.Path(__file__).resolve().parents[2]

# Folders at the repo root that are for development only (they may hold .py files).
DEV_FOLDERS = {"tests", "tools", "bench", "demo", "docs", "out", "dist", "build", "requirements"}
# Root files that are for development only.
DEV_FILES = {"pyproject.toml", "README.md", "CHANGELOG.md"}


def zip_names(path: pathlib.Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return [name for name in archive.namelist() if not name.endswith("/")]


def extension_packages() -> list[str]:
    """Top-level folders of the checkout that are Python packages of the extension."""
    return sorted(
        path.name
        for path in REPO.iterdir()
        if path.is_dir()
        and (path / "__init__.py").is_file()
        and path.name not in DEV_FOLDERS
        and not path.name.startswith(".")
    )


def needed_files() -> set[str]:
    """What the zip must hold: the manifest, the root's modules (__init__.py, compat.py) and every
    module of the packages."""
    needed = {"blender_manifest.toml", *(path.name for path in REPO.glob("*.py"))}
    for package in extension_packages():
        for path in (REPO / package).rglob("*.py"):
            if "__pycache__" not in path.parts:
                needed.add(path.relative_to(REPO).as_posix())
    return needed


def test_zip_holds_exactly_the_extension(extension_zip):
    """The zip's files are the manifest, __init__.py and the packages' modules: none missing, none extra."""
    names = set(zip_names(extension_zip))
    needed = needed_files()
    assert not needed - names, f"missing from the zip: {sorted(needed - names)}"
    assert not names - needed, f"not part of the extension, yet in the zip: {sorted(names - needed)}"


def test_zip_has_no_development_files(extension_zip):
    """No tests, CI, tools, bench, demo, docs, caches, dot-files, dev config or build output."""
    offending = []
    for name in zip_names(extension_zip):
        parts = pathlib.PurePosixPath(name).parts
        if (
            parts[0] in DEV_FOLDERS
            or name in DEV_FILES
            or name.startswith("requirements")
            or any(part.startswith(".") or part == "__pycache__" for part in parts)
            or name.endswith((".pyc", ".zip", ".blend1", ".sh", ".md", ".png", ".json", ".csv"))
        ):
            offending.append(name)
    assert offending == []


def test_zip_packages_are_at_its_root(extension_zip):
    """blender_manifest.toml and __init__.py sit at the zip's root (no wrapping folder), and every
    listed package is a package in the zip (its __init__.py is there)."""
    names = set(zip_names(extension_zip))
    assert {"blender_manifest.toml", "__init__.py"} <= names
    for package in extension_packages():
        assert f"{package}/__init__.py" in names


def test_zip_manifest_is_the_checkout_manifest(extension_zip):
    """The manifest in the zip is the checkout's, unchanged, and the zip is named after its id and version."""
    with zipfile.ZipFile(extension_zip) as archive:
        packed = tomllib.loads(archive.read("blender_manifest.toml").decode("utf-8"))
    source = tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))
    assert packed == source
    assert (packed["id"], packed["type"]) == ("two_bone_ik", "add-on")
    assert extension_zip.name == f"{packed['id']}-{packed['version']}.zip"


def blender_ext_cli() -> pathlib.Path:
    """blender_ext.py of the running bpy, found by tools/validate.py (without importing bpy)."""
    spec = importlib.util.spec_from_file_location(
        "two_bone_ik_tools_validate", REPO / "tools" / "validate.py"
    )
    assert spec is not None and spec.loader is not None
    validate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(validate)
    return validate.blender_ext_cli()


def test_zip_passes_blenders_validator(extension_zip):
    """blender_ext.py validate accepts the zip itself (not only the source folder)."""
    completed = subprocess.run(
        [sys.executable, str(blender_ext_cli()), "validate", str(extension_zip)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
