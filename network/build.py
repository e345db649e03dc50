# SPDX-License-Identifier: GPL-3.0-or-later
"""Build one chain's native network: bones, constraints and simple-expression drivers that make
Blender itself put the contract's solve into the chain bones (docs/design.md, "The native network").

What the network is (each bone: parent, rest, constraints, drivers and their rules) is written
once, in :mod:`.spec` (``NETWORK``): this module makes it from that table, and
``docs/how-it-works.md`` shows it.

The chain's settings and rolls are custom properties of the lower chain bone (``IK Influence``,
``IK Enabled``, ``IK Twist``, ``IK Softness``, ``IK Upper Roll``, ``IK Lower Roll``:
:data:`PROPERTIES`), where the animation editors list their keys under the bone, as a Blender IK
constraint's influence; the drivers read them there. The chain bones get a Copy Transforms of
``MCH-IK-U`` and ``MCH-IK-L`` (influence ``influence * enabled``, 0 where the network cannot
solve: :func:`solver.expressions.influence`), and with End Rotation Target the
end bone a Copy Rotation of the target, last in their stacks or first (``chain.stack_position``,
:func:`place`). Every driver is a simple expression (:mod:`solver.expressions`): no Python, no Auto
Run, and nothing of the extension is needed to evaluate it. Distances are measured in the root
bone's frame and the rest lengths are baked into the expressions, so the parents' scale scales the
whole chain (uneven too: the tracks work in the root's space, docs/contract.md D6); the chain bones'
own location and scale channels are not read (the chain's readouts measure what that misses).

Bones can only be added in Edit Mode: :func:`build` is run by the operators, never per update.
"""

from __future__ import annotations

import math

import bpy
from mathutils import Euler, Matrix

from ..solver import expressions
from . import legacy as legacy_layout
from . import outputs, rolls, spec
from .drivers import OUTPUT_PATH, make_driver
from .edit import MechanismError, bone_collection, can_add_bones, edit_bones
from .health import check_bones, first_users, network_owners, sharing
from .layout import (
    COLLECTION,
    CURRENT_LAYOUT,
    DESCRIPTIONS,
    LAYOUT,
    PROPERTIES,
    ROLLS,
    SETTINGS,
    SIDE,
    TURN_MODE,
    bone_path,
    built_side,
    influence_path,
    legacy,
    legacy_setting_path,
    number,
    set_number,
    setting_path,
    source,
)
from .naming import Parts, chain_lower, chain_parts, side
from .remove import clear_constraints, clear_foreign, remove_constraint
from .rest import EditBones, RestShape, edit_chain
from .templates import Templates


def _source(constraint, chain, which: str) -> None:
    """Aim ``constraint`` at the chain's target or pole (a bone's Head/Tail point), or at nothing.
    The subtarget is cleared for an object: on a mesh it would name a vertex group."""
    constraint.target, constraint.subtarget = source(chain, which)
    if hasattr(constraint, "head_tail"):  # Copy Location has it; Copy Rotation (End Rotation) not
        armature = constraint.target is not None and constraint.target.type == "ARMATURE"
        constraint.head_tail = getattr(chain, f"{which}_head_tail") if armature else 0.0


def _settings(obj, chain, names: Parts, kept: tuple[float, float], before: float) -> None:
    """The chain's settings and rolls as custom properties of its lower bone: the values there, or
    those a network of the earlier layout kept on its root bone (then removed there), or the chain's own; the
    rolls ``kept`` (:func:`.rolls.current`, the solve's), stored times the chain's side
    (:func:`.naming.side`), which the root bone records (:data:`SIDE`). A twist stored for a network
    of side ``before`` is turned to keep its solve."""
    lower, root = obj.pose.bones[chain.lower_bone], obj.pose.bones[names.root]
    now = side(chain.lower_bone)
    values = {name: now * roll for (name, _), roll in zip(ROLLS, kept, strict=True)}
    for name, default, _, _ in SETTINGS:
        values[name] = number(
            lower[PROPERTIES[name]]
            if PROPERTIES[name] in lower
            else root[name]
            if name in root
            else getattr(chain, name, default)
        )
    values["twist"] *= now * before
    for name, *_ in SETTINGS:
        if name in root:
            del root[name]
    root[SIDE] = now
    root[LAYOUT] = CURRENT_LAYOUT
    root[TURN_MODE] = next(
        mode for mode in expressions.own_turn_modes(lower.rotation_mode) if mode != "QUATERNION"
    )
    ranges = {name: (default, low, high) for name, default, low, high in SETTINGS}
    ranges.update({name: (default, -math.inf, math.inf) for name, default in ROLLS})
    for name, (default, low, high) in ranges.items():
        value: float | bool = values[name]
        key = PROPERTIES[name]
        if name == "enabled":
            # A boolean: a checkbox, keyed with constant interpolation, as a constraint's switch.
            value = values[name] > 0.0
        set_number(lower, key, value)
        ui = lower.id_properties_ui(key)
        if isinstance(value, bool):
            ui.update(default=default > 0.0, description=DESCRIPTIONS[name])
        elif math.isinf(low):
            ui.update(default=default, subtype="ANGLE", description=DESCRIPTIONS[name])
        else:
            ui.update(
                default=default,
                min=low,
                max=high,
                soft_min=low,
                soft_max=high,
                description=DESCRIPTIONS[name],
            )
        lower.property_overridable_library_set(f'["{key}"]', True)


