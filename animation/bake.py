# SPDX-License-Identifier: GPL-3.0-or-later
"""Bake chains to keyframes, so the animation plays without the extension.

A bake runs in two passes. The first steps through the frames, lets the driver solve each one and
collects the chain's result as channel values (visual.py: the FK pose blended with the solve by the
evaluated influence); the second writes them as rotation keys and disables the chains, so the
channels alone show the same pose. Keys are written only at the end because they would change the
FK pose of later frames (it is read from the very channels being keyed). Cancelling during the
first pass leaves the file as it was.
"""

from __future__ import annotations

import bpy
from mathutils import Euler, Matrix, Quaternion

from .. import compat
from ..chain import settings, sources
from ..chain.bones import ChainError, chain_bone_slots, checked_bones
from ..chain.chains import find_chain
from ..chain.status import applied
from . import visual

# Blender's frame range (MINAFRAME..MAXFRAME, -1048574..1048574): ``Scene.frame_set`` clamps to it,
# so a frame outside would be keyed with the pose of the nearest end.
_FRAME = bpy.types.Scene.bl_rna.properties["frame_current"]
FRAME_MIN, FRAME_MAX = _FRAME.hard_min, _FRAME.hard_max


class BakeError(Exception):
    """A bake that cannot start, or a chain that did not solve on a frame; the message says why."""


def rotation_channel(rotation_mode: str) -> tuple[str, int]:
    """(property name, number of channels) keyed for a pose bone with this ``rotation_mode``."""
    if rotation_mode == "QUATERNION":
        return "rotation_quaternion", 4
    if rotation_mode == "AXIS_ANGLE":
        return "rotation_axis_angle", 4
    return "rotation_euler", 3


def rotation_values(matrices, rotation_mode: str, previous=None) -> list[tuple[float, ...]]:
    """Continuous rotation-channel values for a sequence of ``matrix_basis``.

    Parameters
    ----------
    matrices : sequence of mathutils.Matrix
        One 4x4 ``matrix_basis`` per frame; location and scale are ignored.
    rotation_mode : str
        The pose bone's ``rotation_mode``.
    previous : sequence of float, optional
        The channel values just before the first frame, to continue from.

    Returns
    -------
    list of tuple of float
        Per frame, the channel values. Euler angles come from ``to_euler(order, previous)`` and
        each quaternion is kept in the previous one's hemisphere, so neighbouring keys never jump
        by a turn and interpolation never spins the bone the long way.
    """
    values = []
    last: Quaternion | Euler | None = None
    if previous is not None:
        if rotation_mode in ("QUATERNION", "AXIS_ANGLE"):
            last = (
                Quaternion(previous)
                if rotation_mode == "QUATERNION"
                else Quaternion(previous[1:], previous[0])
            )
        else:
            last = Euler(previous, rotation_mode)
    for matrix in matrices:
        rotation = matrix.decompose()[1]
        if rotation_mode in ("QUATERNION", "AXIS_ANGLE"):
            if last is not None and rotation.dot(last) < 0.0:
                rotation.negate()
            last = rotation
            if rotation_mode == "QUATERNION":
                values.append(tuple(rotation))
            else:
                axis, angle = rotation.to_axis_angle()
                values.append((angle, *axis))
        else:
            euler = (
                rotation.to_euler(rotation_mode, last)
                if last is not None
                else rotation.to_euler(rotation_mode)
            )
            last = euler
            values.append(tuple(euler))
    return values


def write_keys(obj, bone_name: str, frames, values) -> int:
    """Key the rotation channels of pose bone ``bone_name`` with ``values`` (one tuple per frame).

    Keys already in [min(frames), max(frames)] are replaced, keys outside stay as they were (re-baking
    part of a range keeps the rest). Returns the number of keys written.
    """
    pose_bone = obj.pose.bones[bone_name]
    name, count = rotation_channel(pose_bone.rotation_mode)
    data_path = pose_bone.path_from_id(name)
    fcurves = compat.action_fcurves(obj, create=True)
    first, last = min(frames), max(frames)
    for index in range(count):
        fcurve = compat.new_fcurve(fcurves, data_path, index, bone_name)
        points = fcurve.keyframe_points
        for point in reversed(points):
            if first <= point.co.x <= last:
                points.remove(point, fast=True)
        for frame, value in zip(frames, values, strict=True):
            points.insert(frame, value[index], options={"FAST"})
        fcurve.update()
    return count * len(frames)


