# SPDX-License-Identifier: GPL-3.0-or-later
"""Build ``two_bone_ik_unreleased_mch.blend`` and ``.json``: a file saved with the MCH-IK mechanism.

Test data for the upgrade from the mechanism of the unreleased version after 0.1.0 (CHANGELOG,
"Unreleased"; the manifest still says 0.1.0, so the file is named after the mechanism, not the
version): chains stored in ``obj.two_bone_ik.chains``, made by the Add operator or by script and
Update Mechanism; the solve written into hidden bones ``MCH-IK-<bone>`` (bone collection "Two-Bone
IK Mechanism") and copied onto the chain bones by Copy Transforms constraints "Two-Bone IK" (local
space), End Rotation Target a Copy Rotation "Two-Bone IK End Rotation" on the end bone, and each
constraint's influence driven by ``influence * enabled`` of its chain. The bones' own channels are
the animator's FK pose.

Run it with the path of a clean checkout of a commit that has that mechanism (the committed file
was made from 617cc4f) as the only argument, with the Python that has the real ``bpy`` module of
the OLDEST supported Blender (4.2): a file saved by 5.0 has a header 4.2 cannot read, and a test
opens the file on every supported version. The in-Blender helpers come from this tree::

    git clone --quiet --shared . /tmp/mch && git -C /tmp/mch checkout --quiet 617cc4f
    bash tools/matrix.sh 4.2        # makes .venv-matrix/4.2 (bpy 4.2) if it is missing
    .venv-matrix/4.2/bin/python tests/data/make_unreleased_mch_file.py /tmp/mch
    rm -rf /tmp/mch

It enables that checkout as the extension with the in-Blender test helpers (tests/support/blender_rig.py:
a temp folder with a ``two_bone_ik`` link to it, as a local extensions repository) and builds, in an
empty scene, frames 1 to 6:

- armature object "Rig" at (1, 2, 0), turned 30 degrees about Z, with the bones of the 0.1.0 file
  (make_0_1_0_file.py): thigh (0,0,1)->(0,0.05,0.5), shin ->(0,0,0) connected, foot ->(0,-0.15,0)
  connected to shin; upper_arm (0.5,0,1.5)->(0.5,0.3,1.5), forearm ->(0.5,0.6,1.5) connected, hand
  ->(0.5,0.7,1.5) connected to forearm. thigh, foot, upper_arm and hand rotate in QUATERNION mode,
  shin and forearm in XYZ Euler.
- chain "shin" (thigh -> shin, end bone foot), added with ``pose.two_bone_ik_add`` (target "IK Target
  shin" and pole "IK Pole shin", parented to the rig), End Rotation "TARGET". Keyed: the target's
  location and rotation (frames 1, 3, 6, all within reach), the chain's influence (1, 0.4, 1, 1 at
  frames 1, 3, 5, 6), twist (0, 0.5, 0.5 rad at 1, 4, 6) and softness (0, 0.3, 0.3 at 1, 4, 6),
  and an FK rotation of the thigh (frames 1 and 6).
- chain "forearm" (upper_arm -> forearm, end bone hand) added by script (``chains.add()``, then
  Update Mechanism) with NO pole, target the unparented empty "Arm Target", End Rotation "FK".
  Keyed: the target's location (frames 1, 4 within reach, frame 6 out of reach) and an FK rotation
  of the hand (frames 1 and 6).

The JSON records, for each frame 1 to 6 (``scene.frame_set``, the evaluated depsgraph): the evaluated
world head and tail of every pose bone but the mechanism's (names not starting "MCH-IK-"), each
chain's settings as evaluated that frame, its target and pole placement and its readouts (state,
status, reachable, too_close, shortfall, shortfall_cause); plus the bones, the chains' set-up, the
keys, and the mechanism as saved (mechanism bones, constraints, drivers). Before writing, it checks
the numbers: at influence 1 the chain bones match the solver for that frame's twist and softness,
a reachable chain with softness 0 has its end on the target, End Rotation Target turns the foot as
the target, and the same frames give the same pose in reverse order. Floats are rounded to 9
decimals.
"""

from __future__ import annotations

import math
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# The 0.1.0 file's rig and helpers: the same bones and placement, rounded the same way.
from make_0_1_0_file import BONES, CHAINS, _rounded, build_rig, rig_helpers, write_files  # noqa: E402

STEM = "two_bone_ik_unreleased_mch"
BLEND = HERE / f"{STEM}.blend"
RECORD = HERE / f"{STEM}.json"

MECHANISM_PREFIX = "MCH-IK-"
# What the extension is made of (blender_manifest.toml's [build]), for the record of its source.
EXTENSION_PATHS = ("blender_manifest.toml", "__init__.py", "solver", "driver", "operators", "ui", "cli")
FRAMES = range(1, 7)
UPDATES = 5
# Agreement with the solver, as a share of the chain's length (the tests' 1e-5).
TOLERANCE = 1e-5