def _influence(made: Templates, obj, bone: str, row: spec.Output, chain, names: Parts) -> None:
    """Drive the influence of ``row``'s constraint on ``bone`` by its rule (:data:`.spec.OUTPUTS`)."""
    path = f'constraints["{bpy.utils.escape_identifier(row.name)}"]'
    rule = row.influence
    if rule is None:  # a muted one poses nothing
        return
    wanted = rule._replace(channel=f"{path}.{rule.channel}")
    make_driver(made, obj, bone, wanted, names, _setting_paths(obj, chain))


def _setting_paths(obj, chain) -> dict[str, str]:
    """Where the chain's network reads each setting: the lower bone's properties, or the root
    bone's in a network of the earlier layout (:func:`legacy`); and under :data:`OUTPUT_PATH` the
    influence of the upper bone's chain constraint."""
    output = {OUTPUT_PATH: influence_path(chain.upper_bone, spec.COPY_UPPER.name)}
    if legacy(obj, chain):
        root = chain_parts(chain).root
        return {name: legacy_setting_path(root, name) for name, *_ in SETTINGS} | output
    return {name: setting_path(chain.lower_bone, name) for name in PROPERTIES} | output


def _pose(
    made: Templates, obj, chain, names: Parts, shape: RestShape, kept: tuple[float, float], before: float
) -> None:
    """Pose Mode part of :func:`build`: the constraints and drivers of :data:`.spec.NETWORK` on the
    new bones, the chain's settings and its rolls ``kept`` (upper, lower:
    :func:`.rolls.set_rolls`), and the chain bones' Copy Transforms."""
    bones = obj.pose.bones
    for name in names:
        # A rebuilt bone keeps the pose channels of the one it replaces (Blender keeps them by
        # name): clear what a script or a broken file left there.
        bones[name].matrix_basis = Matrix.Identity(4)
    _settings(obj, chain, names, kept, before)
    settings = _setting_paths(obj, chain)
    start = rolls.start(obj, names)
    for spec_bone in spec.NETWORK:
        name = getattr(names, spec_bone.field)
        pose_bone = bones[name]
        pose_bone.rotation_mode = spec_bone.rotation_mode
        if spec_bone.start == "forward":
            pose_bone.rotation_quaternion = spec.FORWARD
        elif spec_bone.start == "bent":
            pose_bone.rotation_euler = start
        for constraint in spec_bone.constraints:
            if constraint.source:
                template = made.template(constraint.kind, constraint.name, None)
                _source(template, chain, constraint.source)
                made.copy(pose_bone, template)
            else:
                space_bone = names.root if constraint.space == "CUSTOM" else ""
                target = getattr(names, constraint.target)
                made.constraint(
                    pose_bone, constraint.kind, constraint.name, obj, target, constraint.space, space_bone
                )
            if constraint.influence is not None:
                make_driver(made, obj, name, constraint.influence, names, settings, shape, start)
        for driver in spec_bone.drivers:
            make_driver(made, obj, name, driver, names, settings, shape, start)
    _rotation_modes(made, obj, names)
    _starts(made, obj, names, start)

    for bone_name, row in outputs.chain_outputs(obj, chain):
        if row.copies:
            solved = getattr(names, row.copies)
            made.constraint(bones[bone_name], row.kind, row.name, obj, solved, outputs.space(obj, chain, row))
            _influence(made, obj, bone_name, row, chain, names)
    _sync(made, obj, chain, names, rebuild=True)


