# SPDX-License-Identifier: GPL-3.0-or-later
"""Copy the windowed run's pictures of the sidebar into docs/images (run by
``bash tools/window.sh --pictures`` after the windowed tests passed on Blender 4.3):
README.md shows panel-reachable.png, docs/panel.md one picture per state.
Usage: python3 pictures.py <run folder> <docs/images>."""

import pathlib
import shutil
import sys

STATES = (
    "reachable",
    "out_of_reach",
    "too_close",
    "pole_on_line",
    "no_pole",
    "disabled",
    "error_no_target",
    "error_cycle",
    "no_chain",
)

run, images = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
missing = [state for state in STATES if not (run / f"picture-{state}.png").exists()]
if missing:
    sys.exit(f"no picture of {', '.join(missing)} in {run}: did the windowed tests run there?")
for state in STATES:
    target = images / f"panel-{state.replace('_', '-')}.png"
    shutil.copyfile(run / f"picture-{state}.png", target)
    print(f"{target} ({target.stat().st_size // 1024} KB)")