# Keys, world space (the Add operator's empties are parented to the rig with the rig's inverse as
# parent inverse, so their location is their world position). Frame -> value.
LEG_TARGET_LOCATION = {1: (1.30, 2.05, 0.35), 3: (1.10, 2.30, 0.50), 6: (1.45, 1.90, 0.20)}
LEG_TARGET_ROTATION = {1: (0.0, 0.0, 0.3), 3: (0.2, 0.0, 0.6), 6: (0.0, -0.25, 0.1)}
LEG_INFLUENCE = {1: 1.0, 3: 0.4, 5: 1.0, 6: 1.0}
LEG_TWIST = {1: 0.0, 4: 0.5, 6: 0.5}
LEG_SOFTNESS = {1: 0.0, 4: 0.3, 6: 0.3}
THIGH_FK = {1: ((1.0, 0.0, 0.0), 0.0), 6: ((1.0, 0.0, 0.0), 0.4)}  # (axis, angle), quaternion
# Arm, in the rig's space (turned into world by the script): reach 0.6 from the root (0.5, 0, 1.5).
ARM_TARGET_RIG = {1: (0.5, 0.35, 1.25), 4: (0.75, 0.3, 1.4), 6: (0.5, 1.2, 1.0)}
HAND_FK = {1: ((0.0, 0.0, 1.0), 0.0), 6: ((0.0, 0.0, 1.0), 0.5)}


def update(times: int = UPDATES) -> None:
    import bpy

    for _ in range(times):
        bpy.context.view_layer.update()


def key(owner, path: str, frames: dict, convert=lambda value: value) -> None:
    """Key ``owner.path`` at each frame of ``frames`` to ``convert(value)``."""
    for frame, value in frames.items():
        setattr(owner, path, convert(value))
        owner.keyframe_insert(path, frame=frame)


def build_scene():
    """The rig, its two chains and their keys (see the module docstring); returns the rig."""
    import bpy
    from mathutils import Quaternion, Vector

    helpers = rig_helpers()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    scene.frame_set(FRAMES[0])
    obj = build_rig()
    pose = obj.pose.bones

    # Leg: Add operator (target and pole parented to the rig), End Rotation Target.
    leg = helpers.add_chain_with_operator(obj, "shin")
    helpers.set_mode(obj, "OBJECT")
    leg.end_rotation = "TARGET"
    target = leg.target
    if target.parent != obj or leg.pole is None:
        raise RuntimeError("the Add operator made no parented target or no pole")
    key(target, "location", LEG_TARGET_LOCATION)
    key(target, "rotation_euler", LEG_TARGET_ROTATION)
    key(leg, "influence", LEG_INFLUENCE)
    key(leg, "twist", LEG_TWIST)
    key(leg, "softness", LEG_SOFTNESS)
    key(pose["thigh"], "rotation_quaternion", THIGH_FK, lambda value: Quaternion(*value))

    # Arm: by script and Update Mechanism (the helper runs it), no pole, End Rotation FK.
    world = obj.matrix_world.copy()
    arm_target = helpers.make_empty("Arm Target", world @ Vector(ARM_TARGET_RIG[1]))
    arm = helpers.add_chain(obj, arm_target, None, "upper_arm", "forearm")
    arm.end_rotation = "FK"
    key(arm_target, "location", ARM_TARGET_RIG, lambda value: world @ Vector(value))
    key(pose["hand"], "rotation_quaternion", HAND_FK, lambda value: Quaternion(*value))

    scene.frame_set(FRAMES[0])
    update()
    bpy.context.view_layer.objects.active = obj
    return obj


def keys(id_data) -> list[dict]:
    """Every F-curve of ``id_data``'s action: data path, index and keys (frame, value)."""
    found = rig_helpers().package().driver.compat.action_fcurves(id_data)
    return [
        {
            "data_path": fcurve.data_path,
            "index": fcurve.array_index,
            "keys": [list(point.co) for point in fcurve.keyframe_points],
        }
        for fcurve in (found or ())
    ]


