# SPDX-License-Identifier: GPL-3.0-or-later
"""Creating, finding and removing chains on an armature: the set-up the operators perform.

Nothing here keeps a reference to Blender data between calls: chains are found by name or index,
objects through the chain's pointers, each time.
"""

from __future__ import annotations

import bpy
from mathutils import Matrix

from ..network import build, health, layout, naming, rolls, spec
from ..network import remove as network_remove
from ..network.edit import MechanismError, can_add_bones
from . import controls as control_bones
from . import muting, pose
from .bones import chain_bones, renamed, renamed_source, unique_name
from .controls import pole_point


def chain_parts(obj) -> set[str]:
    """The bones of ``obj`` that are its chains' own parts, never a chain's bones: every network
    bone (``MCH-IK-`` names) and every chain's target and pole bone on this armature."""
    parts = {bone.name for bone in obj.data.bones if naming.is_network_bone(bone.name)}
    for chain in obj.two_bone_ik.chains:
        for role in ("target", "pole"):
            source, bone = layout.source(chain, role)
            if source == obj and bone:
                parts.add(bone)
    return parts


def lower_bone_names(obj, selected_names, active_name: str | None = None) -> list[str]:
    """The bones that become lower bones (shin, forearm) when chains are added for a selection.

    Parameters
    ----------
    obj : bpy.types.Object
        The armature object.
    selected_names : iterable of str
        Names of the selected bones, in selection order.
    active_name : str or None
        The active bone, used when nothing usable is selected.

    Returns
    -------
    list of str
        Each selected bone that has a parent, except a selected bone that is the parent of another
        one: selecting thigh and shin gives one chain on shin, not a second one on the thigh. The
        chains' own parts (:func:`chain_parts`: network and control bones) are never chain bones,
        whether selected or the parent of a selected bone.
    """
    bones = obj.data.bones
    parts = chain_parts(obj)

    def usable(name) -> bool:
        bone = bones.get(name)
        return (
            bone is not None
            and bone.parent is not None
            and name not in parts
            and bone.parent.name not in parts
        )

    names = [name for name in selected_names if usable(name)]
    if not names and active_name and usable(active_name):
        names = [active_name]
    uppers = {bones[name].parent.name for name in names}
    return [name for name in names if name not in uppers]


def mirrored_names(obj, names) -> list[str]:
    """Names of the mirrored bones (.L/.R, _l/_r, -L/-R, Left/Right) that exist, are not in ``names``
    and have a parent, and are not the chains' own parts (:func:`chain_parts`). Uses Blender's own
    ``bpy.utils.flip_name``."""
    bones = obj.data.bones
    parts = chain_parts(obj)
    result = []
    for name in names:
        mirrored = bpy.utils.flip_name(name)
        if mirrored == name or mirrored in names or mirrored in result or mirrored in parts:
            continue
        bone = bones.get(mirrored)
        if bone is not None and bone.parent is not None and bone.parent.name not in parts:
            result.append(mirrored)
    return result


def chain_on_bone(obj, lower_name: str):
    """The first chain of ``obj`` whose lower bone is ``lower_name``, or None."""
    return next((chain for chain in obj.two_bone_ik.chains if chain.lower_bone == lower_name), None)


def chains_sharing_bones(obj, upper_name: str, lower_name: str) -> list[tuple[str, str]]:
    """(chain name, shared bone name) for each chain of ``obj`` whose upper or lower bone is
    ``upper_name`` or ``lower_name``: a chain on these bones would write a bone another chain
    writes, and the two would fight over it."""
    wanted = (upper_name, lower_name)
    shared = []
    for chain in obj.two_bone_ik.chains:
        bone = next((name for name in wanted if name in (chain.upper_bone, chain.lower_bone)), None)
        if bone is not None:
            shared.append((chain.name, bone))
    return shared


def find_chain(obj, name: str = ""):
    """The chain called ``name``, or the active chain when ``name`` is empty; None when there is none."""
    settings = obj.two_bone_ik
    if name:
        return settings.chains.get(name)
    if 0 <= settings.active_chain_index < len(settings.chains):
        return settings.chains[settings.active_chain_index]
    return None


def owning_armature(context):
    """The armature the chain tools act on: the active object when it is an armature, else the
    armature one of whose chains uses the active object as its target or pole (so the panel stays
    while the artist moves a target). None when there is neither."""
    obj = context.object
    if obj is None:
        return None
    if obj.type == "ARMATURE":
        return obj
    for other in context.scene.objects:
        if other.type == "ARMATURE" and any(
            chain.target == obj or chain.pole == obj for chain in other.two_bone_ik.chains
        ):
            return other
    return None