def _rotation_modes(made: Templates, obj, names: Parts) -> None:
    """The constant :data:`.spec.MODE` driver on each of :data:`.spec.MODE_DRIVEN`: the bone's
    rotation mode as the spec gives it (Blender's enum value)."""
    modes = bpy.types.PoseBone.bl_rna.properties["rotation_mode"].enum_items
    for spec_bone in spec.NETWORK:
        if spec_bone.field in spec.MODE_DRIVEN:
            path = f"{bone_path(getattr(names, spec_bone.field))}.{spec.MODE.channel}"
            made.driver(obj, path, spec.MODE.array_index, str(modes[spec_bone.rotation_mode].value))


def _starts(made: Templates, obj, names: Parts, start: Euler) -> None:
    """The constant driver on each channel of :data:`.spec.START_DRIVEN` whose start is not 0: its
    start value (:data:`.spec.FORWARD`, :func:`.rolls.start`), which a clear tool resets."""
    for field, channels in spec.START_DRIVEN.items():
        spec_bone = next(bone for bone in spec.NETWORK if bone.field == field)
        values = spec.FORWARD if spec_bone.start == "forward" else (start.x, start.y, start.z)
        for channel, index in channels:
            if abs(values[index]) > 1e-9:
                path = f"{bone_path(getattr(names, field))}.{channel}"
                made.driver(obj, path, index, repr(float(values[index])))


def _controls_constraint(obj, chain) -> None:
    """Make or update :data:`.spec.CONTROLS` on its bone: muted, aimed at the chain's target and pole
    (a bone's name, or none for an object)."""
    row = spec.CONTROLS
    pose_bone = obj.pose.bones[outputs.slot_bone(obj, chain, row.slot)]
    constraint = pose_bone.constraints.get(row.name)
    if constraint is None:
        constraint = pose_bone.constraints.new(row.kind)
        constraint.name = row.name
        constraint.chain_count = 2
        constraint.show_expanded = False
        constraint.enabled = False
    for which, target, subtarget in (
        ("target", "target", "subtarget"),
        ("pole", "pole_target", "pole_subtarget"),
    ):
        named, bone = source(chain, which)
        if getattr(constraint, target) != named:
            setattr(constraint, target, named)
        if getattr(constraint, subtarget) != bone:
            setattr(constraint, subtarget, bone)


def place(obj, chain) -> None:
    """Put the chain's constraints (Copy Transforms on its bones, End Rotation on the end bone)
    first or last in their bones' stacks, as ``chain.stack_position`` says: last, the chain's pose
    comes out whatever the other constraints do; first, they act on it."""
    for bone_name, row in outputs.chain_outputs(obj, chain, spec.POSING):
        pose_bone = obj.pose.bones.get(bone_name)
        index = pose_bone.constraints.find(row.name) if pose_bone is not None else -1
        if index < 0:
            continue
        wanted = 0 if chain.stack_position == "FIRST" else len(pose_bone.constraints) - 1
        if index != wanted:
            pose_bone.constraints.move(index, wanted)


