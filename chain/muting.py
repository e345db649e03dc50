# SPDX-License-Identifier: GPL-3.0-or-later
"""Blender's IK and Spline IK on a chain's bones: muted for the chain, turned on again by Remove;
and the reach limit Rigify Limbs adds on a chain's target bone, removed by Remove.

Blender solves IK trees after every bone's constraint stack, so an IK constraint whose chain takes
in a chain bone poses it whatever the chain does (docs/rigify.md, "Bones with other constraints"). Add's
option Mute Blender's IK and Rigify Limbs mute such constraints, and record on the chain
(``chain.muted_ik``) exactly which, so that Remove turns those back on and no other.

A constraint whose Enabled a driver sets (Rigify drives the Mute of its two IK constraints, with
and without pole, from the limb's ``pole_vector``) cannot just be switched off: the driver would set
it again at the next update. Nor can its driver just be muted: Blender links every IK constraint
with an animated property into the one "Init IK Tree" step of the armature's pose, so a muted IK
whose driver is still there ties the chain's bones to every other IK of the rig, and a rig whose
other IK turns a bone the chain aims at (Rigify's paws: their helper IK turns the heel) gets a
dependency cycle. The driver is moved instead (:func:`park`): it drives a custom property of the
same bone while the chain is on, and Remove moves it back and sets the constraint's Enabled back to
what it was, so the pose is right before the driver runs again (docs/design.md, "Rigify's driven IK
while a chain is on"). A
constraint whose Enabled is keyed is left alone (a key would turn it on again on the next frame):
it is named in what :func:`mute` returns as refused.
"""

from __future__ import annotations

import bpy

from ..network.layout import bone_path, source
from .bones import animated, blender_ik_constraints, enabled_driver, ik_chain, switch_paths


def mute(obj, chain, constraints=None) -> tuple[list[str], list[str]]:
    """Mute the Blender IK and Spline IK constraints on the chain's bones and record them on the chain.

    Parameters
    ----------
    obj : bpy.types.Object
        The armature object.
    chain : TwoBoneIKChain
        The chain, with its bones set.
    constraints : iterable of (str, str), optional
        (pose bone name, constraint name) to mute; by default every IK and Spline IK constraint
        whose chain takes in the chain's bones, the driven ones too
        (:func:`.bones.blender_ik_constraints`).

    Returns
    -------
    (list of str, list of str)
        "'<constraint>' on '<bone>'" muted, and refused (its Enabled is keyed).
    """
    if constraints is None:
        constraints = blender_ik_constraints(obj, chain.upper_bone, chain.lower_bone, driven=True)
    muted, refused = [], []
    recorded = {(item.bone, item.name) for item in chain.muted_ik}
    for bone, name in constraints:
        label = f"'{name}' on '{bone}'"
        if (bone, name) in recorded:
            continue
        if any(animated(obj, path, drivers=False) for path in switch_paths(bone, name)):
            refused.append(label)
            continue
        constraint = obj.pose.bones[bone].constraints[name]
        driver = enabled_driver(obj, bone, name)
        item = chain.muted_ik.add()
        item.name, item.bone = name, bone
        item.was_enabled = constraint.enabled
        if driver is not None:
            park(obj, item, driver)
        constraint.enabled = False
        _stop_at_upper(obj.pose.bones[bone], constraint, chain.upper_bone, item)
        muted.append(label)
    if muted:
        obj.update_tag()
    return muted, refused


def _parked_name(constraint: str) -> str:
    """The custom property of the bone where the Enabled (Mute) driver of its muted constraint
    ``constraint`` waits while a chain has it muted."""
    return f"{constraint} (Two-Bone IK: muted)"


def parked_path(bone: str, constraint: str) -> str:
    """The data path of :func:`_parked_name` on pose bone ``bone``."""
    return f'{bone_path(bone)}["{bpy.utils.escape_identifier(_parked_name(constraint))}"]'


