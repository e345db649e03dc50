# SPDX-License-Identifier: GPL-3.0-or-later
"""The order chains are solved in, from what each chain's inputs follow (README, "Chains that feed
other chains").

Chain B follows chain A when B's root (its upper bone's parents, its armature object), target or
pole moves with A's bones: a bone below A, an object or armature parented to them, at any depth.
A is solved first, and B reads A's new pose in the same update (moved.Moved). A path through
parenting alone is *modelled*: B is exact after one update. A path through something the driver
does not compute (a constraint, a driver, vertex parenting) is not: B still solves, one update
late, and its status names the chain it waits on. A chain following its own bones, or chains
following each other, form a cycle and do not solve.

The plan is cached until the relations change: the depsgraph says so (a SCENE update: parenting,
constraints and drivers added or retargeted), a chain setting changed, or a constraint was removed
from something the plan walked through (scope.py keeps it).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import NamedTuple

import bpy

from . import mechanism
from .bones import ChainError

TRANSFORM_CHANNELS = frozenset(
    {"location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale"}
)


class Step(NamedTuple):
    """One chain in solving order.

    obj, chain_index:  the armature object and the chain's index in ``obj.two_bone_ik.chains``.
    blocked:     why the chain must not solve (two chains on one bone, a cycle); '' when it can.
    waits_on:    names of earlier chains whose pose reaches this chain's inputs through something the
                 driver does not model: the chain is one update late and says so.
    follows:     ((armature session_uid, chain index), name) of the chains solved before it that move
                 its inputs through parenting: it reads their new poses (moved.Moved).
    feeds:       a later chain reads this chain's new pose (record it in moved.Moved).
    mechanism:   its (upper, lower) mechanism bone names, checked when planned; None when broken
                 (the solve then says what to run).
    in_layer:    which of "target" and "pole" are objects of the view layer itself: one disabled
                 there is not evaluated, so the chain says so instead of following its old place.
    """

    obj: bpy.types.Object
    chain_index: int
    blocked: str
    waits_on: tuple[str, ...]
    follows: tuple[tuple[tuple[int, int], str], ...]
    feeds: bool
    mechanism: tuple[str, str] | None = None
    in_layer: tuple[str, ...] = ()


class Plan(NamedTuple):
    steps: list[Step]
    armatures: tuple[bpy.types.Object, ...]
    # What makes the plan stale without a relations update: the chains of each armature (added,
    # removed, renamed or moved by script), and the number of constraints of each object walked
    # that had some (a constraint removed by script).
    chain_names: tuple[tuple[str, ...], ...]
    constrained: tuple[tuple[bpy.types.Object, str, int], ...]
    references: tuple  # per chain: (armature, bone name, bone pointer) of the bones it names
    # A bone the walk looked for was missing: renaming one in may add a dependency, so re-plan
    # on every update until the file is fixed.
    fragile: bool
    # Objects in the view layer when planned: frame changes fire no depsgraph update, so objects
    # added since (an override made, a rig appended) show up as a new count.
    scene_size: int
    # Each chain's last inputs and solve (evaluate.py): a chain whose inputs did not change is not
    # solved again. In memory only, and gone with the plan.
    solves: dict
    # The chains solved together (a batch.Batch, or None); ``steps`` then holds the others.
    batch: object = None


def _constraint_targets(constraint) -> Iterator[tuple[bpy.types.ID, str]]:
    """(target, subtarget) pairs of a constraint: one, or several (Armature constraint)."""
    target = getattr(constraint, "target", None)
    if target is not None:
        yield target, getattr(constraint, "subtarget", "")
    for item in getattr(constraint, "targets", ()):
        if item.target is not None:
            yield item.target, getattr(item, "subtarget", "")


def _deforming_bones(mesh, groups=None) -> Iterator[tuple[bpy.types.Object, str]]:
    """(armature, bone) pairs deforming ``mesh`` through its Armature modifiers, limited to the
    vertex ``groups`` named (all when None)."""
    names = [group.name for group in getattr(mesh, "vertex_groups", ())] if groups is None else groups
    for modifier in getattr(mesh, "modifiers", ()):
        if modifier.type == "ARMATURE" and modifier.object is not None:
            for name in names:
                yield modifier.object, name


def _variable_bone(variable, target) -> str:
    """The bone a driver variable reads on an armature: its bone target, or the pose bone its
    property path goes through (``pose.bones["shin"].tail``); '' for the object itself."""
    if target.id.type != "ARMATURE":
        return ""
    if variable.type != "SINGLE_PROP":
        return target.bone_target
    path, prefix = target.data_path, 'pose.bones["'
    end = path.find('"]', len(prefix)) if path.startswith(prefix) else -1
    try:
        resolved = target.id.path_resolve(path[: end + 2]) if end > 0 else None
    except ValueError:
        return ""
    return resolved.name if isinstance(resolved, bpy.types.PoseBone) else ""


class _Walker:
    """Finds every armature bone a point follows; remembers what the plan depends on."""

    def __init__(self) -> None:
        self.constrained: dict[tuple[int, str], tuple[bpy.types.Object, str, int]] = {}
        self.fragile = False
        self._drivers: dict[int, dict[str, list[tuple[bpy.types.Object, str]]]] = {}

    def _driver_sources(self, obj, bone_name: str) -> list[tuple[bpy.types.Object, str]]:
        """Objects (and bones) read by drivers on the transform channels of ``obj`` or its bone."""
        table = self._drivers.get(obj.session_uid)
        if table is None:
            table = self._drivers[obj.session_uid] = {}
            animation = obj.animation_data
            for fcurve in animation.drivers if animation is not None else ():
                owner, _, channel = fcurve.data_path.rpartition(".")
                if channel not in TRANSFORM_CHANNELS:
                    continue  # e.g. the influence drivers of the chains' own constraints
                try:
                    name = obj.path_resolve(owner).name if owner else ""
                except (ValueError, AttributeError):
                    continue
                for variable in fcurve.driver.variables:
                    for target in variable.targets:
                        source = target.id
                        if isinstance(source, bpy.types.Object):
                            table.setdefault(name, []).append((source, _variable_bone(variable, target)))
        return table.get(bone_name, [])

    def _foreign(self, owner, constraints, key: tuple[int, str]) -> list:
        """Constraints other than the chains' own Copy Transforms. Where there are some, their count
        is remembered: removing one by script updates no relations (see :func:`stale`)."""
        foreign = [c for c in constraints if c.name != mechanism.CONSTRAINT] if len(constraints) else []
        if foreign:
            self.constrained[key] = (owner, key[1], len(constraints))
        return foreign

    def sources(self, obj, bone_name: str) -> Iterator[tuple[bpy.types.Object, str, bool]]:
        """(armature, bone, modelled) for every bone whose pose moves the point: ``obj``'s bone
        ``bone_name`` (or the object itself for ''), its parents, and what parents, constraints and
        drivers make it follow. ``modelled`` is False once the path passes a constraint, a driver or
        vertex parenting."""
        stack = [(obj, bone_name, True)]
        seen = set()
        while stack:
            obj, name, modelled = stack.pop()
            key = (obj.session_uid, name, modelled)
            if key in seen:
                continue
            seen.add(key)
            follows: list[tuple[bpy.types.ID, str]] = []
            if name and obj.type == "ARMATURE" and obj.pose is not None:
                bone = obj.data.bones.get(name)
                if bone is None:
                    self.fragile = True
                while bone is not None:
                    pose_bone = obj.pose.bones[bone.name]
                    foreign = self._foreign(obj, pose_bone.constraints, (obj.session_uid, bone.name))
                    moved_by = [pair for c in foreign for pair in _constraint_targets(c)]
                    moved_by += self._driver_sources(obj, bone.name)
                    if foreign or moved_by:
                        modelled = False  # its pose is not its parent's times its channels
                    follows += moved_by
                    yield obj, bone.name, modelled
                    bone = bone.parent
            foreign = self._foreign(obj, obj.constraints, (obj.session_uid, ""))
            follows += [pair for c in foreign for pair in _constraint_targets(c)]
            follows += self._driver_sources(obj, "")
            for source, subtarget in follows:
                if not isinstance(source, bpy.types.Object):
                    continue
                if source.type == "ARMATURE":
                    stack.append((source, subtarget, False))
                else:
                    stack.append((source, "", False))
                    # A vertex group of a mesh, or the mesh's surface (Shrinkwrap): the bones deforming it.
                    groups = [subtarget] if subtarget else None
                    stack += [(arm, group, False) for arm, group in _deforming_bones(source, groups)]
            parent = obj.parent
            if parent is None:
                continue
            if obj.parent_type == "BONE" and parent.type == "ARMATURE":
                bone = parent.data.bones.get(obj.parent_bone)
                if bone is None:
                    self.fragile = True
                    stack.append((parent, "", modelled))
                else:
                    # Relative parenting follows the bone's local transform, which Moved does not compute.
                    stack.append((parent, bone.name, modelled and not bone.use_relative_parent))
            elif obj.parent_type in {"OBJECT", "ARMATURE"}:
                stack.append((parent, "", modelled))
            else:  # vertex, lattice, curve parenting: follows the parent's deformed geometry
                stack.append((parent, "", False))
                stack += [(arm, group, False) for arm, group in _deforming_bones(parent)]


def _label(which: str, source, bone: str) -> str:
    return f"The {which} bone '{bone}'" if bone else f"The {which} '{source.name}'"


def cycle_status(obj, chain, which: str, walker: _Walker | None = None) -> str:
    """The cycle status when the chain's ``which`` ("target" or "pole") moves with the chain's own
    bones ('' otherwise, and when unset or the bones are missing)."""
    source = getattr(chain, which)
    upper = obj.data.bones.get(chain.upper_bone)
    if source is None or upper is None:
        return ""
    bone = getattr(chain, f"{which}_bone") if source.type == "ARMATURE" else ""
    walker = walker or _Walker()
    for armature, name, _ in walker.sources(source, bone):
        if armature == obj and name == upper.name:
            return f"{_label(which, source, bone)} moves with the chain's own bones: a cycle"
    return ""


def _chain_inputs(walker: _Walker, obj, chain) -> Iterator[tuple[bpy.types.Object, str, bool]]:
    """Every bone the chain's root, target and pole follow."""
    upper = obj.data.bones.get(chain.upper_bone)
    if upper is None:
        walker.fragile = True
        return
    # The root: the upper bone's parent, or the armature object.
    yield from walker.sources(obj, upper.parent.name if upper.parent is not None else "")
    # Constraints on the chain's own bones that follow other things: judged one update late.
    for name in (chain.upper_bone, chain.lower_bone):
        pose_bone = obj.pose.bones.get(name)
        for constraint in (
            walker._foreign(obj, pose_bone.constraints, (obj.session_uid, name)) if pose_bone else ()
        ):
            for source, subtarget in _constraint_targets(constraint):
                if isinstance(source, bpy.types.Object):
                    for armature, bone, _ in walker.sources(
                        source, subtarget if source.type == "ARMATURE" else ""
                    ):
                        yield armature, bone, False
    for which in ("target", "pole"):
        source = getattr(chain, which)
        if source is not None:
            yield from walker.sources(
                source, getattr(chain, f"{which}_bone") if source.type == "ARMATURE" else ""
            )


