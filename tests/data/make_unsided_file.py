# SPDX-License-Identifier: GPL-3.0-or-later
"""Build ``two_bone_ik_unsided.blend`` and ``.json``: a file of the network's layout before sides.

Test data for Update Mechanism's upgrade of a network built before the chain's side and the lower
bone's own turn (docs/design.md, "The chain in Blender's pose tools"): up to 405f180 the network
read Twist and the rolls as stored on both sides of a rig, and dropped the lower bone's own turn
about its axis.

Run it with the path of a clean checkout of such a commit (the committed file was made from
405f180) as the only argument, with the Python of the OLDEST supported Blender (4.2), so every
supported version can open the file. The in-Blender helpers come from this tree::

    git clone --quiet --shared . /tmp/old && git -C /tmp/old checkout --quiet 405f180
    bash tools/matrix.sh 4.2        # makes .venv-matrix/4.2 (bpy 4.2) if it is missing
    .venv-matrix/4.2/bin/python tests/data/make_unsided_file.py /tmp/old
    rm -rf /tmp/old

The scene, frames 1 to 8: armature "Legs" (root; hips, thigh, shin, foot per side, .L and .R) with
chains on both shins, added by the Add operator with Mirror and control bones. In the armature's
action "Walk": the right leg's FK thigh and shin keyed at frames 1 and 6 (the shin turned about its
own axis, in Euler XYZ), Snap IK to FK with Auto Keying on each (which keys the controls and the
rolls), and the right chain's Twist keyed 0 and 0.4 at frames 1 and 8; the left chain's Twist 0.3,
not keyed, and its shin turned 0.2 about its own axis, not keyed.

The JSON records, per frame, the evaluated world head and tail of every bone but the network's, and
the right chain's Twist keys. Floats rounded to 9 decimals.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_0_1_0_file import _rounded, rig_helpers, start, write_files  # noqa: E402
from make_root_settings_file import FRAMES, frame_record, key_and_snap  # noqa: E402

BLEND, RECORD = (HERE / f"two_bone_ik_unsided.{kind}" for kind in ("blend", "json"))
# FK rotations (thigh, shin; Euler XYZ) of the right leg at the frames Snap IK to FK keys: the shin
# bent and turned about its own axis.
SNAPS = {1: ((0.3, 0.1, 0.0), (-0.9, 0.3, 0.0)), 6: ((0.6, -0.2, 0.05), (-1.2, -0.25, 0.1))}
TWIST = {1: 0.0, 8: 0.4}
LEFT_TWIST = 0.3
LEFT_TURN = (0.0, 0.2, 0.0)


def build_scene():
    import bpy

    helpers = rig_helpers()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    obj = helpers.make_armature("Legs", helpers.mirrored_legs_bones())
    obj.animation_data_create().action = bpy.data.actions.new("Walk")
    helpers.add_chain_with_operator(obj, "shin.L", controls="BONES", mirror=True)
    left, right = obj.two_bone_ik.chains["shin.L"], obj.two_bone_ik.chains["shin.R"]

    def snap() -> None:
        with bpy.context.temp_override(active_object=obj, object=obj):
            if bpy.ops.pose.two_bone_ik_snap_ik_to_fk(chain="shin.R") != {"FINISHED"}:
                raise RuntimeError("Snap IK to FK failed")

    key_and_snap(obj, right, SNAPS, ("thigh.R", "shin.R"), snap)
    lower = obj.pose.bones["shin.R"]
    for frame, value in TWIST.items():
        lower["IK Twist"] = value
        lower.keyframe_insert('["IK Twist"]', frame=frame)
    left.twist = LEFT_TWIST
    obj.pose.bones["shin.L"].rotation_mode = "XYZ"
    obj.pose.bones["shin.L"].rotation_euler = LEFT_TURN
    scene.frame_set(FRAMES[0])
    return obj


def main(checkout: pathlib.Path) -> None:
    start(checkout)
    import bpy

    obj = build_scene()
    root = obj.pose.bones["MCH-IK-shin.R-root"]
    if "IK Side" in root or "influence" in root:
        raise RuntimeError(f"{checkout} is not the layout before sides (405f180)")
    scene = bpy.context.scene
    frames = {str(frame): (scene.frame_set(frame), frame_record(obj))[1] for frame in FRAMES}
    scene.frame_set(FRAMES[0])
    record = {
        "about": (
            "Saved with the network's layout before sides (tests/data/make_unsided_file.py): Twist "
            "and the rolls read as stored on both sides, the lower bone's own turn dropped. "
            "'frames' holds, per frame, the evaluated world head and tail of every non-network bone."
        ),
        "blender_version": bpy.app.version_string,
        "keyed_frames": sorted({*SNAPS, *TWIST}),
        "twist_keys": {str(frame): value for frame, value in TWIST.items()},
        "left_twist": LEFT_TWIST,
        "frames": frames,
    }
    write_files(BLEND, RECORD, _rounded(record))


if __name__ == "__main__":
    if len(sys.argv) != 2 or not (pathlib.Path(sys.argv[1]) / "network" / "spec.py").is_file():
        sys.exit(f"usage: {sys.argv[0]} PATH_TO_CHECKOUT_OF_THE_LAYOUT_BEFORE_SIDES (405f180)")
    main(pathlib.Path(sys.argv[1]).resolve())
