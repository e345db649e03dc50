# SPDX-License-Identifier: GPL-3.0-or-later
"""Build ``two_bone_ik_0_1_0.blend`` and ``two_bone_ik_0_1_0.json``: a file saved by Two-Bone IK 0.1.0.

Test data for the old-files upgrade: 0.1.0 kept the animator's FK pose in hidden chain properties
(``fk_upper``, ``fk_lower``, ``fk_end``, ``written_*``, ``has_written``, ``has_written_end``,
``fk_serial``) and wrote the solved pose into the bones' ``matrix_basis`` (the animator's channels).

Run it with the path of a checkout of the ``v0.1.0`` tag as the only argument, with the Python that
has the real ``bpy`` module of the OLDEST supported Blender (4.2): a file saved by 5.0 has a header
4.2 cannot read, and the test opens the file on every supported version::

    git worktree add /tmp/v010 v0.1.0
    bash tools/matrix.sh 4.2        # makes .venv-matrix/4.2 (bpy 4.2) if it is missing
    .venv-matrix/4.2/bin/python tests/data/make_0_1_0_file.py /tmp/v010
    git worktree remove /tmp/v010 --force

It enables that checkout as the extension with the in-Blender test helpers (tests/support/blender_rig.py:
a temp folder with a ``two_bone_ik`` link to it, as a local extensions repository) and builds, in an
empty scene (bpy 4.2 then exits with status 139 after writing: docs/blender-4.2-exit-crash.md):

- armature object "Rig" at (1, 2, 0), turned 30 degrees about Z, with bones
  thigh (0,0,1)->(0,0.05,0.5), shin ->(0,0,0) connected, foot ->(0,-0.15,0) connected to shin;
  upper_arm (0.5,0,1.5)->(0.5,0.3,1.5), forearm ->(0.5,0.6,1.5) connected, hand ->(0.5,0.7,1.5)
  connected to forearm. thigh, foot, upper_arm and hand rotate in QUATERNION mode, shin and
  forearm in XYZ Euler (so both kinds of channel are covered).
- chain "shin" (thigh -> shin), added with ``pose.two_bone_ik_add`` after an FK rotation of 0.4 rad
  about X on the thigh: target moved to a reachable point, target turned 0.3 rad about Z,
  influence 0.5, End Rotation "TARGET" (0.1.0 also wrote the foot).
- chain "forearm" (upper_arm -> forearm), added the same way: target out of reach, influence 1,
  End Rotation "FK".

The JSON records, per chain: the evaluated world head and tail of its bones and end bone, the
channels of those bones as saved (0.1.0's written, solved pose), the stored FK and written
``matrix_basis`` values (raw, and as the channel values they stand for), ``reachable``, ``too_close``
and ``status``; plus the object, target and pole placement. Floats are rounded to 9 decimals.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
BLEND = HERE / "two_bone_ik_0_1_0.blend"
RECORD = HERE / "two_bone_ik_0_1_0.json"


# (name, head, tail, parent, connected, rotation mode), armature space.
BONES = (
    ("thigh", (0, 0, 1), (0, 0.05, 0.5), None, False, "QUATERNION"),
    ("shin", (0, 0.05, 0.5), (0, 0, 0), "thigh", True, "XYZ"),
    ("foot", (0, 0, 0), (0, -0.15, 0), "shin", True, "QUATERNION"),
    ("upper_arm", (0.5, 0, 1.5), (0.5, 0.3, 1.5), None, False, "QUATERNION"),
    ("forearm", (0.5, 0.3, 1.5), (0.5, 0.6, 1.5), "upper_arm", True, "XYZ"),
    ("hand", (0.5, 0.6, 1.5), (0.5, 0.7, 1.5), "forearm", True, "QUATERNION"),
)
# Chain (lower bone) -> (upper, lower, end) bones.
CHAINS = {"shin": ("thigh", "shin", "foot"), "forearm": ("upper_arm", "forearm", "hand")}
DIGITS = 9
UPDATES = 5


def _rounded(value):
    if isinstance(value, float):
        return round(value, DIGITS) + 0.0  # + 0.0: no -0.0 in the file
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(item) for item in value]
    return value


def rig_helpers():
    """The in-Blender test helpers (tests/support/blender_rig.py), imported once bpy may be."""
    sys.path.insert(0, str(HERE.parent / "support"))
    import blender_rig

    return blender_rig


def build_rig():
    import bpy

    obj = rig_helpers().make_armature("Rig", [bone[:5] for bone in BONES])
    obj.location = (1.0, 2.0, 0.0)
    obj.rotation_euler = (0.0, 0.0, math.radians(30.0))
    for name, *_, mode in BONES:
        obj.pose.bones[name].rotation_mode = mode
    bpy.context.view_layer.update()
    return obj


def add_chain(obj, lower: str):
    """Run 0.1.0's ``pose.two_bone_ik_add`` in Pose Mode with only ``lower`` selected and active."""
    import bpy

    select = "select" in bpy.types.PoseBone.bl_rna.properties  # PoseBone.select from 5.0, Bone before
    rig_helpers().set_mode(obj, "POSE")
    for pose_bone in obj.pose.bones:
        (pose_bone if select else pose_bone.bone).select = pose_bone.name == lower
    pose_bone = obj.pose.bones[lower]
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=pose_bone):
        if bpy.ops.pose.two_bone_ik_add() != {"FINISHED"}:
            raise RuntimeError(f"pose.two_bone_ik_add failed on '{lower}'")
    rig_helpers().set_mode(obj, "OBJECT")
    chain = obj.two_bone_ik.chains[-1]
    assert chain.lower_bone == lower, chain.lower_bone
    return chain