def _shared_bones(obj) -> dict[int, str]:
    """Chains of ``obj`` on a bone an earlier chain uses: {index: status}. The mechanism of a bone
    belongs to the first chain using it (mechanism.owns_bones), enabled or not."""
    owners: dict[str, str] = {}
    shared = {}
    for index, chain in enumerate(obj.two_bone_ik.chains):
        bones = (chain.upper_bone, chain.lower_bone)
        clash = next((bone for bone in bones if bone in owners), None)
        if clash is not None:
            shared[index] = (
                f"Bone '{clash}' is also driven by chain '{owners[clash]}': disable or remove one of them"
            )
            continue
        for bone in bones:
            owners.setdefault(bone, chain.name)
    return shared


def _outside(chain, members: set[int], scene_name: str) -> str:
    """The status of a chain whose target or pole is not in the evaluated scene ('' otherwise)."""
    for which in ("target", "pole"):
        source = getattr(chain, which)
        if source is not None and source.session_uid not in members:
            return f"The {which} '{source.name}' is not in scene '{scene_name}': the chain keeps its pose"
    return ""


def _name(keys, reader: int, position: int) -> str:
    """Display name of the chain at ``position``, seen from the chain at ``reader``: the chain's
    name, with its armature's in front when that is another armature."""
    obj, index = keys[position]
    name = obj.two_bone_ik.chains[index].name
    return name if obj == keys[reader][0] else f"{obj.name}: {name}"