def _previous_values(obj, bone_name: str, frame: float):
    """The bone's keyed rotation channels at ``frame`` (action time; for continuity), or None when
    not keyed."""
    fcurves = compat.action_fcurves(obj)
    if fcurves is None:
        return None
    pose_bone = obj.pose.bones[bone_name]
    name, count = rotation_channel(pose_bone.rotation_mode)
    data_path = pose_bone.path_from_id(name)
    curves = [fcurves.find(data_path, index=index) for index in range(count)]
    if any(fcurve is None or not len(fcurve.keyframe_points) for fcurve in curves):
        return None
    return [fcurve.evaluate(frame) for fcurve in curves]


def _tweaked_track(animation_data):
    """The NLA track holding the strip being tweaked, or None outside tweak mode."""
    if animation_data is None or not animation_data.use_tweak_mode:
        return None
    track = animation_data.nla_tracks.active
    if track is not None and any(strip.action == animation_data.action for strip in track.strips):
        return track
    return next(
        (
            track
            for track in animation_data.nla_tracks
            if any(s.action == animation_data.action for s in track.strips)
        ),
        None,
    )


def _check_blend(animation_data, frame_start: int, frame_end: int) -> None:
    """Refuse a bake whose keys would not play back the baked pose.

    Keys go into the action being edited. They reproduce the pose only when that action replaces
    the channels at full influence (or combines over nothing), in one place in time: in tweak mode,
    one strip using the action, played once, unscaled time curve aside, with no blend-in or -out,
    and no unmuted track above it playing during the range (it would override the keys after
    tweak mode).
    """
    if animation_data is None or not len(animation_data.nla_tracks):
        return  # no NLA: the action's values are the channels' values
    action = animation_data.action
    track = _tweaked_track(animation_data)
    if track is None:
        blend, influence = animation_data.action_blend_type, animation_data.action_influence
        others = sum(len(t.strips) for t in animation_data.nla_tracks if not t.mute)
        problem = "" if influence >= 1.0 else f"plays at influence {influence:.3g}"
    else:
        users = [strip for t in animation_data.nla_tracks for strip in t.strips if strip.action == action]
        strip = next(strip for strip in track.strips if strip.action == action)
        blend = strip.blend_type
        others = sum(len(t.strips) for t in animation_data.nla_tracks) - 1
        problem = ""
        if len(users) > 1:
            problem = f"is used by {len(users)} NLA strips (keys for one would change the others)"
        elif strip.repeat != 1.0:
            problem = f"repeats {strip.repeat:.3g} times in its strip (the repeats would share keys)"
        elif strip.use_animated_influence or strip.use_animated_time or strip.blend_in or strip.blend_out:
            problem = "plays with a varying influence or time in its strip"
        else:
            tracks = list(animation_data.nla_tracks)
            above = tracks[tracks.index(track) + 1 :]
            if any(
                not t.mute and s.frame_start <= frame_end and s.frame_end >= frame_start
                for t in above
                for s in t.strips
            ):
                problem = "is below an NLA track that plays during the range (it would override the keys)"
    if not problem and not (blend == "REPLACE" or (blend == "COMBINE" and not others)):
        problem = f"blends by {blend.title()} over NLA strips"
    if problem:
        raise BakeError(
            f"The action '{action.name if action else ''}' {problem}: keys cannot reproduce the pose "
            "there; bake into an action that replaces the channels at full influence"
        )