def update(times: int = UPDATES) -> None:
    import bpy

    for _ in range(times):
        bpy.context.view_layer.update()


def channels_of_basis(basis, pose_bone) -> dict:
    """The channel values a ``matrix_basis`` stands for on ``pose_bone`` (its rotation mode)."""
    location, rotation, scale = basis.decompose()
    mode = pose_bone.rotation_mode
    values = {"location": list(location), "scale": list(scale), "rotation_mode": mode}
    if mode == "QUATERNION":
        values["rotation_quaternion"] = list(rotation)
    elif mode == "AXIS_ANGLE":
        axis, angle = rotation.to_axis_angle()
        values["rotation_axis_angle"] = [angle, *axis]
    else:
        values["rotation_euler"] = list(basis.to_3x3().normalized().to_euler(mode))
    return values


def channels(pose_bone) -> dict:
    """The bone's channels as they are (quaternion and Euler both, whatever the mode)."""
    return {
        "rotation_mode": pose_bone.rotation_mode,
        "rotation_quaternion": list(pose_bone.rotation_quaternion),
        "rotation_euler": list(pose_bone.rotation_euler),
        "location": list(pose_bone.location),
        "scale": list(pose_bone.scale),
        "matrix_basis": [list(row) for row in pose_bone.matrix_basis],
    }


def record(obj) -> dict:
    import bpy
    from mathutils import Matrix

    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    world = evaluated.matrix_world
    chains = {}
    for chain in obj.two_bone_ik.chains:
        bones = CHAINS[chain.name]
        stored = {
            "has_written": chain.has_written,
            "has_written_end": chain.has_written_end,
            "fk_serial": chain.fk_serial,
        }
        fk_channels: dict[str, dict | None] = {}
        written_channels: dict[str, dict | None] = {}
        for slot, bone in zip(("upper", "lower", "end"), bones, strict=True):
            for kind, into in (("fk", fk_channels), ("written", written_channels)):
                flat = list(getattr(chain, f"{kind}_{slot}"))
                stored[f"{kind}_{slot}"] = flat
                has = chain.has_written_end if slot == "end" else chain.has_written
                if has:
                    basis = Matrix((flat[0:4], flat[4:8], flat[8:12], flat[12:16]))
                    into[bone] = {"slot": slot, **channels_of_basis(basis, obj.pose.bones[bone])}
                else:
                    into[bone] = None  # never stored: 0.1.0 did not write this bone
        chains[chain.name] = {
            "upper_bone": chain.upper_bone,
            "lower_bone": chain.lower_bone,
            "end_bone_used": bones[2],
            "influence": chain.influence,
            "end_rotation": chain.end_rotation,
            "target": chain.target.name,
            "pole": chain.pole.name,
            "target_world_matrix": [list(row) for row in chain.target.matrix_world],
            "pole_world_location": list(chain.pole.matrix_world.translation),
            "reachable": chain.reachable,
            "too_close": chain.too_close,
            "status": chain.status,
            "world_head": {b: list(world @ evaluated.pose.bones[b].head) for b in bones},
            "world_tail": {b: list(world @ evaluated.pose.bones[b].tail) for b in bones},
            "channels": {b: channels(obj.pose.bones[b]) for b in bones},
            "fk_channels": fk_channels,
            "written_channels": written_channels,
            "stored": stored,
        }
    return {
        "about": (
            "Saved by Two-Bone IK 0.1.0 (tests/data/make_0_1_0_file.py). 'channels' are the bones' "
            "channels in the file: 0.1.0's written, solved pose. 'fk_channels' are the animator's FK "
            "channels 0.1.0 stored in fk_upper/fk_lower/fk_end (null: not stored). 'world_head' and "
            "'world_tail' are the evaluated world positions with 0.1.0 enabled."
        ),
        "extension_version": "0.1.0",
        "blender_version": bpy.app.version_string,
        "blend_file": BLEND.name,
        "armature": obj.name,
        "armature_world_matrix": [list(row) for row in world],
        "bones": {
            name: {"head": list(h), "tail": list(t), "parent": p, "connected": c}
            for name, h, t, p, c, _ in BONES
        },
        "chains": chains,
    }


