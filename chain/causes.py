# SPDX-License-Identifier: GPL-3.0-or-later
"""Why a chain is off its solve, in words for its status: Blender's IK over it, a turned-on
Controls IK, a stopped driver, a setting not yet evaluated, other constraints, scale, a far twist,
parts added to the network, a tie float32 may break, or an edited network."""

from __future__ import annotations

import math

import bpy

from ..network import health, layout, naming, spec
from . import memo, settings
from .bones import blender_ik

# Radians past which a twist, a float32 in the drivers, turns the bend by more than the
# readouts' tolerance (its float32 rounding reaches 1e-4 rad near 1e3).
TWIST_FLOAT32 = 1e3


def added_parts(obj, chain) -> list[str]:
    """health.foreign, kept by the panel until the rig's relations change (a constraint, key or
    driver added to the network rebuilds them)."""
    key = ("foreign", obj.session_uid, chain.upper_bone, chain.lower_bone)
    return memo.relations_scoped(key, lambda: health.foreign(obj, chain))


def acting_around(pose_bone) -> tuple[bool, bool]:
    """Whether constraints act before, and after, the chain's own in ``pose_bone``'s stack (enabled,
    influence above 0). Blender's IK is not in the stack's order (it poses the bones after every
    stack): it counts on neither side."""
    constraints = list(pose_bone.constraints)
    ours = pose_bone.constraints.find(spec.OUTPUT)
    acting = [c.enabled and c.influence > 0.0 and c.type not in ("IK", "SPLINE_IK") for c in constraints]
    return any(acting[: max(ours, 0)]), ours >= 0 and any(acting[ours + 1 :])


def stopped_driver(obj, chain) -> str:
    """The data path of a driver of the chain's network that Blender has stopped ('' when none):
    an expression that failed once (on a value that was not a number) gives 0 until rebuilt."""
    names = (*naming.chain_parts(chain), chain.upper_bone, chain.lower_bone)
    paths = tuple(layout.bone_path(name) for name in names)
    animation = obj.animation_data
    for fcurve in animation.drivers if animation is not None else ():
        if fcurve.data_path.startswith(paths) and not fcurve.driver.is_valid:
            return fcurve.data_path
    return ""


def unevaluated_setting(obj, chain) -> str:
    """The chain's setting or roll whose custom property differs from the value Blender last
    evaluated ('' when none): a script wrote it, which tags nothing, so the drivers have not read
    it. Reads the view layer's depsgraph as it is (evaluating nothing)."""
    bone, keys = settings.holder(chain)
    view_layer = getattr(bpy.context, "view_layer", None)
    depsgraph = view_layer.depsgraph if view_layer is not None else None  # None until first evaluated
    if bone is None or depsgraph is None:
        return ""
    evaluated = obj.evaluated_get(depsgraph)
    evaluated_bone = evaluated.pose.bones.get(bone.name) if evaluated.pose is not None else None
    if evaluated_bone is None or evaluated_bone == bone:
        return ""
    for name, key in keys.items():
        now = layout.number(bone.get(key))
        then = layout.number(evaluated_bone.get(key))
        if now != then and not (math.isnan(now) and math.isnan(then)):
            return name
    return ""


def off_solve_cause(obj, chain, upper, lower, scale, tie: bool = False) -> str:
    """What most likely moves a chain off its solve, in words; ``tie``: the solve is at a tie of the
    degenerate rules (the pole on the line, the end at the root), which float32 may break."""
    iks = blender_ik(obj, chain)
    if iks:
        return (
            f"Blender's IK {iks[0]} poses its bones after every constraint stack, over the chain's: "
            "mute it (its Enabled), or remove the chain"
        )
    controls = obj.pose.bones[lower.name].constraints.get(spec.CONTROLS.name)
    if controls is not None and controls.type == "IK" and controls.enabled and controls.influence > 0.0:
        return (
            f"the chain's '{controls.name}' on '{lower.name}', an IK kept muted to name the controls, "
            "was turned on: turn it off, or run Pose > Two-Bone IK > Update Mechanism"
        )
    stopped = stopped_driver(obj, chain)
    if stopped:
        return f"Blender stopped its network's driver {stopped}: run Pose > Two-Bone IK > Update Mechanism"
    unevaluated = unevaluated_setting(obj, chain)
    if unevaluated:
        return (
            f"its {unevaluated.replace('_', ' ')} changed since Blender last evaluated the rig: a script "
            "updates it with bpy.context.view_layer.update(), after obj.update_tag() when it wrote the "
            "custom property itself (which tags nothing)"
        )
    bones = obj.pose.bones
    for name in (upper.name, lower.name):
        if acting_around(bones[name])[1]:  # an acting IK was named above
            remedy = (
                "run Pose > Two-Bone IK > Update Mechanism to put the chain's last"
                if chain.stack_position == "LAST"
                else "set the chain's Constraint Position to Last"
            )
            return f"other constraints on '{name}' move it: {remedy}"
    if any(abs(value - 1.0) > 1e-6 for name in (upper.name, lower.name) for value in bones[name].scale):
        return "the chain bones' own scale is not used by the network: set it on a parent"
    if max(scale) > (1.0 + 1e-6) * min(scale):
        return "the armature's uneven scale shears the influence blend"
    parent = upper.parent
    if parent is not None:
        parent_scale = bones[parent.name].matrix.to_scale()
        if max(parent_scale) > (1.0 + 1e-5) * min(parent_scale):
            aim = bones.get(naming.parts(upper.name, lower.name).aim)
            track = aim.constraints.get(spec.OWN_CONSTRAINTS["aim"][0]) if aim is not None else None
            if track is not None and track.owner_space != "CUSTOM":
                return (
                    f"the uneven pose scale on '{parent.name}' above it is solved by networks built since "
                    "this one: run Pose > Two-Bone IK > Update Mechanism"
                )
            return f"uneven pose scale on '{parent.name}', above the chain, shears it: scale it evenly"
    twist = settings.value(chain, "twist")
    if abs(twist) > TWIST_FLOAT32:
        return (
            f"a twist of {twist:.6g} rad is beyond what Blender's float32 drivers turn exactly: "
            "keep it within a few turns"
        )
    added = added_parts(obj, chain)
    if added:
        return f"{added[0]} moves it: run Pose > Two-Bone IK > Update Mechanism, which removes it"
    if tie:
        return (
            "the pole is on the root-target line, or the target at the root, where float32 may break "
            "the contract's tie the other way (docs/limits.md): move it off"
        )
    return "its network was edited: run Pose > Two-Bone IK > Update Mechanism"
