# SPDX-License-Identifier: GPL-3.0-or-later
"""IK/FK snapping: move the target and pole onto the FK pose, or make the solved pose the FK pose."""

from __future__ import annotations

import math

from mathutils import Matrix, Vector

from ..chain import pose, settings, sources
from ..chain.bones import ChainError, checked_bones, fk_bases
from ..chain.controls import pole_point
from ..chain.pose import current_pole_side, pose_matrices
from ..chain.status import REST, applied
from ..network import layout, naming, rolls
from ..network.layout import SOLVER_TOLERANCE
from ..solver import solve_two_bone_ik
from . import visual


def controlled(chain, which: str):
    """What moves for the chain's ``which`` ("target" or "pole"): its pose bone when it names one,
    else its object; None when the chain has no such source.

    Raises
    ------
    ChainError
        As :func:`chain.sources.source_of` (a missing bone: the armature object itself is never taken in
        its place).
    """
    source, bone = sources.source_of(chain, which)
    return bone if bone is not None else source


def check_sources(context, obj, chain) -> None:
    """Refuse to snap a chain whose target or pole cannot be moved onto its FK pose.

    The readouts' checks (:func:`chain.sources.check_sources`) refuse a target or pole that is the
    chain's armature without a bone, a missing bone, or anything that moves with the chain's bones
    (a cycle); moving any of those would move the rig or the chain itself. A source with a zero,
    flat or invalid scale (or on an armature with one) is refused too: it cannot be placed.

    Raises
    ------
    ChainError
        With the chain's status: no target, or a target or pole that cannot be snapped.
    """
    if not pose.invertible(obj.matrix_world):
        raise ChainError(f"Armature '{obj.name}' has zero or invalid scale: nothing to solve")
    sources.check_sources(chain)
    for which in ("target", "pole"):
        if getattr(chain, which) is None:
            continue
        moved = controlled(chain, which)
        source = getattr(chain, which)
        if moved is not source and not pose.invertible(source.matrix_world):
            raise ChainError(
                f"Armature '{source.name}' has zero or invalid scale: its {which} bone cannot be placed"
            )
        if moved is not source and not pose.invertible(moved.matrix.to_3x3()):
            raise ChainError(
                f"The {which} bone '{moved.name}' has a zero, flat or invalid scale: it cannot be placed; "
                "give it a scale on every axis"
            )
        if moved is source and not pose.invertible(source.matrix_world):
            raise ChainError(
                f"The {which} '{source.name}' has a zero, flat or invalid scale: it cannot be placed; "
                "give it a scale on every axis"
            )


# Placing a control is checked against where Blender evaluates it; a few corrections absorb
# constraints whose effect depends on the control's own transform.
PLACE_ATTEMPTS = 6
# Metres: the place must be this close, or a few float32 steps at the control's distance from
# the origin, whichever is larger.
PLACE_TOLERANCE = 1e-5
ROTATION_TOLERANCE = 1e-4  # radians, for End Rotation Target
# A position Jacobian with a determinant this small: a constraint pins the control's position.
PINNED = 1e-6
JACOBIAN_STEP = 1e-2  # metres


def _evaluated(context, source, control, head_tail: float) -> Matrix:
    """World matrix Blender gives the control now, parents and constraints included; a bone's
    moved along it to the point ``head_tail`` picks (0 head, 1 tail), the point the chain reads."""
    evaluated = source.evaluated_get(context.evaluated_depsgraph_get())
    if control is source:
        return evaluated.matrix_world.copy()
    along = Matrix.Translation((0.0, head_tail * control.bone.length, 0.0))
    return evaluated.matrix_world @ evaluated.pose.bones[control.name].matrix @ along


def _channels_world(source, control, basis: Matrix) -> Matrix:
    """World matrix of the control's channels ``basis`` under its parents, without its constraints."""
    bone = None if control is source else control
    return source.convert_space(pose_bone=bone, matrix=basis, from_space="LOCAL", to_space="WORLD")


def _basis_for(source, control, world: Matrix) -> Matrix:
    bone = None if control is source else control
    return source.convert_space(pose_bone=bone, matrix=world, from_space="WORLD", to_space="LOCAL")


