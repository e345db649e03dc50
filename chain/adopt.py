# SPDX-License-Identifier: GPL-3.0-or-later
"""Networks of no chain: what Blender's Join (Ctrl+J) leaves of the joined armature's chains.

Join moves the other armature's bones, their network included (renamed ``MCH-IK-shin-root.001``
and so on), into the active armature, and its constraints follow, but not its chains: they are
data of the object that Join deletes. The network describes its chain (bones, target, pole, End
Rotation, settings, rolls), so :func:`adopt` makes each such network a chain again, with a network
of its own under the chain's names. Update Mechanism runs it; until then the panel says so.
"""

from __future__ import annotations

from ..compat import animation_fcurves
from ..network import build as network
from ..network import remove as network_remove
from ..network import rolls
from ..network.edit import MechanismError, can_add_bones, edit_bones
from .bones import unique_name

ROOT = "-root"


def _orphan_roots(obj) -> list[tuple[str, str, str]]:
    """(root bone, lower bone's old name, suffix) of each network root bone no chain owns: Join
    gives its copy a suffix (``MCH-IK-shin-root.001``), and its target bone the same one."""
    owned = {network.parts(chain.upper_bone, chain.lower_bone).root for chain in obj.two_bone_ik.chains}
    found = []
    bones = obj.pose.bones if obj.pose is not None else {}
    for pose_bone in bones.values() if obj.pose is not None else ():
        name = pose_bone.name
        if not name.startswith(network.PREFIX) or ROOT not in name or name in owned:
            continue
        lower, suffix = name[len(network.PREFIX) :].rsplit(ROOT, 1)
        if bones.get(network.parts("", lower).target + suffix) is not None:
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
        names = network.parts(chain.upper_bone, chain.lower_bone)
        solved[names.upper] = solved[names.lower] = chain.name
        mine |= {chain.upper_bone, chain.lower_bone}
    found: dict[str, list[str]] = {}
    for pose_bone in obj.pose.bones if obj.pose is not None else ():
        constraint = pose_bone.constraints.get(network.CONSTRAINT)
        if constraint is None or pose_bone.name in mine or constraint.subtarget not in solved:
            continue
        found.setdefault(solved[constraint.subtarget], []).append(pose_bone.name)
    return found


def _old_parts(lower: str, suffix: str, upper_solved: str) -> network.Parts:
    """The joined network's bone names: the chain's names with Join's suffix."""
    names = network.parts("", lower)._asdict()
    names = {field: f"{name}{suffix}" for field, name in names.items()}
    names["upper"] = upper_solved
    return network.Parts(**names)


def _chain_bones(obj, old: network.Parts) -> tuple[str, str] | None:
    """(upper, lower) chain bones whose Copy Transforms copy the joined network's solved bones."""
    for pose_bone in obj.pose.bones:
        copy = pose_bone.constraints.get(network.CONSTRAINT)
        parent = pose_bone.parent
        if copy is None or copy.subtarget != old.lower or parent is None:
            continue
        parent_copy = parent.constraints.get(network.CONSTRAINT)
        if parent_copy is not None and parent_copy.subtarget.startswith(network.PREFIX):
            return parent.name, pose_bone.name
    return None


def _source(constraint) -> tuple:
    """(object, bone, Head/Tail) a network Copy Location copies."""
    return constraint.target, constraint.subtarget, getattr(constraint, "head_tail", 0.0)


def _found(obj, root: str, lower_name: str, suffix: str) -> dict | None:
    """What the joined network says of its chain, read before anything changes; None when its
    chain bones cannot be found (then the network is left alone: Remove cannot reach it either)."""
    bones = obj.pose.bones
    old = _old_parts(lower_name, suffix, "")
    pair = _chain_bones(obj, old)
    if pair is None:
        return None
    upper, lower = pair
    old = _old_parts(lower_name, suffix, bones[upper].constraints[network.CONSTRAINT].subtarget)
    if any(bones.get(name) is None for name in (old.target, old.pole)):
        return None
    end = next(
        (
            child.name
            for child in obj.data.bones[lower].children
            if network.END_CONSTRAINT in bones[child.name].constraints
        ),
        "",
    )
    stack = bones[lower].constraints
    settings = {name: bones[root][name] for name, *_ in network.SETTINGS if name in bones[root]}
    return {
        "upper": upper,
        "lower": lower,
        "target": _source(bones[old.target].constraints[network.SOURCE_CONSTRAINTS["target"]]),
        "pole": _source(bones[old.pole].constraints[network.SOURCE_CONSTRAINTS["pole"]]),
        "end": end,
        "stack": "FIRST" if stack.find(network.CONSTRAINT) == 0 and len(stack) > 1 else "LAST",
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
        stale = tuple(network.bone_path(name) for name in info["stale"])
        root = network.parts(info["upper"], info["lower"]).root
        moved = {
            network.setting_path(old.root, name): network.setting_path(root, name)
            for name in info["settings"]
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
    network.build(obj, [chain for chain in obj.two_bone_ik.chains if chain.name in names])
    for info in found:
        rolls.set_rolls(obj, network.parts(info["upper"], info["lower"]), *info["rolls"])
    return names