def mechanism(obj) -> dict:
    """The mechanism as saved: its bones, every constraint of the chain bones, and the drivers."""
    drivers = []
    if obj.animation_data is not None:
        for fcurve in obj.animation_data.drivers:
            driver = fcurve.driver
            drivers.append(
                {
                    "data_path": fcurve.data_path,
                    "index": fcurve.array_index,
                    "type": driver.type,
                    "expression": driver.expression,
                    "variables": [
                        {
                            "name": variable.name,
                            "type": variable.type,
                            "targets": [
                                {"id": t.id.name if t.id else None, "data_path": t.data_path}
                                for t in variable.targets[: 1 if variable.type == "SINGLE_PROP" else 2]
                            ],
                        }
                        for variable in driver.variables
                    ],
                }
            )
    collections = [
        {"name": c.name, "is_visible": c.is_visible, "bones": [b.name for b in c.bones]}
        for c in obj.data.collections_all
    ]
    return {
        "bones": [
            {
                "name": bone.name,
                "parent": bone.parent.name if bone.parent else None,
                "use_deform": bone.use_deform,
                "hide": bone.hide,
                "head": list(bone.head_local),
                "tail": list(bone.tail_local),
            }
            for bone in obj.data.bones
            if bone.name.startswith(MECHANISM_PREFIX)
        ],
        "bone_collections": collections,
        "constraints": {
            pose_bone.name: [
                {
                    "name": constraint.name,
                    "type": constraint.type,
                    "target": constraint.target.name if getattr(constraint, "target", None) else None,
                    "subtarget": getattr(constraint, "subtarget", ""),
                    "owner_space": constraint.owner_space,
                    "target_space": constraint.target_space,
                    "influence": constraint.influence,
                }
                for constraint in pose_bone.constraints
            ]
            for pose_bone in obj.pose.bones
            if pose_bone.constraints
        },
        "drivers": drivers,
    }


def chain_setup(chain) -> dict:
    return {
        "upper_bone": chain.upper_bone,
        "lower_bone": chain.lower_bone,
        "end_bone_used": CHAINS[chain.name][2],
        "end_bone": chain.end_bone,
        "end_rotation": chain.end_rotation,
        "enabled": chain.enabled,
        "target": chain.target.name,
        "target_parent": chain.target.parent.name if chain.target.parent else None,
        "target_bone": chain.target_bone,
        "pole": chain.pole.name if chain.pole else None,
        "pole_parent": chain.pole.parent.name if chain.pole and chain.pole.parent else None,
        "pole_bone": chain.pole_bone,
    }


def frame_record(obj) -> dict:
    """This frame's evaluated world positions of the animator's bones and each chain's state."""
    import bpy

    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    world = evaluated.matrix_world
    bones = [b for b in evaluated.pose.bones if not b.name.startswith(MECHANISM_PREFIX)]
    chains = {}
    for chain in obj.two_bone_ik.chains:
        target = chain.target.evaluated_get(depsgraph)
        pole = chain.pole.evaluated_get(depsgraph) if chain.pole else None
        chains[chain.name] = {
            "influence": chain.influence,
            "twist": chain.twist,
            "softness": chain.softness,
            "enabled": chain.enabled,
            "target_world_matrix": [list(row) for row in target.matrix_world],
            "pole_world_location": list(pole.matrix_world.translation) if pole else None,
            "state": chain.state,
            "status": chain.status,
            "reachable": chain.reachable,
            "too_close": chain.too_close,
            "shortfall": chain.shortfall,
            "shortfall_cause": chain.shortfall_cause,
        }
    return {
        "world_head": {b.name: list(world @ b.head) for b in bones},
        "world_tail": {b.name: list(world @ b.tail) for b in bones},
        "world_rotation": {
            b.name: list((world @ b.matrix).to_3x3().normalized().to_quaternion()) for b in bones
        },
        "chains": chains,
    }


def check(obj, frames: dict) -> None:
    """Raise unless the recorded numbers are what the extension should give (module docstring)."""
    from mathutils import Matrix, Quaternion, Vector

    helpers = rig_helpers()
    for frame, values in frames.items():
        for name, chain in values["chains"].items():
            upper, lower, end_bone = CHAINS[name]
            if chain["state"] in {"ERROR", "WAITING", "REST"} or chain["status"].startswith("Internal"):
                raise RuntimeError(f"frame {frame}, chain {name}: {chain['state']} {chain['status']!r}")
            length = helpers.chain_length(obj, upper, lower)
            target = Matrix(chain["target_world_matrix"])
            joint, end = values["world_head"][lower], values["world_tail"][lower]
            settled = chain["influence"] == 1.0 and chain["enabled"]
            if settled and chain["pole_world_location"] is not None:
                want_joint, want_end, reachable = helpers.expected_world(
                    obj,
                    target.translation,
                    chain["pole_world_location"],
                    upper,
                    lower,
                    twist=chain["twist"],
                    softness=chain["softness"],
                )
                if reachable != chain["reachable"]:
                    raise RuntimeError(f"frame {frame}, chain {name}: reachable {chain['reachable']}")
                helpers.assert_close(joint, want_joint, TOLERANCE * length)
                helpers.assert_close(end, want_end, TOLERANCE * length)
            if settled and chain["reachable"] and chain["softness"] == 0.0:
                helpers.assert_close(end, target.translation, TOLERANCE * length)
            if settled and obj.two_bone_ik.chains[name].end_rotation == "TARGET":
                turned = Quaternion(values["world_rotation"][end_bone])
                angle = turned.rotation_difference(target.to_quaternion()).angle
                if min(angle, 2 * math.pi - angle) > 1e-5:
                    raise RuntimeError(f"frame {frame}, chain {name}: end bone off by {angle} rad")
            if not chain["reachable"]:
                root = Vector(values["world_head"][upper])
                if (target.translation - root).length <= length:
                    raise RuntimeError(f"frame {frame}, chain {name}: unreachable within reach")
    if not all(values["chains"]["shin"]["reachable"] for values in frames.values()):
        raise RuntimeError("the leg's target left its reach")
    arm = [values["chains"]["forearm"]["reachable"] for values in frames.values()]
    if not arm[0] or arm[-1]:
        raise RuntimeError("the arm is not reachable at frame 1 and out of reach at the last frame")