def start(checkout: pathlib.Path) -> None:
    """A fresh user folder, ``checkout`` enabled as the extension, an empty scene (bpy is imported
    here: the user folder must be set before)."""
    user = tempfile.mkdtemp(prefix="two_bone_ik_user_")
    os.environ["BLENDER_USER_RESOURCES"] = user
    os.environ["XDG_CACHE_HOME"] = os.path.join(user, "cache")
    import bpy

    rig_helpers().enable_extension(checkout)
    bpy.ops.wm.read_homefile(use_empty=True)


def main(checkout: pathlib.Path) -> None:
    start(checkout)
    import bpy
    from mathutils import Quaternion, Vector

    obj = build_rig()

    # Leg: an FK pose on the thigh before the chain exists, so 0.1.0 stores a non-trivial FK pose.
    obj.pose.bones["thigh"].rotation_quaternion = Quaternion((1.0, 0.0, 0.0), 0.4)
    update()
    leg = add_chain(obj, "shin")
    update()
    leg.target.location = (1.3, 2.1, 0.3)
    leg.target.rotation_euler = (0.0, 0.0, 0.3)
    leg.influence = 0.5
    leg.end_rotation = "TARGET"
    update()

    # Arm: straight, target out of its reach (root to target 1.3, chain length 0.6).
    arm = add_chain(obj, "forearm")
    update()
    arm.target.location = obj.matrix_world @ Vector((0.5, 1.2, 1.0))
    arm.influence = 1.0
    arm.end_rotation = "FK"
    update()

    bpy.context.view_layer.objects.active = obj
    for chain in obj.two_bone_ik.chains:
        if not chain.has_written:
            raise RuntimeError(f"0.1.0 stored no pose for chain '{chain.name}'")
    if not leg.reachable or arm.reachable:
        raise RuntimeError(f"unexpected reach: leg {leg.reachable}, arm {arm.reachable}")

    write_files(BLEND, RECORD, _rounded(record(obj)))


def write_files(blend: pathlib.Path, record_path: pathlib.Path, values) -> None:
    """Save the open file as ``blend`` (compressed, no backup) and ``values`` as JSON."""
    import bpy

    blend.unlink(missing_ok=True)  # no .blend1 backup of an earlier run
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), compress=True)
    record_path.write_text(json.dumps(values, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {blend} ({blend.stat().st_size} bytes) and {record_path}")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not (pathlib.Path(sys.argv[1]) / "blender_manifest.toml").is_file():
        sys.exit(f"usage: {sys.argv[0]} PATH_TO_V0.1.0_CHECKOUT")
    manifest = (pathlib.Path(sys.argv[1]) / "blender_manifest.toml").read_text(encoding="utf-8")
    if 'version = "0.1.0"' not in manifest:
        sys.exit(f"{sys.argv[1]} is not a checkout of v0.1.0 (see its blender_manifest.toml)")
    main(pathlib.Path(sys.argv[1]).resolve())
