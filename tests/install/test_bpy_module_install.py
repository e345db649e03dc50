# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's install into the ``bpy`` module (README, "Into the `bpy` module (pipelines)"), run
as written: its first Python block installs the built zip in a fresh user folder
(BLENDER_USER_RESOURCES in a temp dir) and saves the preferences; a NEW process runs its second
block and finds the extension enabled, with its operators. The README's reasons are checked too: a
new process without ``read_userpref()`` has no extension, and its third block (``addon_utils.enable``)
enables the installed copy without the saved preferences (the README's way on Blender 4.2, whose
``read_userpref()`` crashes).

The code comes from the README itself, so the documented steps and this test cannot drift apart.
"""

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys

import pytest
from blender_process import exited_cleanly

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
HEADING = "### Into the `bpy` module (pipelines)"
PLACEHOLDER = "/path/to/two_bone_ik-0.2.0.zip"
MODULE = "bl_ext.user_default.two_bone_ik"
# Appended to each block run in a new process: what the extension's registration left there.
PROBE = f"""
import bpy as _bpy
print("PROBE enabled", {MODULE!r} in _bpy.context.preferences.addons)
print("PROBE operator", "two_bone_ik_add" in dir(_bpy.ops.pose))
"""


def readme_blocks() -> list[str]:
    """The Python blocks of the README's bpy-module install section, in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.find(f"\n{HEADING}\n")
    assert start >= 0, f"README.md has no {HEADING!r} section"
    section = re.split(r"^#{1,3} ", text[start + len(HEADING) + 2 :], maxsplit=1, flags=re.M)[0]
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    assert len(blocks) == 3, f"expected install, new-process and addon_utils blocks, got {len(blocks)}"
    return blocks


def run_python(code: str, folder: pathlib.Path) -> subprocess.CompletedProcess:
    """``code`` in a new Python (this venv's, with bpy) whose Blender user folder is folder/user."""
    env = dict(
        os.environ,
        BLENDER_USER_RESOURCES=str(folder / "user"),
        XDG_CACHE_HOME=str(folder / "cache"),
    )
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,  # not the checkout: nothing may be importable from it
        timeout=300,
        check=False,
    )
    assert exited_cleanly(completed.returncode), completed.stdout + completed.stderr
    return completed


def probed(completed: subprocess.CompletedProcess) -> dict[str, bool]:
    return {
        line.split()[1]: line.split()[2] == "True"
        for line in completed.stdout.splitlines()
        if line.startswith("PROBE ")
    }


@pytest.fixture(scope="module")
def installed(extension_zip, tmp_path_factory) -> pathlib.Path:
    """A folder whose user/ holds the extension, installed by the README's first block."""
    folder = tmp_path_factory.mktemp("bpy_module")
    (folder / "user").mkdir()
    install = readme_blocks()[0]
    assert install.count(PLACEHOLDER) == 1, f"the install block has no {PLACEHOLDER!r} to point at the zip"
    completed = run_python(install.replace(PLACEHOLDER, extension_zip.as_posix()), folder)
    assert "Traceback" not in completed.stderr, completed.stderr
    assert (folder / "user" / "extensions" / "user_default" / "two_bone_ik" / "__init__.py").is_file()
    assert (folder / "user" / "config" / "userpref.blend").is_file(), "the preferences were not saved"
    return folder


@pytest.mark.skipif(
    importlib.metadata.version("bpy").startswith("4.2."),
    reason="bpy 4.2's read_userpref() crashes the process, with or without the extension (README)",
)
def test_a_new_process_finds_the_extension_enabled(installed):
    """The README's second block in a new process: read_userpref() enables the installed extension."""
    completed = run_python(readme_blocks()[1] + PROBE, installed)
    output = completed.stdout + completed.stderr
    assert probed(completed) == {"enabled": True, "operator": True}, output
    assert "Add-on not loaded" not in output and "Traceback" not in output, output


def test_without_read_userpref_a_new_process_has_no_extension(installed):
    """Why the README needs read_userpref(): import bpy alone starts on factory preferences."""
    completed = run_python("import bpy\n" + PROBE, installed)
    assert probed(completed) == {"enabled": False, "operator": False}, completed.stdout + completed.stderr


def test_addon_utils_enables_the_installed_copy_without_the_preferences(installed):
    """The README's third block in a new process: the installed copy enabled, from the user folder."""
    code = readme_blocks()[2] + PROBE + f"import sys\nprint('FILE', sys.modules[{MODULE!r}].__file__)\n"
    completed = run_python(code, installed)
    output = completed.stdout + completed.stderr
    assert probed(completed) == {"enabled": True, "operator": True}, output
    module_file = next(line[5:] for line in completed.stdout.splitlines() if line.startswith("FILE "))
    assert pathlib.Path(module_file).resolve().is_relative_to((installed / "user").resolve()), module_file