def constrained_bones(obj, chain) -> list[str]:
    """Names of the chain's bones that carry other enabled constraints (their pose may miss the solve)."""
    names = []
    for name in (chain.upper_bone, chain.lower_bone):
        pose_bone = obj.pose.bones.get(name)
        if pose_bone is not None and any(
            c.enabled and c.influence > 0.0 and c.name != spec.OUTPUT for c in pose_bone.constraints
        ):
            names.append(name)
    return names


def add_chain(
    context,
    obj,
    lower_name: str,
    parent_controls: bool = True,
    stack_position: str = "LAST",
    controls: str = "BONES",
):
    """Add a chain on ``lower_name`` and its parent, with a target at the lower tail and a pole on
    the bend side of the joint, so the first solve reproduces the current pose. The target takes
    the world rotation of the end bone (the lower bone's first child, else the lower bone), so End
    Rotation Target moves nothing either. ``controls`` says what the target and pole are: "BONES",
    bones of the armature (chain/controls.py), or "EMPTIES", empty objects in the armature's
    collection, which with ``parent_controls`` are parented to the armature object, keeping their
    world transform (as Ctrl+P does). ``stack_position`` ("LAST" or "FIRST") places the chain's
    constraints among the bones' others (the chain property of that name).

    The pose read is the one the animator sees in Pose Position, also while the armature shows its
    Rest Position (switched to Pose Position for the call and back).

    Returns the new chain, with its network built (network/build.py). Raises ValueError (naming the
    bone) when the bone cannot carry a chain: it is missing, has no parent, or it or its parent is
    already a bone of another chain (:func:`chains_sharing_bones`); and MechanismError (a
    ValueError) when the armature cannot take the mechanism's bones. Nothing is created then.
    """
    armature = obj.data
    shown = armature.pose_position
    armature.pose_position = "POSE"
    try:
        return _add_chain(context, obj, lower_name, parent_controls, stack_position, controls)
    finally:
        if shown != "POSE":
            obj.data.pose_position = shown
            context.view_layer.update()


def _add_chain(context, obj, lower_name: str, parent_controls: bool, stack_position: str, controls: str):
    """:func:`add_chain` in Pose Position."""
    if controls not in ("BONES", "EMPTIES"):
        raise ValueError(f"controls: {controls!r} is neither 'BONES' nor 'EMPTIES'")
    lower_bone = obj.data.bones.get(lower_name)
    if lower_bone is None:
        raise ValueError(f"lower_name: bone '{lower_name}' not found")
    if lower_bone.parent is None:
        raise ValueError(f"lower_name: bone '{lower_name}' has no parent to be the upper bone")
    upper_name = lower_bone.parent.name
    shared = chains_sharing_bones(obj, upper_name, lower_name)
    if shared:
        other, bone = shared[0]
        raise ValueError(f"lower_name: bone '{bone}' is already a bone of chain '{other}'")
    reason = can_add_bones(obj)
    if reason:
        raise MechanismError(reason)
    context.view_layer.update()  # the pose matrices must be current before they are read
    fk = (obj.pose.bones[upper_name].matrix.copy(), obj.pose.bones[lower_name].matrix.copy())
    root, joint, end, side = pose.current_pole_side(obj, upper_name, lower_name)
    length = (joint - root).length + (end - joint).length
    children = obj.pose.bones[lower_name].children
    turned = obj.pose.bones[children[0].name if children else lower_name].matrix
    pole = pole_point(joint, side, length)
    made = _controls(context, obj, lower_name, (controls, parent_controls), (end, turned, pole), length)

    chains = obj.two_bone_ik.chains
    chain = chains.add()
    chain.name = unique_name({other.name for other in chains if other != chain}, lower_name)
    chain.upper_bone, chain.lower_bone = upper_name, lower_name
    if controls == "BONES":
        chain.target, chain.target_bone = obj, made[0]
        chain.pole, chain.pole_bone = obj, made[1]
    else:
        chain.target, chain.pole = made
    chain.stack_position = stack_position
    obj.two_bone_ik.active_chain_index = len(chains) - 1
    chain_bones(obj, chain)  # validates the pair
    try:
        build.build(obj, [chain])
    except ValueError:
        # MechanismError (Blender refused Edit Mode...) or bones the network cannot be named for
        # (check_bones): the build changed nothing; take back what was made here.
        chains.remove(len(chains) - 1)
        obj.two_bone_ik.active_chain_index = max(0, len(chains) - 1)
        if controls == "BONES":
            control_bones.remove(obj, made)
        else:
            for empty in made:
                bpy.data.objects.remove(empty, do_unlink=True)
        raise
    # The bones keep their orientations too, a knee bent off the rest bend plane included.
    rolls.match(context, obj, naming.parts(upper_name, lower_name), *fk)
    return obj.two_bone_ik.chains[-1]  # Edit Mode may have freed the reference