def check_bake(context, obj, chain_names, frame_start: int, frame_end: int) -> list[str]:
    """Refuse a bake that cannot be done, before anything changes.

    Parameters
    ----------
    context : bpy.types.Context
    obj : bpy.types.Object
        The armature object.
    chain_names : iterable of str
        The chains to bake.
    frame_start, frame_end : int
        The inclusive frame range; both must be in Blender's frame range
        (``FRAME_MIN``..``FRAME_MAX``).

    Returns
    -------
    list of str
        The names of the bones to key, each once, in chain order.

    Raises
    ------
    BakeError
        When the range is empty or outside Blender's frame range, the armature is not in the
        context's scene, the armature or its action is linked, the action blends over NLA strips
        in a way keys cannot reproduce (anything but Replace at full influence), a chain is
        missing, or a chain cannot be solved: no target, missing bones, or a target or pole the
        driver refuses (the armature itself without a bone, a missing bone, a cycle).
        The message is the chain's status.
    """
    for label, frame in (("start", frame_start), ("end", frame_end)):
        if not FRAME_MIN <= frame <= FRAME_MAX:
            raise BakeError(
                f"The {label} frame {frame} is outside Blender's frame range {FRAME_MIN} to {FRAME_MAX}"
            )
    if frame_end < frame_start:
        raise BakeError(f"The end frame {frame_end} is before the start frame {frame_start}")
    if obj.library is not None:
        raise BakeError(f"'{obj.name}' is linked from a library: make a library override first")
    if context.scene.objects.get(obj.name) != obj:  # frames set there would not evaluate it
        raise BakeError(f"'{obj.name}' is not in the scene '{context.scene.name}': bake it in its own scene")
    action = obj.animation_data.action if obj.animation_data else None
    if action is not None and action.library is not None:
        raise BakeError(f"The action '{action.name}' is linked from a library")
    _check_blend(obj.animation_data, frame_start, frame_end)
    chain_names = list(dict.fromkeys(chain_names))
    if not chain_names:
        raise BakeError("No chain to bake")
    bones = []
    for name in chain_names:
        chain = find_chain(obj, name)
        if chain is None:
            raise BakeError(f"No chain '{name}' on '{obj.name}'")
        if chain.target is None:
            raise BakeError(f"Chain '{name}' has no target")
        try:
            bones += [bone for _, bone in chain_bone_slots(obj, chain)]
            checked_bones(obj, chain)
            # The readouts' checks of the target and pole (the armature itself without a bone, a
            # missing bone, a cycle): a chain failing them would key its unsolved pose.
            sources.check_sources(chain)
            visual.check_channels(obj, chain)
        except ChainError as error:
            raise BakeError(f"Chain '{name}' cannot be baked: {error}") from None
        if _animated(obj, *settings.path(chain, "enabled")):
            raise BakeError(
                f"Chain '{name}' has keys or a driver on Enabled: the bake turns the chain off, "
                "which they would undo; remove them first"
            )
    return list(dict.fromkeys(bones))


def _animated(obj, owner, path: str) -> bool:
    """Whether ``owner``'s property ``path`` has an F-Curve in ``obj``'s actions, NLA strips or
    drivers."""
    full = owner.path_from_id(path)
    return any(fcurve.data_path == full for fcurves in compat.animation_fcurves(obj) for fcurve in fcurves)


