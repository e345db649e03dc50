# SPDX-License-Identifier: GPL-3.0-or-later
"""In-Blender test set-up: real bpy (the PyPI module), the extension enabled from this checkout."""

import os
import pathlib
import tempfile

# Before `import bpy`: keep Blender's user files and caches out of the home folder.
_user = tempfile.mkdtemp(prefix="two_bone_ik_user_")
os.environ.setdefault("BLENDER_USER_RESOURCES", _user)
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(_user, "cache"))

import bpy  # noqa: E402
import pytest  # noqa: E402
from blender_rig import enable_extension  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def extension():
    """The extension's module name, enabled from the checkout for the whole session."""
    return enable_extension(REPO)


@pytest.fixture
def scene(extension):
    """An empty scene with the extension enabled."""
    bpy.ops.wm.read_homefile(use_empty=True)
    return bpy.context.scene
