# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a chain's network is whole and its own: the bones it needs and shares, what was added
to it by hand (foreign parts), renamed parts, and the problem the status shows (''
when the network is sound). Reads :mod:`.spec` for what the network should be."""

from __future__ import annotations

import bpy
from mathutils import Euler, Matrix, Quaternion

from ..compat import animation_fcurves
from . import outputs, rolls, spec
from .layout import (
    COLLECTION,
    INHERIT,
    SETTINGS,
    bone_path,
    bone_prefix,
    legacy,
    legacy_setting_path,
)
from .layout import stale_turn as stale_mode
from .naming import Parts, chain_parts

# Blender keeps 63 bytes of a bone's name.
MAX_NAME_BYTES = 63


def first_users(obj) -> dict[str, tuple[int, str]]:
    """Each bone used by a chain of ``obj`` -> (``as_pointer()``, name) of the first chain in the
    list using it: that chain owns the bone (:func:`sharing`)."""
    users: dict[str, tuple[int, str]] = {}
    for chain in obj.two_bone_ik.chains:
        for bone in (chain.upper_bone, chain.lower_bone):
            users.setdefault(bone, (chain.as_pointer(), chain.name))
    return users


def sharing(obj, chain, users: dict[str, tuple[int, str]] | None = None) -> str:
    """The name of an earlier chain of ``obj`` using one of ``chain``'s bones ('' when none): the
    first chain in the list owns a bone, since two networks cannot drive one bone, and their bone
    names would clash. ``users``: :func:`first_users` of ``obj``, when a caller asks for many."""
    users = first_users(obj) if users is None else users
    pointer = chain.as_pointer() if hasattr(chain, "as_pointer") else None
    for bone in (chain.upper_bone, chain.lower_bone):
        first = users.get(bone)
        if first is not None and first[0] != pointer:
            return first[1]
    return ""


def network_owners(obj) -> dict[str, list]:
    """Each network bone name of ``obj``'s chains -> the chains whose network has it."""
    owners: dict[str, list] = {}
    for chain in obj.two_bone_ik.chains:
        for name in chain_parts(chain):
            owners.setdefault(name, []).append(chain)
    return owners


def check_bones(obj, chain, owners: dict[str, list] | None = None) -> None:
    """ValueError naming the bone when the chain's bones are missing, not parent and child, or
    named too long for the network's bone names (Blender would cut them), or when another chain's
    network has a bone name this chain's needs. ``owners``: :func:`network_owners` of ``obj``."""
    bones = obj.data.bones
    for name in (chain.upper_bone, chain.lower_bone):
        if not name or bones.get(name) is None:
            raise ValueError(f"bone {name!r} not found in {obj.name!r}")
    if bones[chain.lower_bone].parent != bones[chain.upper_bone]:
        raise ValueError(f"bone {chain.lower_bone!r} is not a child of {chain.upper_bone!r}")
    owners = network_owners(obj) if owners is None else owners
    mine = chain_parts(chain)
    chain_bones = {chain.upper_bone, chain.lower_bone}
    for name in sorted(set(mine)):
        for other in owners.get(name, ()):
            # (A chain sharing a bone with this one is the sharing rule's, not a name clash.)
            if not {other.upper_bone, other.lower_bone} & chain_bones:
                raise ValueError(
                    f"the network bone {name!r} of chain {other.name!r} has the name this "
                    f"chain's network needs: rename bone {chain.lower_bone!r} or {chain.upper_bone!r}"
                )
    longest = max(mine, key=lambda name: len(name.encode()))
    if len(longest.encode()) > MAX_NAME_BYTES:
        extra = len(longest.encode()) - MAX_NAME_BYTES
        raise ValueError(
            f"bone name {chain.lower_bone!r} is too long for the network's bone {longest!r}: "
            f"shorten it by {extra} characters"
        )


def _kept_paths(names: Parts) -> tuple[str, ...]:
    """F-Curve data paths on the network's bones that are a chain's own data in a network of the
    earlier layout (:func:`legacy`): its settings and rolls, which Update Mechanism moves to the lower
    bone (network/legacy.py). Today's networks keep no data of the chain's there."""
    settings = tuple(legacy_setting_path(names.root, name) for name, *_ in SETTINGS)
    return (
        *settings,
        f"{bone_path(names.upper)}.rotation_axis_angle",
        f"{bone_path(names.lower)}.rotation_quaternion",
    )


