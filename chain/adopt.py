# SPDX-License-Identifier: GPL-3.0-or-later
"""Networks of no chain: what Blender's Join (Ctrl+J) leaves of the joined armature's chains; and
bones that carry copies of a chain's constraints: what Symmetrize leaves on the other side.

Join moves the other armature's bones, their network included (renamed ``MCH-IK-shin-root.001``
and so on), into the active armature, and its constraints follow, but not its chains: they are
data of the object that Join deletes. The network describes its chain (bones, target, pole, End
Rotation, settings, rolls), so :func:`adopt` makes each such network a chain again, with a network
of its own under the chain's names. Update Mechanism runs it; until then the panel says so.

Symmetrize (and Duplicate, Copy Constraints) copies a chain bone's constraints onto the new bones:
their Copy Transforms still copy the first chain's solved bones, so they follow its leg
(:func:`copies`), while the muted IK constraint that names the chain's controls, which Symmetrize
flips as it flips Blender's IK's targets, names the symmetrized controls. :func:`adopt_copies`
makes each such pair a chain of its own on those controls (its settings are the custom properties
Symmetrize copied, which mirror: docs/contract.md, D9), so that it works as Blender's IK does after
Symmetrize. Update Mechanism runs it; until then the panel and the first chain's status say so.
"""

from __future__ import annotations

from ..compat import animation_fcurves
from ..network import build, layout, naming, rolls, spec
from ..network import remove as network_remove
from ..network.edit import MechanismError, can_add_bones, edit_bones
from .bones import unique_name


def _orphan_roots(obj) -> list[tuple[str, str, str]]:
    """(root bone, lower bone's old name, suffix) of each network root bone no chain owns: Join
    gives its copy a suffix (``MCH-IK-shin-root.001``), and its target bone the same one."""
    owned = {naming.chain_parts(chain).root for chain in obj.two_bone_ik.chains}
    found = []
    bones = obj.pose.bones if obj.pose is not None else {}
    for pose_bone in bones.values() if obj.pose is not None else ():
        name = pose_bone.name
        parsed = naming.root_of(name)
        if parsed is None or name in owned:
            continue
        lower, suffix = parsed
        if bones.get(naming.parts("", lower).target + suffix) is not None:
            found.append((name, lower, suffix))
    return found


def orphans(obj) -> list[str]:
    """The root bones of networks no chain of ``obj`` owns (after a Join), by name."""
    return [root for root, _, _ in _orphan_roots(obj)]


def copies(obj) -> dict[str, list[str]]:
    """Bones that carry a copy of a chain's constraint but are not that chain's bones (Symmetrize,
    Duplicate or Copy Constraints copied it): {chain name: [bone names]}. They follow that chain's
    leg, not their own; a chain added on them takes them over."""
    solved = {}
    mine = set()
    for chain in obj.two_bone_ik.chains:
        names = naming.chain_parts(chain)
        solved[names.upper] = solved[names.lower] = chain.name
        mine |= {chain.upper_bone, chain.lower_bone}
    found: dict[str, list[str]] = {}
    for pose_bone in obj.pose.bones if obj.pose is not None else ():
        constraint = pose_bone.constraints.get(spec.OUTPUT)
        if constraint is None or pose_bone.name in mine or constraint.subtarget not in solved:
            continue
        found.setdefault(solved[constraint.subtarget], []).append(pose_bone.name)
    return found


def _old_parts(obj, lower: str, suffix: str) -> naming.Parts | None:
    """The joined network's bone names: the chain's names with Join's suffix, and its solved bones
    found where the spec puts them (each the child of its parent field: the solved upper bone of
    the hinge, the solved lower bone of the solved upper), since Join may have renamed them
    otherwise (``MCH-IK-c.d.002`` for ``MCH-IK-c.d.001``, as it renames ``c.d.001``). None when
    they are not there."""
    names = naming.suffixed(naming.parts("", lower), suffix)
    bones = obj.data.bones
    for field in ("upper", "lower"):
        parent = bones.get(getattr(names, next(bone.parent for bone in spec.NETWORK if bone.field == field)))
        children = [child.name for child in parent.children] if parent is not None else []
        solved = [name for name in children if naming.is_network_bone(name)]
        if len(solved) != 1:
            return None
        names = names._replace(**{field: solved[0]})
    return names


