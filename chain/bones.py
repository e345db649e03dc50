# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's bones on the original armature, and the error a chain that cannot be solved raises."""

from __future__ import annotations

import bpy
from mathutils import Matrix

from ..compat import animation_fcurves
from ..network import health, layout, naming, outputs, spec


class ChainError(Exception):
    """A chain that cannot be solved now; the message is the status shown to the user."""


def chain_bones(obj, chain):
    """The chain's (upper, lower) ``bpy.types.Bone`` on the original armature, or ChainError."""
    bones = obj.data.bones
    upper, lower = bones.get(chain.upper_bone), bones.get(chain.lower_bone)
    if upper is None or lower is None:
        for name, label in ((chain.upper_bone, "upper"), (chain.lower_bone, "lower")):
            if not name:
                raise ChainError(f"Set the chain's {label} bone")
            if bones.get(name) is None:
                new = renamed(obj, chain).get(name)
                if new:
                    raise ChainError(
                        f"Bone '{name}' was renamed '{new}': "
                        "run Pose > Two-Bone IK > Update Mechanism to follow it"
                    )
                raise ChainError(
                    f"Bone '{name}' not found in '{obj.name}': set the chain's {label} bone, "
                    "or remove the chain (Pose > Two-Bone IK > Remove Two-Bone IK Chain)"
                )
    if lower.parent is None or lower.parent.name != upper.name:
        raise ChainError(f"Bone '{lower.name}' is not a child of '{upper.name}'")
    return upper, lower


def checked_bones(obj, chain, driven: frozenset | None = None):
    """The chain's (upper, lower) ``bpy.types.Bone`` when they and the chain's network are whole:
    the precondition of every readout and tool; else ChainError with the status's words
    (:func:`chain_bones`, :func:`network.health.problem`, to which ``driven`` is passed)."""
    upper, lower = chain_bones(obj, chain)
    problem = health.problem(obj, chain, driven)
    if problem:
        raise ChainError(problem)
    return upper, lower


def renamed(obj, chain) -> dict[str, str]:
    """{stored name: bone's name now} for the chain's upper and lower bones renamed since the build:
    gone under their stored name, they still carry the chain's Copy Transforms of their network
    bone (Blender re-points constraints at a renamed bone, never the chain's stored names)."""
    names = naming.chain_parts(chain)
    bones = obj.data.bones
    wanted = {
        solved: stored
        for stored, solved in ((chain.upper_bone, names.upper), (chain.lower_bone, names.lower))
        if stored and bones.get(stored) is None
    }
    found = {}
    for pose_bone in obj.pose.bones if wanted and obj.pose is not None else ():
        constraint = pose_bone.constraints.get(spec.OUTPUT)
        if (
            constraint is not None
            and constraint.type == spec.COPY_UPPER.kind
            and constraint.target == obj
            and constraint.subtarget in wanted
        ):
            found[wanted[constraint.subtarget]] = pose_bone.name
    return found


def renamed_source(obj, chain, which: str) -> str:
    """The name now of the chain's ``which`` ("target" or "pole") bone when it was renamed since
    the build ('' when it was not, or cannot be told): gone under its stored name, it is still the
    bone the network's copy of it aims at (Blender re-points constraints at a renamed bone, never
    the chain's stored name)."""
    armature, stored = layout.source(chain, which)
    if not stored or armature.data.bones.get(stored) is not None:
        return ""
    holder = obj.pose.bones.get(getattr(naming.chain_parts(chain), which))
    constraint = holder.constraints.get(spec.SOURCE[which]) if holder is not None else None
    if constraint is None or constraint.target != armature or not constraint.subtarget:
        return ""
    return constraint.subtarget if armature.data.bones.get(constraint.subtarget) is not None else ""


def missing_control(chain) -> None:
    """ChainError naming the chain's target or pole bone when it is named but its armature has no
    such bone (deleted; a renamed one is followed first: :func:`renamed_source`)."""
    for which in ("target", "pole"):
        armature, bone = layout.source(chain, which)
        if bone and armature.data.bones.get(bone) is None:
            raise ChainError(
                f"{which.capitalize()} bone '{bone}' not found in '{armature.name}': pick a {which}"
            )


def blender_ik(obj, chain) -> list[str]:
    """ "'<constraint>' on '<bone>'" for each enabled IK or Spline IK constraint of ``obj`` whose
    chain takes in one of the chain's bones (:func:`blender_ik_constraints`). Blender solves IK
    trees after every bone's constraint stack, so such a constraint poses those bones whatever the
    chain's constraints do."""
    return [
        f"'{name}' on '{bone}'"
        for bone, name in blender_ik_constraints(obj, chain.upper_bone, chain.lower_bone)
    ]