def _controls(context, obj, lower_name, kind: tuple[str, bool], places, length: float) -> tuple:
    """Make the chain's target and pole (:func:`add_chain`), of ``kind`` (controls, parent_controls):
    bone names or empty objects. ``places``: (end, turned, pole), the target at ``end`` turned like
    ``turned`` (the end bone's pose matrix), the pole at ``pole``, armature space; ``length`` the
    chain's."""
    (controls, parent_controls), (end, turned, pole) = kind, places
    rotation = pose.rotation_of(turned)
    if controls == "BONES":
        return control_bones.add(
            context, obj, lower_name, Matrix.LocRotScale(end, rotation.to_quaternion(), None), pole
        )
    world = obj.matrix_world
    collection = obj.users_collection[0] if obj.users_collection else context.scene.collection
    world_rotation = pose.rotation_of(world.to_3x3() @ turned.to_3x3()).to_quaternion()
    target = bpy.data.objects.new(naming.control_name(naming.TARGET_NAME, lower_name), None)
    target.empty_display_type = "SPHERE"
    target.empty_display_size = max(0.05 * length, 1e-3)
    pole_empty = bpy.data.objects.new(naming.control_name(naming.POLE_NAME, lower_name), None)
    pole_empty.empty_display_type = "PLAIN_AXES"
    pole_empty.empty_display_size = max(0.1 * length, 1e-3)
    for empty, place in (
        (target, Matrix.LocRotScale(world @ end, world_rotation, None)),
        (pole_empty, Matrix.Translation(world @ pole)),
    ):
        if parent_controls:
            empty.parent = obj
            empty.matrix_parent_inverse = world.inverted()
        collection.objects.link(empty)
        empty.matrix_world = place
    return target, pole_empty


def follow_renames(obj, chain) -> list[str]:
    """Point the chain at its target and pole bones renamed since the build
    (:func:`.bones.renamed_source`), at its bones renamed since (:func:`.bones.renamed`) and rename
    its network bones after them, and name back a network bone renamed by hand
    (:func:`network.health.renamed_part`); Blender's bone rename re-points the drivers, constraints and
    keys (the settings' too). Returns 'old -> new' for each bone followed or named back. A network
    bone whose new name is taken keeps its name (the build then says which)."""
    # Both found before either is set: setting one syncs the network, aiming the other at its
    # stored (old) name.
    renames = {which: renamed_source(obj, chain, which) for which in ("target", "pole")}
    followed = []
    for which, now in renames.items():
        if now:
            followed.append(f"'{getattr(chain, f'{which}_bone')}' -> '{now}'")
            setattr(chain, f"{which}_bone", now)
    return followed + _follow_chain_renames(obj, chain)


def _follow_chain_renames(obj, chain) -> list[str]:
    """:func:`follow_renames` for the chain's own and network bones."""
    if can_add_bones(obj):
        return []
    part = health.renamed_part(obj, chain)
    if part is not None:
        wanted, now = part
        obj.data.bones[now].name = wanted
        return [f"'{now}' -> '{wanted}'"]
    moves = renamed(obj, chain)
    if not moves:
        return []
    old = naming.chain_parts(chain)
    chain.upper_bone = moves.get(chain.upper_bone, chain.upper_bone)
    chain.lower_bone = moves.get(chain.lower_bone, chain.lower_bone)
    bones = obj.data.bones
    for old_name, new_name in zip(old, naming.chain_parts(chain), strict=True):
        bone = bones.get(old_name)
        if old_name != new_name and bone is not None and bones.get(new_name) is None:
            bone.name = new_name
    return [f"'{before}' -> '{after}'" for before, after in moves.items()]


def library_chain(obj, chain) -> str:
    """Why ``chain`` cannot be removed from ``obj`` ('' when it can): a chain a library override
    took from its library cannot be removed there (Blender keeps the library's items)."""
    override = obj.override_library
    reference = override.reference if override is not None else None
    if reference is not None and reference.two_bone_ik.chains.get(chain.name) is not None:
        return (
            f"Chain '{chain.name}' comes from the library of '{obj.name}': turn it off (Enabled) "
            "here, or remove it in the library file"
        )
    return ""