class BakeJob:
    """One bake of some chains of one armature over a frame range, run a frame at a time.

    Holds names and plain values only (never Blender data), so it survives between the modal
    operator's timer events. Call :meth:`step` until it returns True, then :meth:`finish`; or
    :meth:`cancel` at any point before :meth:`finish`.

    Parameters
    ----------
    context : bpy.types.Context
    obj : bpy.types.Object
        The armature object.
    chain_names : iterable of str
        The chains to bake. Disabled ones are enabled for the bake (a re-bake). Their upper and
        lower bones are keyed, and the end bone too when End Rotation is Target.
    frame_start, frame_end : int
        The inclusive frame range.

    Raises
    ------
    BakeError
        From :func:`check_bake`, when the bake cannot start. :meth:`step` raises it too when a
        chain does not solve on a frame (its status is then a failure, not a warning).
    """

    def __init__(self, context, obj, chain_names, frame_start: int, frame_end: int) -> None:
        self.bone_names = check_bake(context, obj, chain_names, frame_start, frame_end)
        self.object_name = obj.name
        self.chain_names = list(dict.fromkeys(chain_names))
        self.frames = list(range(frame_start, frame_end + 1))
        # In NLA tweak mode the keys go in the tweaked strip's own time.
        animation = obj.animation_data
        tweaking = animation is not None and animation.use_tweak_mode
        self.key_frames = [
            animation.nla_tweak_strip_time_to_scene(frame, invert=True) if tweaking else float(frame)
            for frame in [frame_start - 1, *self.frames]
        ]
        self.samples: dict[str, list[Matrix]] = {name: [] for name in self.bone_names}
        scene = context.scene
        self.return_frame = (scene.frame_current, scene.frame_subframe)
        self.enabled_before = {name: find_chain(obj, name).enabled for name in self.chain_names}
        for name in self.chain_names:
            find_chain(obj, name).enabled = True

    @property
    def done(self) -> int:
        """How many frames have been collected."""
        return len(self.samples[self.bone_names[0]])

    def _object(self):
        obj = bpy.data.objects.get(self.object_name)
        if obj is None:
            raise BakeError(f"The armature '{self.object_name}' is gone")
        return obj

    def step(self, context) -> bool:
        """Solve the next frame and collect its pose. Returns True when every frame is collected.

        Raises BakeError, naming the chain, the frame and its status, when a chain did not solve
        on that frame (its pose would be the unsolved one): call :meth:`cancel` then.
        """
        if self.done < len(self.frames):
            frame = self.frames[self.done]
            context.scene.frame_set(frame)
            context.view_layer.update()  # as playback shows it: chains hanging from chains settle
            obj = self._object()
            for chain_name in self.chain_names:
                chain = find_chain(obj, chain_name)
                if chain is None:
                    raise BakeError(f"The chain '{chain_name}' is gone")
                if not applied(chain.state):
                    raise BakeError(f"Chain '{chain_name}' is not applied at frame {frame}: {chain.status}")
            depsgraph = context.evaluated_depsgraph_get()
            for chain_name in self.chain_names:
                for name, basis in visual.result_bases(obj, find_chain(obj, chain_name), depsgraph):
                    self.samples[name].append(basis)
        return self.done >= len(self.frames)

    def finish(self, context) -> int:
        """Write the collected poses as keys, disable the baked chains, return to the frame the
        bake started on. Returns the number of keys written."""
        obj = self._object()
        keys = 0
        for name in self.bone_names:
            mode = obj.pose.bones[name].rotation_mode
            previous = _previous_values(obj, name, self.key_frames[0])
            values = rotation_values(self.samples[name], mode, previous)
            keys += write_keys(obj, name, self.key_frames[1:], values)
        for name in self.chain_names:
            find_chain(obj, name).enabled = False
        self._return(context)
        return keys

    def cancel(self, context) -> None:
        """Stop without writing anything: chains back as they were, back to the starting frame."""
        obj = bpy.data.objects.get(self.object_name)
        if obj is not None:
            for name, enabled in self.enabled_before.items():
                chain = find_chain(obj, name)
                if chain is not None:
                    chain.enabled = enabled
        self._return(context)

    def _return(self, context) -> None:
        frame, subframe = self.return_frame
        context.scene.frame_set(frame, subframe=subframe)
        context.view_layer.update()


def bake(context, obj, chain_names, frame_start: int, frame_end: int, progress=None) -> int:
    """Bake ``chain_names`` of ``obj`` over [frame_start, frame_end] in one go; see :class:`BakeJob`.

    ``progress``, when given, is called with the number of frames done after each frame.
    Returns the number of keys written. Raises BakeError when the bake cannot start.
    """
    job = BakeJob(context, obj, chain_names, frame_start, frame_end)
    try:
        while not job.step(context):
            if progress is not None:
                progress(job.done)
    except BaseException:
        job.cancel(context)
        raise
    return job.finish(context)
