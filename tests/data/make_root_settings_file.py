# SPDX-License-Identifier: GPL-3.0-or-later
"""Build ``two_bone_ik_root_settings.blend`` and ``.json``: a file of the network's earlier layout.

Test data for Update Mechanism's move of a chain's keys (docs/design.md, "Where a chain's keys
live"): in the network's earlier layout (up to e80dfb6) the chain's settings were custom properties
of the network's root bone, ``pose.bones["MCH-IK-shin-root"]["influence"]``, and its rolls the
solved bones' own channels (``MCH-IK-thigh`` axis-angle, ``MCH-IK-shin`` quaternion), all hidden
from the animation editors.

Run it with the path of a clean checkout of such a commit (the committed file was made from
e80dfb6) as the only argument, with the Python of the OLDEST supported Blender (4.2), so every
supported version can open the file. The in-Blender helpers come from this tree::

    git clone --quiet --shared . /tmp/old && git -C /tmp/old checkout --quiet e80dfb6
    bash tools/matrix.sh 4.2        # makes .venv-matrix/4.2 (bpy 4.2) if it is missing
    .venv-matrix/4.2/bin/python tests/data/make_root_settings_file.py /tmp/old
    rm -rf /tmp/old

The scene, frames 1 to 8: the rig of the 0.1.0 file (make_0_1_0_file.py: armature "Rig" at
(1, 2, 0) turned 30 degrees, thigh/shin/foot and an arm) with a chain on shin added by the Add
operator (empties "IK Target shin" and "IK Pole shin", parented to the rig). In the armature's
action "Walk": the FK thigh and shin turned off the rest bend plane and keyed at frames 1 and 6,
Snap IK to FK with Auto Keying on each (which keys the target, the pole and the rolls), then the
chain's Influence (1, 0.5, 1 at frames 1, 4, 8), Twist (0, 0.4 at 1, 8), Softness (0, 0.2 at
1, 8) and Enabled (on at 1, off at 7) on the root bone. A second action "Run" (fake user, not
assigned) has Influence and Twist keys on the same root bone path.

The JSON records, per frame, the evaluated world head and tail of every bone but the network's,
the Walk action's F-Curve paths on the network, and Run's. Floats rounded to 9 decimals.
"""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_0_1_0_file import _rounded, add_chain, build_rig, start, write_files  # noqa: E402

STEM = "two_bone_ik_root_settings"
BLEND = HERE / f"{STEM}.blend"
RECORD = HERE / f"{STEM}.json"
FRAMES = range(1, 9)
# FK rotations (thigh, shin; Euler XYZ) at the frames Snap IK to FK keys: knees off the bend plane.
SNAPS = {1: ((0.3, 0.25, 0.1), (-0.9, 0.3, 0.0)), 6: ((0.6, -0.2, 0.05), (-1.2, -0.25, 0.1))}
SETTINGS = {
    "influence": {1: 1.0, 4: 0.5, 8: 1.0},
    "twist": {1: 0.0, 8: 0.4},
    "softness": {1: 0.0, 8: 0.2},
    "enabled": {1: True, 7: False},
}
RUN = {"influence": {1: 0.3, 5: 1.0}, "twist": {1: -0.3, 5: 0.2}}
PREFIX = "MCH-IK-"


def _snap(obj) -> None:
    import bpy

    with bpy.context.temp_override(active_object=obj, object=obj):
        if bpy.ops.pose.two_bone_ik_snap_ik_to_fk() != {"FINISHED"}:
            raise RuntimeError("Snap IK to FK failed")


def key_and_snap(obj, chain, snaps: dict, names: tuple[str, str], snap) -> None:
    """With Auto Keying, at each frame of ``snaps`` ({frame: (upper, lower) Euler XYZ}): ``chain``
    off, the rotations of bones ``names`` set and keyed, ``snap()`` (Snap IK to FK), ``chain`` on."""
    import bpy

    scene = bpy.context.scene
    scene.tool_settings.use_keyframe_insert_auto = True
    for frame, rotations in snaps.items():
        scene.frame_set(frame)
        chain.enabled = False
        for name, rotation in zip(names, rotations, strict=True):
            bone = obj.pose.bones[name]
            bone.rotation_mode = "XYZ"
            bone.rotation_euler = rotation
            bone.keyframe_insert("rotation_euler", frame=frame)
        snap()
        chain.enabled = True
    scene.tool_settings.use_keyframe_insert_auto = False