def _chain_bones(obj, old: naming.Parts) -> tuple[str, str] | None:
    """(upper, lower) chain bones whose Copy Transforms copy the joined network's solved bones."""
    for pose_bone in obj.pose.bones:
        copy = pose_bone.constraints.get(spec.OUTPUT)
        parent = pose_bone.parent
        if copy is None or copy.subtarget != old.lower or parent is None:
            continue
        parent_copy = parent.constraints.get(spec.OUTPUT)
        if parent_copy is not None and parent_copy.subtarget == old.upper:
            return parent.name, pose_bone.name
    return None


def _source(constraint) -> tuple:
    """(object, bone, Head/Tail) a network Copy Location copies."""
    return constraint.target, constraint.subtarget, getattr(constraint, "head_tail", 0.0)


def _found(obj, root: str, lower_name: str, suffix: str) -> dict | None:
    """What the joined network says of its chain, read before anything changes; None when its
    chain bones cannot be found (then the network is left alone: Remove cannot reach it either)."""
    bones = obj.pose.bones
    old = _old_parts(obj, lower_name, suffix)
    pair = _chain_bones(obj, old) if old is not None else None
    if old is None or pair is None:
        return None
    upper, lower = pair
    if any(bones.get(name) is None for name in (old.target, old.pole)):
        return None
    end = next(
        (
            child.name
            for child in obj.data.bones[lower].children
            if spec.END_ROTATION.name in bones[child.name].constraints
        ),
        "",
    )
    stack = bones[lower].constraints
    settings = {name: bones[root][name] for name, *_ in layout.SETTINGS if name in bones[root]}
    return {
        "upper": upper,
        "lower": lower,
        "target": _source(bones[old.target].constraints[spec.SOURCE["target"]]),
        "pole": _source(bones[old.pole].constraints[spec.SOURCE["pole"]]),
        "end": end,
        "stack": "FIRST" if stack.find(spec.OUTPUT) == 0 and len(stack) > 1 else "LAST",
        "settings": settings,
        "rolls": rolls.current(obj, old),
        "old": old,
    }


def _clear_old(obj, found: list[dict]) -> None:
    """Take away the joined networks' old parts: their bones but the solved ones (the new network
    takes those names and rebuilds them, their roll keys kept), with their keys and drivers; the
    settings' keys move to the new root bone."""
    for info in found:
        old = info["old"]
        info["stale"] = [
            name for field, name in zip(old._fields, old, strict=True) if field not in ("upper", "lower")
        ]
        stale = tuple(layout.bone_path(name) for name in info["stale"])
        root = naming.parts(info["upper"], info["lower"]).root
        moved = {
            layout.setting_path(old.root, name): layout.setting_path(root, name) for name in info["settings"]
        }
        for fcurves in animation_fcurves(obj):
            for fcurve in list(fcurves):
                if fcurve.data_path in moved:
                    fcurve.data_path = moved[fcurve.data_path]
                elif fcurve.data_path.startswith(stale):
                    fcurves.remove(fcurve)
        network_remove.drivers_removed(obj)
        for name in (old.upper, old.lower):  # their constraints aim at bones about to go
            pose_bone = obj.pose.bones.get(name)
            for constraint in list(pose_bone.constraints) if pose_bone is not None else ():
                pose_bone.constraints.remove(constraint)
    with edit_bones(obj) as bones:
        for info in found:
            for name in info["stale"]:
                if bones.get(name) is not None:
                    bones.remove(bones[name])


def _new_chain(obj, info: dict) -> str:
    """Add the chain a joined network describes (not built yet); returns its name."""
    chains = obj.two_bone_ik.chains
    chain = chains.add()
    chain.name = unique_name({other.name for other in chains if other != chain}, info["lower"])
    chain.upper_bone, chain.lower_bone = info["upper"], info["lower"]
    for role in ("target", "pole"):
        source, bone, head_tail = info[role]
        setattr(chain, role, source)
        if source is not None and source.type == "ARMATURE":
            setattr(chain, f"{role}_bone", bone)
            setattr(chain, f"{role}_head_tail", head_tail)
    if info["end"]:
        chain.end_rotation, chain.end_bone = "TARGET", info["end"]
    chain.stack_position = info["stack"]
    for name, number in info["settings"].items():
        setattr(chain, name, number)
    return chain.name