def foreign(obj, chain) -> list[str]:
    """What was added to the chain's network bones by hand, in words ('... on bone'): constraints
    of others, and keys or drivers other than on the settings and rolls (:func:`_kept_paths`).
    A rebuild (:func:`.build.build`) removes them."""
    return foreign_all(obj, [chain])[0]


def foreign_all(obj, chains) -> list[list[str]]:
    """:func:`foreign` of each of ``chains``, reading the armature's F-Curves once."""
    found: list[list[str]] = [[] for _ in chains]
    chain_of_path = {}  # network bone path -> index of its chain in ``chains``
    kept, ours = set(), set()
    for index, chain in enumerate(chains):
        names = chain_parts(chain)
        for field, name in zip(Parts._fields, names, strict=True):
            chain_of_path[bone_path(name)] = index
            pose_bone = obj.pose.bones.get(name)
            own = spec.OWN_CONSTRAINTS.get(field, ())
            for constraint in pose_bone.constraints if pose_bone is not None else ():
                if constraint.name not in own:
                    found[index].append(f"the constraint '{constraint.name}' on '{name}'")
        if legacy(obj, chain):
            kept |= set(_kept_paths(names))
        ours |= _network_drivers(names)
    for fcurves in animation_fcurves(obj):
        driver = fcurves == obj.animation_data.drivers
        for fcurve in fcurves:
            path = fcurve.data_path
            owner = chain_of_path.get(bone_prefix(path))
            if owner is None or path in kept or (driver and (path, fcurve.array_index) in ours):
                continue
            bone = path.split('"')[1]
            found[owner].append(f"a {'driver' if driver else 'key'} on '{bone}' ({path.rsplit('.', 1)[-1]})")
    return [list(dict.fromkeys(lines)) for lines in found]  # one line for the channels of one property


def _network_drivers(names: Parts) -> set[tuple[str, int]]:
    """(data path, index) of the drivers the network makes on its own bones (:data:`.spec.DRIVERS`)."""
    return {
        (f"{bone_path(getattr(names, field))}.{channel}", index)
        for field, drivers in spec.DRIVERS.items()
        for channel, index in drivers
    }


def driven_channels(obj) -> frozenset[tuple[str, int]]:
    """(data path, index) of every driver of ``obj``."""
    animation = obj.animation_data
    return (
        frozenset((f.data_path, f.array_index) for f in animation.drivers)
        if animation is not None
        else frozenset()
    )


def _turned(obj, names: Parts, driven: frozenset | None = None) -> str:
    """The first network bone whose own channels are not as the build left them ('' when none):
    its rotation mode (any for a quaternion bone, whose turn is what counts), and each channel no
    driver of the network sets at no location, unit scale and the spec's start rotation
    (:data:`.spec.FORWARD`, :func:`.rolls.start`), within 1e-5. A key or a typed value there (Bake
    Action of every bone keys them all) turns the chain in ways its joints' positions may not show:
    a solved bone rolled about its own axis."""
    bones = obj.pose.bones
    # A driver of anyone's: a foreign one is reported by foreign(), with what it moves.
    drivers = driven_channels(obj) if driven is None else driven
    for spec_bone in spec.NETWORK:
        name = getattr(names, spec_bone.field)
        pose_bone = bones[name]
        channels: list[tuple[str, tuple[float, ...]]] = [("location", (0.0,) * 3), ("scale", (1.0,) * 3)]
        if spec_bone.rotation_mode == "QUATERNION":
            turn = Quaternion(spec.FORWARD if spec_bone.start == "forward" else (1.0, 0.0, 0.0, 0.0))
            if pose_bone.rotation_mode != "QUATERNION":
                # Another mode, set by a tool that sets every bone's: Blender kept the turn in
                # it, which is all the network reads of the bone.
                own = own_turn(pose_bone)
                if own.dot(turn) < 0.0:
                    own.negate()
                if (own - turn).magnitude > 1e-5:
                    return name
            else:
                if pose_bone.rotation_quaternion.dot(turn) < 0.0:  # -q is the same turn
                    turn.negate()
                channels.append(("rotation_quaternion", (turn.w, turn.x, turn.y, turn.z)))
        elif pose_bone.rotation_mode != spec_bone.rotation_mode:
            return name
        else:
            start = rolls.start(obj, names) if spec_bone.start == "bent" else Euler()
            channels.append(("rotation_euler", (start.x, start.y, start.z)))
        for channel, wanted in channels:
            values = getattr(pose_bone, channel)
            path = f"{bone_path(name)}.{channel}"
            if any(
                (path, index) not in drivers and not abs(value - want) <= 1e-5
                for index, (value, want) in enumerate(zip(values, wanted, strict=True))
            ):
                return name
    return ""