def park(obj, item, driver) -> None:
    """Move ``driver`` (the driver F-Curve of the muted constraint ``item`` records) to
    :func:`parked_path`, recording where it was on ``item``. A driver an earlier version muted in
    place is unmuted there, so it drives again when Remove moves it back."""
    obj.pose.bones[item.bone][_parked_name(item.name)] = 0.0
    item.driver_path = driver.data_path
    driver.data_path, driver.array_index = parked_path(item.bone, item.name), 0
    if item.driver_muted:
        driver.mute = item.driver_muted = False


def park_all(obj, chain) -> list[str]:
    """Park (:func:`park`) the drivers of the constraints the chain muted that are still on them
    (a chain made before drivers were moved); returns "'<constraint>' on '<bone>'" for each."""
    parked = []
    for item in chain.muted_ik:
        driver = None if item.driver_path else enabled_driver(obj, item.bone, item.name)
        if driver is not None:
            park(obj, item, driver)
            parked.append(f"'{item.name}' on '{item.bone}'")
    return parked


def _unpark(obj, item) -> None:
    """Move the driver :func:`park` moved back where it was, and remove its custom property."""
    animation = obj.animation_data
    path = parked_path(item.bone, item.name)
    driver = animation.drivers.find(path) if animation is not None else None
    if driver is not None:
        driver.data_path = item.driver_path
    pose_bone = obj.pose.bones[item.bone]
    if _parked_name(item.name) in pose_bone.keys():
        del pose_bone[_parked_name(item.name)]


def _stop_at_upper(pose_bone, constraint, upper: str, item) -> None:
    """Shorten a muted IK's Chain Length so that it stops at the chain's upper bone, recording the
    old one on ``item``: Blender keeps a muted IK's dependencies, and one that reaches above the
    chain (a foot IK to the root) links the bones above the chain after the chain's network, which
    hangs from them: a dependency cycle (the chain 0.45 m off its target, measured)."""
    reached = ik_chain(pose_bone, constraint)
    if upper in reached and reached[-1] != upper:
        item.was_chain_count = constraint.chain_count
        constraint.chain_count = reached.index(upper) + 1


def restore(obj, chain) -> list[str]:
    """Turn the constraints :func:`mute` recorded on the chain on again (their Enabled as it was,
    their drivers unmuted) and forget them; returns "'<constraint>' on '<bone>'" for each. A
    constraint deleted or renamed since is skipped."""
    restored = []
    for item in chain.muted_ik:
        pose_bone = obj.pose.bones.get(item.bone)
        constraint = pose_bone.constraints.get(item.name) if pose_bone is not None else None
        if constraint is None:
            continue
        constraint.enabled = item.was_enabled
        if item.was_chain_count >= 0:
            constraint.chain_count = item.was_chain_count
        if item.driver_path:
            _unpark(obj, item)
        elif item.driver_muted:  # muted in place by an earlier version
            driver = enabled_driver(obj, item.bone, item.name)
            if driver is not None:
                driver.mute = False
        restored.append(f"'{item.name}' on '{item.bone}'")
    chain.muted_ik.clear()
    if restored:
        obj.update_tag()
    return restored


# The Limit Distance Rigify Limbs puts on a limb's IK target bone (chain/rigify.py).
REACH_CONSTRAINT = "Two-Bone IK Reach"


def remove_reach(obj, chain) -> bool:
    """Remove the chain's reach limit (:data:`REACH_CONSTRAINT`) from its target bone, when the
    target is a bone of ``obj`` that has one; returns whether it did."""
    armature, bone = source(chain, "target")
    pose_bone = obj.pose.bones.get(bone) if armature == obj and bone else None
    constraint = pose_bone.constraints.get(REACH_CONSTRAINT) if pose_bone is not None else None
    if constraint is None:
        return False
    pose_bone.constraints.remove(constraint)
    return True