def adopt(obj) -> list[str]:
    """Make each network of ``obj`` that no chain owns a chain again (:mod:`this module's
    docstring <chain.adopt>`), then build its network; returns the new chains' names.

    Raises MechanismError (from the build) when the armature cannot take new bones; nothing is
    changed then. The joined network's old bones and their drivers go; keys on its settings that
    are in the armature's action after the Join move to the new chain's (Blender's Join drops the
    other armature's action when the active one has none: docs/limits.md, "Join (Ctrl+J)").
    """
    found = [info for root, lower, suffix in _orphan_roots(obj) if (info := _found(obj, root, lower, suffix))]
    if not found:
        return []
    reason = can_add_bones(obj)
    if reason:
        raise MechanismError(reason)
    _clear_old(obj, found)
    names = [_new_chain(obj, info) for info in found]
    build.build(obj, [chain for chain in obj.two_bone_ik.chains if chain.name in names])
    for info in found:
        rolls.set_rolls(obj, naming.parts(info["upper"], info["lower"]), *info["rolls"])
    return names


def _copied_pair(obj, owner, bones: list[str]) -> tuple[str, str] | None:
    """(upper, lower) among ``bones`` (copies of chain ``owner``'s constraint, :func:`copies`): the
    one copying its solved lower bone and its parent copying its solved upper bone; None when the
    copies are not such a pair."""
    names = naming.chain_parts(owner)
    pose_bones = obj.pose.bones
    for name in bones:
        lower = obj.data.bones[name]
        if pose_bones[name].constraints[spec.OUTPUT].subtarget != names.lower or lower.parent is None:
            continue
        copy = pose_bones[lower.parent.name].constraints.get(spec.OUTPUT)
        if lower.parent.name in bones and copy is not None and copy.subtarget == names.upper:
            return lower.parent.name, name
    return None


def _copied_controls(obj, owner, lower: str) -> tuple | None:
    """((target, bone), (pole, bone)) the copied muted IK constraint on ``lower`` names, when they
    are not chain ``owner``'s own (Symmetrize flipped them onto the symmetrized controls), else None."""
    constraint = obj.pose.bones[lower].constraints.get(spec.CONTROLS.name)
    if constraint is None or constraint.type != "IK" or constraint.target is None:
        return None
    target = (constraint.target, constraint.subtarget)
    pole = (constraint.pole_target, constraint.pole_subtarget)
    if target == layout.source(owner, "target") or (
        owner.pole is not None and pole == layout.source(owner, "pole")
    ):
        return None
    return target, pole


def adopt_copies(context, obj) -> tuple[list[str], list[str]]:
    """Make each pair of bones carrying copies of a chain's constraints (:func:`copies`) a chain of
    its own, built: on the controls the copied muted IK constraint names when Symmetrize flipped
    them, else on new controls made as Add makes them (the first chain's kind) at the bones' FK
    pose. Returns (the new chains' names, the copies that are no pair of a chain's bones, in words).

    Raises MechanismError (from the build) when the armature cannot take new bones."""
    added: list[str] = []
    left: list[str] = []
    for owner_name, bones in copies(obj).items():
        owner = obj.two_bone_ik.chains[owner_name]
        pair = _copied_pair(obj, owner, bones)
        if pair is None:
            left.append(f"{', '.join(bones)} (copies of chain '{owner_name}')")
            continue
        upper, lower = pair
        controls = _copied_controls(obj, owner, lower)
        stack = owner.stack_position
        kind = "BONES" if owner.target is not None and owner.target.type == "ARMATURE" else "EMPTIES"
        head_tails = owner.target_head_tail, owner.pole_head_tail
        end = owner.end_rotation
        network_remove.clear_constraints(obj, [], [upper, lower])  # the copies: their leg is their own now
        if controls is None:
            context.view_layer.update()
            from .chains import add_chain

            added.append(add_chain(context, obj, lower, True, stack, kind).name)
            continue
        chains = obj.two_bone_ik.chains
        chain = chains.add()
        chain.name = unique_name({other.name for other in chains if other != chain}, lower)
        chain.upper_bone, chain.lower_bone = upper, lower
        for role, (source, bone), head_tail in zip(("target", "pole"), controls, head_tails, strict=True):
            setattr(chain, role, source)
            if source is not None and source.type == "ARMATURE":
                setattr(chain, f"{role}_bone", bone)
                setattr(chain, f"{role}_head_tail", head_tail)
        chain.stack_position, chain.end_rotation = stack, end
        name = chain.name
        build.build(obj, [chain])
        added.append(name)
    return added, left