def _rotation_path(control) -> str:
    mode = control.rotation_mode
    return {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(
        mode, "rotation_euler"
    )


def _channels(control) -> tuple:
    """The control's location, rotation (in its own mode) and scale channel values."""
    return tuple(tuple(getattr(control, path)) for path in ("location", _rotation_path(control), "scale"))


def _set_channels(control, channels) -> None:
    for path, values in zip(("location", _rotation_path(control), "scale"), channels, strict=True):
        setattr(control, path, values)


def set_basis(control, basis: Matrix) -> None:
    """Set ``control``'s (object or pose bone) channels to ``basis``, the rotation continuous with
    the one it had (the nearest Euler angles, the same quaternion hemisphere), so a key on it does
    not spin the long way from the previous one."""
    mode = control.rotation_mode
    previous_euler = control.rotation_euler.copy() if mode not in ("QUATERNION", "AXIS_ANGLE") else None
    previous_quaternion = control.rotation_quaternion.copy()
    control.matrix_basis = basis
    if previous_euler is not None:
        control.rotation_euler = basis.to_euler(mode, previous_euler)
    elif mode == "QUATERNION" and control.rotation_quaternion.dot(previous_quaternion) < 0.0:
        control.rotation_quaternion = -control.rotation_quaternion


def _locked(control, before: Matrix, after: Matrix) -> str:
    """The first locked channel the change from ``before`` to ``after`` would move, or ''."""
    old_location, old_rotation, old_scale = before.decompose()
    location, rotation, scale = after.decompose()
    for axis, name in enumerate("XYZ"):
        if control.lock_location[axis] and abs(location[axis] - old_location[axis]) > PLACE_TOLERANCE:
            return f"location {name}"
        if control.lock_scale[axis] and abs(scale[axis] - old_scale[axis]) > PLACE_TOLERANCE:
            return f"scale {name}"
    if any(control.lock_rotation) and old_rotation.rotation_difference(rotation).angle > ROTATION_TOLERANCE:
        return "rotation"
    return ""


def _off(current: Matrix, wanted: Matrix) -> float:
    return (current.translation - wanted.translation).length


def _placed(current: Matrix, wanted: Matrix, turn: bool) -> bool:
    # float32 keeps about 7 digits: a few steps of it at the control's distance from the origin.
    if _off(current, wanted) > max(PLACE_TOLERANCE, 5e-7 * wanted.translation.length):
        return False
    return (
        not turn
        or current.to_quaternion().rotation_difference(wanted.to_quaternion()).angle <= ROTATION_TOLERANCE
    )


class _Control:
    """A target or pole being placed: moves its channels, reads where Blender evaluates it."""

    def __init__(self, context, chain, which: str) -> None:
        self.context, self.which = context, which
        self.source, self.control = getattr(chain, which), controlled(chain, which)
        self.head_tail = getattr(chain, f"{which}_head_tail")
        self.saved = _channels(self.control)
        self.before = self.control.matrix_basis.copy()

    def evaluated(self) -> Matrix:
        return _evaluated(self.context, self.source, self.control, self.head_tail)

    def own(self) -> Matrix:
        return _channels_world(self.source, self.control, self.control.matrix_basis)

    def move(self, own_world: Matrix, probe: bool = False) -> None:
        """Give the channels this world matrix (before constraints) and evaluate; a ``probe`` (a
        step to measure, undone next) may move locked channels."""
        basis = _basis_for(self.source, self.control, own_world)
        locked = "" if probe else _locked(self.control, self.before, basis)
        if locked:
            self.restore()
            raise ChainError(
                f"The {self.which} '{self.control.name}' has its {locked} locked: nothing was snapped"
            )
        set_basis(self.control, basis)
        self.context.view_layer.update()

    def restore(self) -> None:
        _set_channels(self.control, self.saved)  # the very values, not a rebuilt rotation
        self.context.view_layer.update()

    def jacobian(self) -> Matrix | None:
        """How the evaluated position moves with the channels' world position (3x3), by small
        steps along each axis; None when a constraint pins the position."""
        own, start = self.own(), self.evaluated().translation
        columns = []
        for axis in range(3):
            stepped = own.copy()
            stepped.translation[axis] += JACOBIAN_STEP
            self.move(stepped, probe=True)
            columns.append((self.evaluated().translation - start) / JACOBIAN_STEP)
        self.move(own, probe=True)
        jacobian = Matrix([(column.x, column.y, column.z) for column in columns]).transposed()
        return jacobian if abs(jacobian.determinant()) > PINNED else None


def _place(context, chain, which: str, point, rotation: Matrix | None = None) -> None:
    """Put the chain's target or pole (object origin, or its bone's Head/Tail point) where Blender
    evaluates it at
    world ``point``, turned to the world 3x3 ``rotation`` when given (else only its position
    changes: its rotation, scale and any shear from its parents stay).

    Parents and constraints on the control are accounted for: first by undoing what they do to
    the channels' world matrix as a left factor (exact for parenting, Child Of, Armature), then by
    Newton steps on the position (constraints that depend on the control's own place, partial
    influence, Damped Track), each checked by evaluating.

    Raises
    ------
    ChainError
        When a locked channel would have to move, or the evaluated place cannot be reached (a
        constraint pins it, a connected bone): the control is left as it was.
    """
    placing = _Control(context, chain, which)
    current = placing.evaluated()
    wanted = current.copy()
    if rotation is not None:
        _, _, scale = current.decompose()
        wanted = Matrix.LocRotScale(point, rotation.to_quaternion(), scale)
    wanted.translation = point
    turn = rotation is not None
    if not _placed(current, wanted, turn):
        placing.move((current @ placing.own().inverted()).inverted() @ wanted)
        current = placing.evaluated()
    for _ in range(PLACE_ATTEMPTS):
        if _placed(current, wanted, turn):
            return
        jacobian = placing.jacobian()
        if jacobian is None:
            break
        own = placing.own()
        own.translation = own.translation + jacobian.inverted() @ (point - current.translation)
        placing.move(own)
        current = placing.evaluated()
    if not _placed(current, wanted, turn):
        placing.restore()
        name = placing.control.name
        if _placed(current, wanted, False):
            raise ChainError(
                f"The {which} '{name}' cannot be turned to the end bone's FK rotation: a constraint holds "
                "its rotation, or its parents' uneven scale shears it; nothing was snapped"
            )
        raise ChainError(
            f"The {which} '{name}' cannot be put on the FK pose ({_off(current, wanted):.3g} off): a "
            "constraint holds it there, or it is a connected bone; nothing was snapped"
        )


def _undo_settings(chain, root: Vector, joint: Vector, end: Vector, pole: Vector) -> tuple[Vector, Vector]:
    """(target, pole), armature space, that make the chain's solve with its twist and softness give
    back the FK pose (root, joint, end): the pole turned back by the twist about root -> end, and
    with softness the target moved out along root -> end to where the soft end lands on the FK tip
    (by bisection on the solver's own result: the soft curve never reaches full extension, so a
    straight FK leg gets a target far enough out for the end to be on the tip to float precision)."""
    axis = end - root
    wanted = axis.length
    if not wanted > 0.0:
        return end, pole
    twist = chain.twist * layout.built_side(chain.id_data, naming.chain_parts(chain))
    if twist:  # stored times the chain's side (docs/contract.md, D9)
        pole = root + pose.turn(axis, -twist) @ (pole - root)
    if not chain.softness:
        return end, pole
    upper, lower = (joint - root).length, (end - joint).length

    def reached(distance: float) -> float:
        target = root + axis * (distance / wanted)
        result = solve_two_bone_ik(
            root, target, pole, upper, lower, tolerance=SOLVER_TOLERANCE, softness=chain.softness
        )
        return math.dist(result.end, (root.x, root.y, root.z))

    near, far = wanted, wanted + 60.0 * (upper + lower)
    for _ in range(80):
        middle = 0.5 * (near + far)
        near, far = (middle, far) if reached(middle) < wanted else (near, middle)
    return root + axis * (far / wanted), pole


def snap_ik_to_fk(context, obj, chain) -> None:
    """Move the chain's target to the FK tip and its pole into the FK bend plane.

    After this, solving the chain reproduces its FK pose (the bones' channels), so turning the
    chain on or its influence up changes nothing: the joints through target and pole, the bones'
    orientations about their own axes through the chain's rolls (network/rolls.py). With End
    Rotation set to Target, the target also turns to the end bone's FK rotation.

    Target and pole land where Blender evaluates them, through their parents and constraints (a
    Child Of to a prop, an Armature constraint). Nothing moves when the chain cannot be snapped
    (:func:`check_sources`, a locked channel, a constraint that pins a control).

    Raises
    ------
    ChainError
        With the chain's status when its bones are missing, its network needs Update Mechanism,
        the armature shows its Rest Position, it has no target, or its target or pole cannot be
        moved onto the FK pose (:func:`check_sources`).
    """
    # The rolls are measured on the network, and Rest Position shows neither the FK pose nor
    # the controls where they are placed: refused as the status says (docs/how-it-works.md, "What
    # the operators refuse").
    upper_bone, lower_bone = checked_bones(obj, chain)
    if obj.data.pose_position == "REST":
        raise ChainError(REST.format(obj.name))
    context.view_layer.update()  # the parent's pose matrix must be current
    check_sources(context, obj, chain)
    # Snap reads the FK pose from the channels: a constraint before the chain's sets it instead.
    visual.check_channels(obj, chain, "or use the rig's own IK/FK snapping")
    bases = fk_bases(obj, chain)
    by_slot = {slot: basis for slot, _, basis in bases}
    matrices = pose_matrices(obj, upper_bone.name, lower_bone.name, by_slot["upper"], by_slot["lower"])
    root, joint, end, side = current_pole_side(obj, upper_bone.name, lower_bone.name, matrices)
    world = obj.matrix_world
    rotation = None
    for slot, name, basis in bases:
        if slot == "end":
            end_matrix = pose.to_pose(obj.data.bones[name], basis, matrices[1])
            rotation = pose.rotation_of(world.to_3x3() @ end_matrix.to_3x3())
    length = (joint - root).length + (end - joint).length
    pole = pole_point(joint, side, length)
    if not math.isfinite(end.length + pole.length):  # NaN or inf in either
        raise ChainError("The FK pose is at a non-finite position: nothing to snap to")
    settings.checked(chain)
    tip, pole = _undo_settings(chain, root, joint, end, pole)
    target = controlled(chain, "target")
    target_before = _channels(target)
    _place(context, chain, "target", world @ tip, rotation)
    if chain.pole is not None:
        try:
            _place(context, chain, "pole", world @ pole)
        except ChainError:
            _set_channels(target, target_before)
            context.view_layer.update()
            raise
    # The solve now has the FK joints; the rolls give the bones their FK orientations too.
    rolls.match(context, obj, naming.parts(upper_bone.name, lower_bone.name), *matrices)


def snap_fk_to_ik(context, obj, chain) -> None:
    """Make the chain's full solve (influence 1) its FK pose: the bones' channels hold the solve,
    so turning the chain off or its influence down changes nothing.

    Raises
    ------
    ChainError
        With the chain's status when it cannot be solved now.
    """
    if chain.target is None:
        raise ChainError("Set a target object")
    # The network's solved bones hold the full solve whatever the influence: a disabled chain is
    # snapped too, from this frame's inputs.
    context.view_layer.update()
    depsgraph = context.evaluated_depsgraph_get()
    if not applied(chain.state):
        raise ChainError(chain.status)
    names = naming.chain_parts(chain)
    evaluated = obj.evaluated_get(depsgraph).pose.bones
    solved = evaluated[names.upper].matrix.copy(), evaluated[names.lower].matrix.copy()
    for name, basis in visual.result_bases(obj, chain, depsgraph, influence=1.0):
        set_basis(obj.pose.bones[name], basis)
    if layout.reads_own_turn(obj, names):
        # The lower bone's rotation is the solve's input too (its own turn, docs/contract.md D11):
        # the rolls keep the solve where it was.
        rolls.match(context, obj, names, *solved)
