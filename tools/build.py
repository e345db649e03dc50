# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the extension zip with Blender's own tooling and validates the result.

Runs ``blender_ext.py build --source-dir REPO --output-dir OUT`` (the CLI shipped in the bpy wheel,
found without importing bpy), then ``blender_ext.py validate`` on the zip. What goes into the zip is
decided by ``[build] paths_exclude_pattern`` in blender_manifest.toml.

With ``--repository DIR``, DIR becomes a static extensions repository a studio can host on a file
share or web server: the zip and an ``index.json`` listing it (``blender_ext.py server-generate``).
Blender then installs and updates the extension from it (Get Extensions, a remote repository whose
URL is ``file:///path/to/DIR/index.json`` or ``https://host/DIR/index.json``).

Usage: python tools/build.py [--output-dir DIR | --repository DIR]   (default: dist/); prints the
zip's path last (with --repository, the index's).
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tomllib

from validate import blender_ext_cli

REPO = pathlib.Path(__file__).resolve().parent.parent


def zip_name(repo: pathlib.Path = REPO) -> str:
    """``{id}-{version}.zip``, the name blender_ext.py gives the package."""
    manifest = tomllib.loads((repo / "blender_manifest.toml").read_text(encoding="utf-8"))
    return f"{manifest['id']}-{manifest['version']}.zip"


def build(output_dir: pathlib.Path, repo: pathlib.Path = REPO) -> pathlib.Path:
    """Build the zip into ``output_dir`` (replacing an earlier one) and validate it; returns its path.

    Raises
    ------
    RuntimeError
        When the build or the validation fails (their output is printed above).
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    package = output_dir / zip_name(repo)
    package.unlink(missing_ok=True)
    cli = str(blender_ext_cli())
    command = [sys.executable, cli, "build", "--source-dir", str(repo), "--output-dir", str(output_dir)]
    if subprocess.call(command) != 0 or not package.is_file():
        raise RuntimeError(f"blender_ext.py build failed for {repo}")
    if subprocess.call([sys.executable, cli, "validate", str(package)]) != 0:
        raise RuntimeError(f"blender_ext.py validate failed for {package}")
    return package


def repository(directory: pathlib.Path, repo: pathlib.Path = REPO) -> pathlib.Path:
    """Build the zip into ``directory`` and list every package there in its ``index.json``; returns
    the index's path. Raises RuntimeError as :func:`build`, or when the listing fails."""
    build(directory, repo)
    command = [sys.executable, str(blender_ext_cli()), "server-generate", "--repo-dir", str(directory)]
    index = directory / "index.json"
    if subprocess.call(command) != 0 or not index.is_file():
        raise RuntimeError(f"blender_ext.py server-generate failed for {directory}")
    return index


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--output-dir", type=pathlib.Path, default=REPO / "dist")
    where.add_argument("--repository", type=pathlib.Path, help="make DIR a static extensions repository")
    arguments = parser.parse_args()
    try:
        if arguments.repository is not None:
            print(repository(arguments.repository.resolve()))
        else:
            print(build(arguments.output_dir.resolve()))
    except RuntimeError as error:
        print(f"tools/build.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