class _Named:
    """``chain`` with the bone names its network was built on, for :func:`network.remove.remove`."""

    def __init__(self, chain, upper_bone: str, lower_bone: str):
        self._chain, self.upper_bone, self.lower_bone = chain, upper_bone, lower_bone

    def __getattr__(self, name: str):
        return getattr(self._chain, name)


def _network_chain(obj, chain):
    """``chain``, or when one of its bone fields was cleared, a :class:`_Named` view with the name
    found from its network's bones: ``MCH-IK-<lower>`` is the child of ``MCH-IK-<upper>``, so
    either name gives the other."""
    upper, lower = chain.upper_bone, chain.lower_bone
    bones = obj.data.bones
    if upper and not lower:
        solved = bones.get(naming.parts(upper, "").upper)
        for child in solved.children if solved is not None else ():
            name = naming.solved_bone(child.name)
            if bones.get(naming.parts(upper, name).root) is not None:
                return _Named(chain, upper, name)
    elif lower and not upper:
        solved = bones.get(naming.parts("", lower).lower)
        if solved is not None and solved.parent is not None:
            return _Named(chain, naming.solved_bone(solved.parent.name), lower)
    return chain


def remove_chains(obj, indices, *, delete_empties: bool = False, keep_ik_muted: bool = False) -> list[str]:
    """Remove chains ``indices`` of ``obj`` and their networks (one pass, one Edit Mode session);
    the bones show the animator's pose (their channels were never written). Keys on the chains'
    settings (the lower bones' properties) go with them. A chain whose bone was renamed, deleted or
    cleared is removed whole too: its constraints are found by their influence drivers, its
    network by the network's bone names.

    Parameters
    ----------
    obj : bpy.types.Object
        The armature object.
    indices : iterable of int
        Indices of the chains in ``obj.two_bone_ik.chains``.
    delete_empties : bool
        Also delete the chains' targets and poles that no remaining chain uses: empties, and
        control bones of ``obj`` in Add's bone collection (chain/controls.py).
    keep_ik_muted : bool
        Leave the Blender IK constraints muted for the chains (``chain.muted_ik``, chain/muting.py)
        muted and a reach limit Rigify Limbs put on their target bones in place, as Apply does (its
        pose must not move); by default the constraints are turned on again and the limit removed.

    Returns
    -------
    list of str
        Names of the targets and poles kept although ``delete_empties`` asked for them (used by
        another chain, or neither an empty nor a control bone).
    """
    indices = sorted(set(indices))
    chains = obj.two_bone_ik.chains
    network_remove.remove(obj, [_network_chain(obj, chains[index]) for index in indices])
    chains = obj.two_bone_ik.chains  # Edit Mode may have freed the Python references
    kept: list = []
    doomed: list = []
    doomed_bones: list[str] = []
    if delete_empties:
        removed = set(indices)
        users = {
            layout.source(chain, role)
            for other in bpy.data.objects
            if other.type == "ARMATURE"
            for number, chain in enumerate(other.two_bone_ik.chains)
            if other != obj or number not in removed
            for role in ("target", "pole")
        }
        made = control_bones.made_by_add(obj)
        for index in indices:
            for role in ("target", "pole"):
                source, bone = layout.source(chains[index], role)
                if source is None or (bone and source.data.bones.get(bone) is None):
                    continue  # nothing there to delete or keep
                if (source, bone) in users:
                    kept.append(f"{source.name}: {bone}" if bone else source)
                elif bone and source == obj and bone in made:
                    if bone not in doomed_bones:
                        doomed_bones.append(bone)
                elif not bone and source.type == "EMPTY":
                    if source not in doomed:
                        doomed.append(source)
                else:
                    kept.append(f"{source.name}: {bone}" if bone else source)
    settings = obj.two_bone_ik
    for index in reversed(indices):
        if not keep_ik_muted:
            muting.restore(obj, settings.chains[index])
            muting.remove_reach(obj, settings.chains[index])
        settings.chains.remove(index)
    settings.active_chain_index = max(0, min(settings.active_chain_index, len(settings.chains) - 1))
    for empty in doomed:
        bpy.data.objects.remove(empty, do_unlink=True)
    if doomed_bones:
        control_bones.remove(obj, doomed_bones)
    return list(dict.fromkeys(item if isinstance(item, str) else item.name for item in kept))


def remove_chain(obj, index: int, *, delete_empties: bool = False, keep_ik_muted: bool = False) -> list[str]:
    """Remove chain ``index`` of ``obj`` (:func:`remove_chains`)."""
    return remove_chains(obj, [index], delete_empties=delete_empties, keep_ik_muted=keep_ik_muted)