def _gone_driver(names: Parts, drivers: frozenset) -> str:
    """The first of the drivers on the network bones' channels that is missing, as "'bone'
    (channel)" ('' when none): the channel then keeps its last value. (Not the rotation modes'
    drivers: a network built before them plays without them. A constraint's influence driver
    goes with its constraint, which the pose's miss names.)"""
    for spec_bone in spec.NETWORK:
        path = bone_path(getattr(names, spec_bone.field))
        for driver in spec_bone.drivers:
            if (f"{path}.{driver.channel}", max(driver.array_index, 0)) not in drivers:
                return f"'{getattr(names, spec_bone.field)}' ({driver.channel})"
    return ""


def own_turn(pose_bone) -> Quaternion:
    """The turn of ``pose_bone``'s own rotation channel, the one its rotation mode uses."""
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        return pose_bone.rotation_quaternion.normalized()
    if mode == "AXIS_ANGLE":
        angle, *axis = pose_bone.rotation_axis_angle
        return Quaternion(axis, angle)
    return pose_bone.rotation_euler.to_quaternion()


def _rest_changed(obj, chain, names: Parts) -> str:
    """The chain bone whose parent, inherit settings or rest pose no longer match the network built
    for it ('' when they match): the network baked them in. Rest matrices are float32: positions
    are compared within 1e-5 x the chain's length or float32's precision at their distance from the
    armature's origin, whichever is coarser, and rotations within what moves a bone's end by that
    much (Blender's own rest matrices disagree with the edit bones they came from by up to 1.3e-5
    rad on a 0.3 m bone of Rigify's paws, 4e-6 m at its end)."""
    bones = obj.data.bones
    upper, lower, root = bones[chain.upper_bone], bones[chain.lower_bone], bones[names.root]
    length = upper.length + lower.length
    noise = 1e-6 * max(upper.head_local.length, lower.head_local.length, lower.tail_local.length)
    position = max(1e-5 * length, noise)
    rotation = position / min(upper.length, lower.length)
    if (
        root.parent != upper.parent
        or any(getattr(root, flag) != getattr(upper, flag) for flag in INHERIT)
        or not _near(root.matrix_local, upper.matrix_local, rotation, position)
    ):
        return upper.name
    offset = upper.matrix_local.inverted() @ lower.matrix_local
    solved = bones[names.upper].matrix_local.inverted() @ bones[names.lower].matrix_local
    if (
        not _near(offset, solved, rotation, position)
        or abs(bones[names.lower].length - lower.length) > position
    ):
        return lower.name
    return ""


def _near(first: Matrix, second: Matrix, rotation: float, position: float) -> bool:
    """Whether two 4x4 matrices agree: their 3x3 parts entry by entry within ``rotation``, their
    translations within ``position`` (a distance)."""
    difference = first - second
    if any(abs(difference[row][column]) > rotation for row in range(3) for column in range(3)):
        return False
    return (first.translation - second.translation).length <= position


def users_parts(armature, skip=None) -> set[str]:
    """The network bone names of the chains of every object using ``armature`` but ``skip``."""
    return {
        name
        for user in bpy.data.objects
        if user.data == armature and user != skip
        for chain in user.two_bone_ik.chains
        for name in chain_parts(chain)
    }


def renamed_part(obj, chain) -> tuple[str, str] | None:
    """(network bone name, its name now) when one of the chain's network bones was renamed by hand:
    the chain lacks exactly that bone, and exactly one bone of the mechanism collection that is no
    chain's hangs from or holds one of the chain's network bones (Blender's rename kept it wired
    in: constraints, drivers and keys re-pointed). None otherwise."""
    names = chain_parts(chain)
    bones = obj.data.bones
    missing = [name for name in names if bones.get(name) is None]
    collection = obj.data.collections_all.get(COLLECTION)
    if len(missing) != 1 or collection is None:
        return None
    owned = users_parts(obj.data)
    mine = set(names)
    wired = [
        bone.name
        for bone in collection.bones
        if bone.name not in owned
        and (
            (bone.parent is not None and bone.parent.name in mine)
            or any(c.name in mine for c in bone.children)
        )
    ]
    return (missing[0], wired[0]) if len(wired) == 1 else None


