# SPDX-License-Identifier: GPL-3.0-or-later
"""A studio repository: ``tools/build.py --repository DIR``, hosted as files, installed by Blender.

A fresh Blender (a subprocess with an empty user folder) adds DIR by its ``file://`` URL as a remote
repository, syncs it, installs and enables the extension from it and solves a leg (README, "From a
local repository").
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from blender_process import exited_cleanly

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]


def test_studio_repository_installs_and_solves(tmp_path):
    directory = tmp_path / "repository"
    built = subprocess.run(
        [sys.executable, str(REPO / "tools" / "build.py"), "--repository", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    index = pathlib.Path(built.stdout.strip().splitlines()[-1])
    listing = json.loads(index.read_text(encoding="utf-8"))
    assert [package["id"] for package in listing["data"]] == ["two_bone_ik"]
    assert (directory / listing["data"][0]["archive_url"]).resolve().is_file()

    user = tmp_path / "user"
    user.mkdir()
    report_path = tmp_path / "report.json"
    session = subprocess.run(
        [sys.executable, str(HERE / "repository_session.py"), str(index), str(report_path)],
        capture_output=True,
        text=True,
        env=dict(os.environ, BLENDER_USER_RESOURCES=str(user), XDG_CACHE_HOME=str(tmp_path / "cache")),
        cwd=tmp_path,  # not the checkout: nothing may be importable from it
        timeout=300,
        check=False,
    )
    output = session.stdout + session.stderr
    assert exited_cleanly(session.returncode) and report_path.is_file(), output
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert "error" not in report, report.get("error")
    assert report["sync"] == ["FINISHED"] and report["install"] == ["FINISHED"] and report["enabled"]
    assert str(user.resolve()) in report["installed_from"]
    assert report["mechanism"] == ["FINISHED"] and report["status"] == ""
    assert report["end"] == pytest.approx([1.2, 0.0, 0.5], abs=1e-5)