def build_scene():
    import bpy

    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    obj = build_rig()
    obj.animation_data_create().action = bpy.data.actions.new("Walk")
    chain = add_chain(obj, "shin")  # the earlier version's Add, which knows no controls option
    key_and_snap(obj, chain, SNAPS, ("thigh", "shin"), lambda: _snap(obj))
    root = obj.pose.bones[f"{PREFIX}shin-root"]
    for name, keys in SETTINGS.items():
        for frame, value in keys.items():
            root[name] = value
            root.keyframe_insert(f'["{name}"]', frame=frame)
    walk = obj.animation_data.action
    run = bpy.data.actions.new("Run")
    run.use_fake_user = True
    obj.animation_data.action = run
    for name, keys in RUN.items():
        for frame, value in keys.items():
            root[name] = value
            root.keyframe_insert(f'["{name}"]', frame=frame)
    obj.animation_data.action = walk
    if hasattr(obj.animation_data, "action_slot") and walk.slots:
        obj.animation_data.action_slot = walk.slots[0]
    scene.frame_set(FRAMES[0])
    return obj


def _paths(action) -> list[str]:
    if hasattr(action, "layers") and len(action.layers):
        curves = [
            f
            for layer in action.layers
            for strip in layer.strips
            for bag in strip.channelbags
            for f in bag.fcurves
        ]
    else:
        curves = list(action.fcurves)
    return sorted(
        {fcurve.data_path for fcurve in curves if fcurve.data_path.startswith(f'pose.bones["{PREFIX}')}
    )


def frame_record(obj) -> dict:
    import bpy

    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    world = evaluated.matrix_world
    return {
        bone.name: {"head": list(world @ bone.head), "tail": list(world @ bone.tail)}
        for bone in evaluated.pose.bones
        if not bone.name.startswith(PREFIX)
    }


def main(checkout: pathlib.Path) -> None:
    start(checkout)
    import bpy

    obj = build_scene()
    if f"{PREFIX}shin-root" not in obj.pose.bones or "influence" not in obj.pose.bones[f"{PREFIX}shin-root"]:
        raise RuntimeError(f"{checkout} keeps no settings on the network's root bone: not the earlier layout")
    scene = bpy.context.scene
    frames = {}
    for frame in FRAMES:
        scene.frame_set(frame)
        frames[str(frame)] = frame_record(obj)
    scene.frame_set(FRAMES[0])
    record = {
        "about": (
            "Saved with the network's earlier layout (tests/data/make_root_settings_file.py): the "
            "chain's settings on MCH-IK-shin-root, its rolls in MCH-IK-thigh/MCH-IK-shin channels. "
            "'frames' holds, per frame, the evaluated world head and tail of every non-network bone."
        ),
        "blender_version": bpy.app.version_string,
        "chain_length": chain_length(obj),
        "keyed_frames": sorted({*SNAPS, *(f for keys in SETTINGS.values() for f in keys)}),
        "walk_network_paths": _paths(bpy.data.actions["Walk"]),
        "run_network_paths": _paths(bpy.data.actions["Run"]),
        "frames": frames,
    }
    write_files(BLEND, RECORD, _rounded(record))


def chain_length(obj) -> float:
    bones = obj.data.bones
    return (bones["shin"].head_local - bones["thigh"].head_local).length + bones["shin"].length


if __name__ == "__main__":
    if len(sys.argv) != 2 or not (pathlib.Path(sys.argv[1]) / "network" / "build.py").is_file():
        sys.exit(f"usage: {sys.argv[0]} PATH_TO_CHECKOUT_OF_THE_EARLIER_NETWORK_LAYOUT (e80dfb6)")
    main(pathlib.Path(sys.argv[1]).resolve())