def source(checkout: pathlib.Path) -> dict:
    """The checkout's commit and its changes to the files the extension is made of."""

    def git(*args):
        result = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else None

    changes = git("status", "--porcelain", "--", *EXTENSION_PATHS)
    return {"commit": git("rev-parse", "HEAD"), "changes": changes.splitlines() if changes else []}


def record(obj, frames: dict, checkout: pathlib.Path, version: str) -> dict:
    import bpy

    return {
        "about": (
            "Saved with the MCH-IK mechanism (tests/data/make_unreleased_mch_file.py): the solve in "
            "hidden MCH-IK-<bone> bones, Copy Transforms / Copy Rotation constraints with drivers "
            "on their influence, the bones' channels the FK pose. 'frames' holds, per frame, the "
            "evaluated world head and tail (and rotation, w x y z) of every non-mechanism pose bone "
            "with the extension enabled, and each chain's evaluated settings and readouts."
        ),
        "extension_version": version,
        "source": source(checkout),
        "blender_version": bpy.app.version_string,
        "blend_file": BLEND.name,
        "frame_saved": bpy.context.scene.frame_current,
        "frame_range": [FRAMES[0], FRAMES[-1]],
        "armature": obj.name,
        "armature_world_matrix": [list(row) for row in obj.matrix_world],
        "bones": {
            name: {"head": list(h), "tail": list(t), "parent": p, "connected": c, "rotation_mode": m}
            for name, h, t, p, c, m in BONES
        },
        "chains": {chain.name: chain_setup(chain) for chain in obj.two_bone_ik.chains},
        "keys": {
            other.name: keys(other)
            for other in bpy.data.objects
            if other.animation_data is not None and other.animation_data.action is not None
        },
        "mechanism": mechanism(obj),
        "frames": {str(frame): values for frame, values in frames.items()},
    }


def main(checkout: pathlib.Path, version: str) -> None:
    user = tempfile.mkdtemp(prefix="two_bone_ik_user_")
    os.environ["BLENDER_USER_RESOURCES"] = user
    os.environ["XDG_CACHE_HOME"] = os.path.join(user, "cache")
    import bpy

    rig_helpers().enable_extension(checkout)
    sys.path.insert(0, str(checkout))  # the checkout's solver, for the helpers' expected_world
    bpy.ops.wm.read_homefile(use_empty=True)
    obj = build_scene()
    if not any(bone.name.startswith(MECHANISM_PREFIX) for bone in obj.data.bones):
        raise RuntimeError(f"{checkout} made no {MECHANISM_PREFIX} bones: not the MCH-IK mechanism")

    scene = bpy.context.scene
    frames = {}
    for frame in FRAMES:
        scene.frame_set(frame)
        frames[frame] = frame_record(obj)
    for frame in reversed(FRAMES):  # the same inputs give the same pose (contract D7)
        scene.frame_set(frame)
        again = frame_record(obj)
        for bone, tail in frames[frame]["world_tail"].items():
            rig_helpers().assert_close(again["world_tail"][bone], tail, 1e-6)
    check(obj, frames)
    scene.frame_set(FRAMES[0])

    write_files(BLEND, RECORD, _rounded(record(obj, frames, checkout, version)))


if __name__ == "__main__":
    if len(sys.argv) != 2 or not (pathlib.Path(sys.argv[1]) / "blender_manifest.toml").is_file():
        sys.exit(f"usage: {sys.argv[0]} PATH_TO_CHECKOUT_WITH_THE_MCH_IK_MECHANISM")
    checkout = pathlib.Path(sys.argv[1]).resolve()
    if not (checkout / "driver" / "mechanism.py").is_file():
        sys.exit(f"{checkout} has no driver/mechanism.py: not a checkout with the MCH-IK mechanism")
    manifest = (checkout / "blender_manifest.toml").read_text(encoding="utf-8")
    version = next(
        line.split("=", 1)[1].strip().strip('"')
        for line in manifest.splitlines()
        if line.startswith("version")
    )
    main(checkout, version)