def build(obj, chains, moved: list[str] | None = None) -> list[Parts]:
    """Build (or rebuild, whole) the native network of each of ``chains`` on armature ``obj``.

    A chain on a bone of an earlier chain (:func:`sharing`) is left out: its status says so.
    A chain has the settings of ``obj.two_bone_ik.chains`` items: ``upper_bone``, ``lower_bone``,
    ``target``, ``target_bone``, ``target_head_tail``, ``pole``, ``pole_bone``, ``pole_head_tail``,
    ``end_rotation``, ``end_bone``, ``stack_position``, and the initial ``influence``, ``enabled``,
    ``twist`` (radians) and ``softness`` (0 to 1), copied into the root bone's custom properties
    (:data:`SETTINGS`), which the drivers read from then on.

    One Edit Mode session for all chains; the armature goes back to the mode it was in. Returns
    the bone names of each chain. Raises MechanismError when bones cannot be added to the armature
    (library data, Edit Mode refused) and ValueError naming the bone when a chain's bones are
    missing or not parent and child; nothing is changed then.

    A network of the earlier layout (:func:`legacy`) is rebuilt with the settings' keys and drivers
    moved to the lower bone and its roll keys turned into keys on the roll properties
    (network/legacy.py); what moved is added to ``moved``, in words.
    """
    users, owners = first_users(obj), network_owners(obj)
    chains = [chain for chain in chains if not sharing(obj, chain, users)]
    for chain in chains:
        check_bones(obj, chain, owners)
    reason = can_add_bones(obj)
    if reason:
        raise MechanismError(reason)
    # Read every setting before Edit Mode: leaving it may free Python references to the chains.
    names = [chain_parts(chain) for chain in chains]
    kept = [rolls.current(obj, name) for name in names]  # a rebuild keeps them
    # The side the stored twist is for: the network's, or the chain's own for a first build.
    before = [built_side(obj, name) for name in names]
    chain_bones = [bone for chain in chains for bone in (chain.upper_bone, chain.lower_bone)]
    context = bpy.context
    old = {}  # chain index -> (keyed roll frames, the old network's solved poses)
    unturned = {}  # the same, for networks built before the lower bone's own turn and sides
    for index, (chain, name) in enumerate(zip(chains, names, strict=True)):
        if legacy(obj, chain):
            frames = legacy_layout.roll_frames(obj, name)
            old[index] = frames, legacy_layout.solved_poses(context, obj, name, frames)
        elif legacy_layout.needs_turn_upgrade(obj, chain, name):
            frames = legacy_layout.turn_frames(obj, chain, name)
            unturned[index] = frames, legacy_layout.solved_poses(context, obj, name, frames)
    with edit_bones(obj) as edit:  # first: it may be refused, and nothing is changed yet
        for index in old:
            said = legacy_layout.move_settings(obj, chains[index], names[index])
            if moved is not None and said:
                moved.append(f"'{chains[index].lower_bone}': keys of {', '.join(said)}")
        collection, bones = bone_collection(obj.data, COLLECTION, visible=False), EditBones(edit)
        shapes = [
            edit_chain(bones, collection, chain, name) for chain, name in zip(chains, names, strict=True)
        ]
    clear_foreign(obj, names)
    clear_constraints(obj, names, chain_bones)
    with Templates() as made:
        for chain, name, shape, chain_rolls, side_before in zip(
            chains, names, shapes, kept, before, strict=True
        ):
            _pose(made, obj, _fresh(obj, chain), name, shape, chain_rolls, side_before)
    for index in old:
        legacy_layout.remove_roll_channels(obj, names[index])
    for index, (frames, poses) in (old | unturned).items():
        if index in unturned and side(chain_lower(names[index])) != before[index]:
            legacy_layout.turn_twist_keys(obj, chain_lower(names[index]))
        keyed = legacy_layout.key_rolls(context, obj, names[index], frames, poses)
        if moved is not None and keyed:
            moved.append(f"'{chain_lower(names[index])}': roll keys on {keyed} frame(s)")
    return names


def _fresh(obj, chain):
    """``chain`` again after a mode switch, which may free Python references to stored data."""
    path = getattr(chain, "path_from_id", None)
    return obj.path_resolve(path()) if path is not None else chain


def sync(obj, chain) -> None:
    """Bring a built network in step with the chain's target, pole, Head/Tail and End Rotation
    (no Edit Mode). Does nothing when the network's bones are missing (the chain's status says to
    run Update Mechanism), and for a chain on an earlier chain's bones (:func:`sharing`)."""
    names = chain_parts(chain)
    bones = obj.pose.bones
    if sharing(obj, chain) or any(bones.get(name) is None for name in names):
        return
    with Templates() as made:
        _sync(made, obj, chain, names)


def _sync(made: Templates, obj, chain, names: Parts, rebuild: bool = False) -> None:
    """:func:`sync` of a chain with a whole network of its own. An End Rotation constraint there is
    kept (with what the rigger set on it) unless ``rebuild``, which makes it to its spec."""
    bones = obj.pose.bones
    for which, name in spec.SOURCE.items():
        _source(bones[getattr(names, which)].constraints[name], chain, which)
    if bones.get(outputs.slot_bone(obj, chain, spec.CONTROLS.slot)) is not None:
        _controls_constraint(obj, chain)
    row = spec.END_ROTATION
    end = outputs.slot_bone(obj, chain, row.slot)
    for holder in outputs.holders(obj, chain, row):
        if holder != end:
            remove_constraint(bones[holder], row.name)
    if end:
        constraint = bones[end].constraints.get(row.name)
        if rebuild or constraint is None:
            remove_constraint(bones[end], row.name)
            constraint = made.template(row.kind, row.name, None)
        (source_name,) = row.sources
        _source(constraint, chain, source_name)
        constraint.mix_mode = "REPLACE"
        if constraint.id_data != obj:  # a scratch template: onto the bone, with its driver
            made.copy(bones[end], constraint)
            _influence(made, obj, end, row, chain, names)
    place(obj, chain)
