# SPDX-License-Identifier: GPL-3.0-or-later
"""``bash tools/two-bone-ik ...``: the extension's headless command in the bpy module.

Enables this checkout as an extension (in a temporary user folder, as the tests do), then runs
``two_bone_ik``'s command with the arguments given, and exits with its status (0 success, 1
failure), as ``blender -b --command two_bone_ik ...`` does on a Blender installation.
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
# Before `import bpy`: keep Blender's user files and caches out of the home folder.
_user = tempfile.mkdtemp(prefix="two_bone_ik_cli_")
os.environ.setdefault("BLENDER_USER_RESOURCES", _user)
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(_user, "cache"))

import bpy  # noqa: E402,F401  (first: it puts Blender's own modules on sys.path)

sys.path.insert(0, str(REPO / "tests" / "support"))
from blender_rig import enable_extension, package  # noqa: E402


def main(argv: list[str]) -> int:
    enable_extension(REPO)
    return package().cli.run(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