def blender_ik_constraints(obj, upper: str, lower: str, *, driven: bool = False) -> list[tuple[str, str]]:
    """(pose bone name, constraint name) of each enabled IK or Spline IK constraint of ``obj``
    whose chain takes in bone ``upper`` or ``lower`` (its owner, with the Tail option, and
    ``chain_count`` bones up, 0 meaning to the root). With ``driven``, also the disabled ones whose
    Enabled (or Mute) a driver sets, which the driver can turn on (Rigify's IK with and without
    pole). The chain's own muted "Two-Bone IK Controls" is never one."""
    mine = {upper, lower}
    found = []
    for pose_bone in obj.pose.bones if obj.pose is not None else ():
        for constraint in pose_bone.constraints:
            if constraint.type not in ("IK", "SPLINE_IK") or constraint.name == spec.CONTROLS.name:
                continue
            active = constraint.enabled and constraint.influence > 0.0
            if not active and not (
                driven and enabled_driver(obj, pose_bone.name, constraint.name) is not None
            ):
                continue
            if mine & set(ik_chain(pose_bone, constraint)):
                found.append((pose_bone.name, constraint.name))
    return found


def ik_chain(pose_bone, constraint) -> list[str]:
    """The bones an IK or Spline IK ``constraint`` of ``pose_bone`` solves, from the first up: its
    owner (with the Tail option, else its parent) and ``chain_count`` bones up, 0 meaning to the
    root."""
    bone = pose_bone.bone if getattr(constraint, "use_tail", True) else pose_bone.bone.parent
    count, reached = constraint.chain_count, list[str]()
    while bone is not None and (count == 0 or len(reached) < count):
        reached.append(bone.name)
        bone = bone.parent
    return reached


def constraint_path(bone: str, constraint: str) -> str:
    """The data path (from the armature object) of constraint ``constraint`` of pose bone ``bone``."""
    escape = bpy.utils.escape_identifier
    return f'pose.bones["{escape(bone)}"].constraints["{escape(constraint)}"]'


def switch_paths(bone: str, constraint: str) -> tuple[str, str]:
    """The data paths of what turns constraint ``constraint`` of pose bone ``bone`` on and off: its
    Mute (what Rigify drives) and its Enabled (the same switch, as Blender names it now)."""
    path = constraint_path(bone, constraint)
    return f"{path}.mute", f"{path}.enabled"


def enabled_driver(obj, bone: str, constraint: str):
    """The driver F-Curve that sets the Enabled (or Mute) of constraint ``constraint`` of pose bone
    ``bone``, or None."""
    animation = obj.animation_data
    if animation is None:
        return None
    for path in switch_paths(bone, constraint):
        fcurve = animation.drivers.find(path)
        if fcurve is not None:
            return fcurve
    return None


def animated(obj, path: str, *, drivers: bool = True) -> bool:
    """Whether data path ``path`` of ``obj`` is keyed (in its action or an NLA strip's) or, with
    ``drivers``, driven."""
    collections = animation_fcurves(obj)
    return any(fcurves.find(path) is not None for fcurves in collections[0 if drivers else 1 :])


def end_bone(chain, lower_bone):
    """The bone End Rotation applies to (network/outputs.py): ``chain.end_bone`` or the lower bone
    ``lower_bone``'s first child; or None. Raises ChainError for an End Bone that is not a child."""
    name = outputs.end_bone_name(chain.id_data, chain)
    if chain.end_bone and not name:
        raise ChainError(f"End bone '{chain.end_bone}' is not a child of '{lower_bone.name}'")
    return lower_bone.children.get(name) if name else None


def unique_name(names, wanted: str) -> str:
    """``wanted``, or ``wanted.002``, ``.003``... : the first not in ``names``."""
    name, number = wanted, 1
    while name in names:
        number += 1
        name = f"{wanted}.{number:03d}"
    return name


def chain_bone_slots(obj, chain) -> list[tuple[str, str]]:
    """(slot, bone name) of every bone the chain poses: "upper", "lower", and "end" when End
    Rotation is Target (network/outputs.py). Raises ChainError when the chain's bones are missing,
    or End Rotation is Target and its End Bone is not a child of the lower bone."""
    lower = chain_bones(obj, chain)[1]
    if chain.end_rotation == "TARGET":
        end_bone(chain, lower)  # raises for an End Bone that is not a child, as the status says
    return outputs.slots(obj, chain)


def fk_bases(obj, chain) -> list[tuple[str, str, Matrix]]:
    """(slot, bone name, FK ``matrix_basis``) of each bone the chain moves (:func:`chain_bone_slots`):
    the bones' own channels, which the chain never writes. Raises ChainError when the chain's bones
    are missing."""
    return [
        (slot, name, obj.pose.bones[name].matrix_basis.copy()) for slot, name in chain_bone_slots(obj, chain)
    ]