def problem(obj, chain, driven: frozenset | None = None) -> str:
    """Why the chain's network cannot give its pose ('' when it is whole): a bone shared with an
    earlier chain, a missing network bone, a chain bone whose Two-Bone IK constraint is missing or
    copies another bone, or inherit settings changed since the build (network/outputs.py). The message
    says what to run."""
    other = sharing(obj, chain)
    if other:
        return f"A bone of this chain is also a bone of chain '{other}', which drives it: pick other bones"
    names = chain_parts(chain)
    bones = obj.pose.bones
    missing = next((name for name in names if bones.get(name) is None), "")
    if missing:
        moved = renamed_part(obj, chain)
        if moved:
            return (
                f"The chain's network bone '{moved[0]}' was renamed '{moved[1]}': run Pose > Two-Bone IK > "
                "Update Mechanism to name it back"
            )
        return f"The chain's network lacks bone '{missing}': run Pose > Two-Bone IK > Update Mechanism"
    # (The rest first: Apply Pose as Rest Pose of every bone also clears the network's channels.)
    changed = _rest_changed(obj, chain, names)
    if changed:
        return (
            f"The rest pose, parent or inherit settings of '{changed}' changed since the chain was built: "
            "run Pose > Two-Bone IK > Update Mechanism"
        )
    if not legacy(obj, chain):
        drivers = driven_channels(obj) if driven is None else driven
        gone = _gone_driver(names, drivers)
        if gone:
            return (
                f"The network's driver on {gone} is gone (Clear Animation Data removes an armature's "
                "drivers): run Pose > Two-Bone IK > Update Mechanism"
            )
        turned = _turned(obj, names, drivers)
        if turned:
            return (
                f"The network bone '{turned}' was keyed or turned (Bake Action of every bone does): "
                "run Pose > Two-Bone IK > Update Mechanism"
            )
    for bone_name, row in outputs.chain_outputs(obj, chain):
        if not row.copies:
            continue
        constraint = bones[bone_name].constraints.get(row.name)
        if constraint is None or not outputs.own(constraint, row, getattr(names, row.copies)):
            return (
                f"'{bone_name}' lacks the chain's Copy Transforms: run Pose > Two-Bone IK > Update Mechanism "
                "(or, on a baked rig, remove the chain)"
            )
        if constraint.owner_space != outputs.space(obj, chain, row):
            return (
                f"The inherit settings of '{bone_name}' changed since the chain was built: "
                "run Pose > Two-Bone IK > Update Mechanism"
            )
    return _switch_problem(obj, chain)


def _switch_problem(obj, chain) -> str:
    """Why the chain's constraints do not follow its Influence and Enabled ('' when they do): one is
    muted, or its influence driver is gone, muted or stopped."""
    drivers = obj.animation_data.drivers if obj.animation_data is not None else None
    for bone_name, row in outputs.chain_outputs(obj, chain, spec.POSING):
        constraint = obj.pose.bones[bone_name].constraints.get(row.name)
        if constraint is None:
            continue
        if constraint.mute:
            return (
                f"The chain's constraint on '{bone_name}' is muted: unmute it (the chain's Enabled "
                "turns the chain off)"
            )
        fcurve = drivers.find(constraint.path_from_id("influence")) if drivers is not None else None
        if fcurve is None or fcurve.mute or not fcurve.driver.is_valid:
            return (
                f"The influence driver of the chain's constraint on '{bone_name}' is missing or muted: "
                "run Pose > Two-Bone IK > Update Mechanism"
            )
    return ""


def stale_turn(obj, chain) -> str:
    """Why the chain's lower bone's own turn about its axis is not read ('' when it is): its rotation
    mode changed since the network was built, which reads the channels of the mode it had."""
    mode = stale_mode(obj, chain_parts(chain))
    if not mode:
        return ""
    return (
        f"'{chain.lower_bone}' was set to rotation mode {mode} after the chain was built: its turn about "
        "its own axis is not read; run Pose > Two-Bone IK > Update Mechanism"
    )


def mirrored_copy(obj, chain) -> str:
    """Why the chain's mirrored bones (Blender's naming rule: ``shin.R`` for ``shin.L``) follow its
    leg ('' when they do not): they carry a copy of its constraint, which still copies its solved
    bones (Symmetrize copies constraints; it flips their targets only to bones that exist)."""
    lower = bpy.utils.flip_name(chain.lower_bone)
    pose_bone = obj.pose.bones.get(lower) if lower != chain.lower_bone else None
    constraint = pose_bone.constraints.get(spec.COPY_LOWER.name) if pose_bone is not None else None
    if constraint is None or constraint.subtarget != chain_parts(chain).lower:
        return ""
    return (
        f"'{lower}' copies this chain's constraints (Symmetrize copies them) and follows its leg: run "
        "Pose > Two-Bone IK > Update Mechanism to make it a chain of its own"
    )