def _names(keys, reader: int, positions) -> tuple[str, ...]:
    return tuple(sorted(_name(keys, reader, position) for position in positions))


def _mechanism(obj, index: int, drivers: dict[int, dict[str, frozenset[str]]]) -> tuple[str, str] | None:
    try:
        return mechanism.mechanism_bones(obj, obj.two_bone_ik.chains[index], drivers[obj.session_uid], index)
    except ChainError:
        return None


def build(armatures, members: set[int], layer: set[int], scene_name: str) -> Plan:
    """The solving plan of the chains of ``armatures`` (original objects in the evaluated scene).

    ``members``: session_uids of every object in the scene (scope.py); a target or pole outside it
    is a status, and the chain writes nothing. ``layer``: those of the view layer itself, whose
    visibility there decides whether Blender evaluates them.
    """
    walker = _Walker()
    keys = [(obj, index) for obj in armatures for index in range(len(obj.two_bone_ik.chains))]
    blocked: dict[int, str] = {}
    owner: dict[tuple[int, str], int] = {}  # (armature, upper bone) -> position in keys
    position = 0
    for obj in armatures:
        shared = _shared_bones(obj)
        for index, chain in enumerate(obj.two_bone_ik.chains):
            if index in shared:
                blocked[position] = shared[index]
            else:
                owner.setdefault((obj.session_uid, chain.upper_bone), position)
            position += 1
    # after[b] = {a: modelled}: chain b reads what chain a moves.
    after: list[dict[int, bool]] = [{} for _ in keys]
    for position, (obj, index) in enumerate(keys):
        if position in blocked:
            continue
        chain = obj.two_bone_ik.chains[index]
        status = _outside(chain, members, scene_name)
        status = (
            status or cycle_status(obj, chain, "target", walker) or cycle_status(obj, chain, "pole", walker)
        )
        if status:
            blocked[position] = status
            continue
        for armature, bone, modelled in _chain_inputs(walker, obj, chain):
            other = owner.get((armature.session_uid, bone))
            if other is not None and other != position:
                after[position][other] = after[position].get(other, True) and modelled

    # Kahn's algorithm, taking ready chains in their listed order.
    waiting = [len(sources) for sources in after]
    readers: list[list[int]] = [[] for _ in keys]
    for position, sources in enumerate(after):
        for source in sources:
            readers[source].append(position)
    ready = [position for position, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        position = heapq.heappop(ready)
        order.append(position)
        for reader in readers[position]:
            waiting[reader] -= 1
            if waiting[reader] == 0:
                heapq.heappush(ready, reader)
    done = set(order)
    leftover = [position for position in range(len(keys)) if position not in done]
    cycles = _on_cycles(leftover, after)
    for position in leftover:
        names = ", ".join(
            f"'{name}'" for name in _names(keys, position, [p for p in after[position] if p not in done])
        )
        if position in cycles:
            blocked.setdefault(position, f"This chain and {names} move each other: a cycle")
        else:
            blocked.setdefault(position, f"Follows chain {names}, which is in a cycle: nothing is written")
        order.append(position)

    feeds = {source for sources in after for source, modelled in sources.items() if modelled}
    drivers = {obj.session_uid: mechanism.driver_paths(obj) for obj in armatures}
    steps = []
    for position in order:
        obj, index = keys[position]
        sources = after[position]
        parented = [p for p, exact in sources.items() if exact]
        follows = tuple(((keys[p][0].session_uid, keys[p][1]), _name(keys, position, p)) for p in parented)
        steps.append(
            Step(
                obj,
                index,
                blocked.get(position, ""),
                _names(keys, position, [p for p, exact in sources.items() if not exact]),
                follows,
                position in feeds,
                _mechanism(obj, index, drivers),
                _in_layer(obj.two_bone_ik.chains[index], layer),
            )
        )
    return Plan(
        steps,
        tuple(armatures),
        tuple(tuple(obj.two_bone_ik.chains.keys()) for obj in armatures),
        tuple(walker.constrained.values()),
        tuple(_references(obj, obj.two_bone_ik.chains[index]) for obj, index in keys),
        walker.fragile,
        len(layer),
        {},
    )


def _in_layer(chain, layer: set[int]) -> tuple[str, ...]:
    """Which of the chain's target and pole are objects of the view layer itself."""
    return tuple(
        which
        for which in ("target", "pole")
        if getattr(chain, which) is not None and getattr(chain, which).session_uid in layer
    )


def _on_cycles(positions: list[int], after: list[dict[int, bool]]) -> set[int]:
    """Those of ``positions`` that reach themselves through ``after`` (a cycle, not a chain after one)."""
    inside = set(positions)
    on_cycles = set()
    for start in positions:
        stack, seen = [p for p in after[start] if p in inside], set()
        while stack:
            position = stack.pop()
            if position == start:
                on_cycles.add(start)
                break
            if position not in seen:
                seen.add(position)
                stack += [p for p in after[position] if p in inside]
    return on_cycles


def _references(obj, chain) -> tuple:
    """The bones the chain names (its bones, target and pole bones), each with the bone it names
    now (``as_pointer()``, 0 when missing): a rename gives a name to another bone, and renames
    update no relations."""
    named = [(obj, chain.upper_bone), (obj, chain.lower_bone)]
    for which in ("target", "pole"):
        source = getattr(chain, which)
        if source is not None and source.type == "ARMATURE" and getattr(chain, f"{which}_bone"):
            named.append((source, getattr(chain, f"{which}_bone")))
    return tuple((armature, name, _pointer(armature, name)) for armature, name in named)


def _pointer(armature, name: str) -> int:
    bone = armature.data.bones.get(name)
    return bone.as_pointer() if bone is not None else 0


def stale(plan: Plan) -> bool:
    """Whether ``plan`` no longer fits: chains added, removed, renamed or moved, a walked constraint
    removed, a bone a chain names renamed, or a missing bone that a rename may have brought back."""
    if plan.fragile or plan.chain_names != tuple(
        tuple(obj.two_bone_ik.chains.keys()) for obj in plan.armatures
    ):
        return True
    for owner, bone, count in plan.constrained:
        holder = owner.pose.bones.get(bone) if bone else owner
        if holder is None or len(holder.constraints) != count:
            return True
    return any(
        _pointer(armature, name) != pointer for named in plan.references for armature, name, pointer in named
    )
