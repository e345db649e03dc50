# SPDX-License-Identifier: GPL-3.0-or-later
"""Bake Two-Bone IK: key the solved rotations over a frame range, then disable the chains."""

import time

import bpy
from bpy.props import BoolProperty, IntProperty

from ..animation.bake import FRAME_MAX, FRAME_MIN, BakeError, BakeJob, bake
from .common import ChainOperator

# How long one timer event of the interactive bake may work before the interface gets a turn.
SLICE_SECONDS = 0.05


class POSE_OT_two_bone_ik_bake(ChainOperator, bpy.types.Operator):
    """Key the chain bones' rotations over a frame range so the animation plays without the \
extension, then disable the chain. Esc cancels and changes nothing"""

    bl_idname = "pose.two_bone_ik_bake"
    bl_label = "Bake Two-Bone IK"
    bl_options = {"REGISTER", "UNDO"}

    # Blender's frame range bounds the sliders; a frame typed or passed beyond it is refused by the
    # bake (Scene.frame_set would clamp it and key the last frame's pose), never silently clamped.
    frame_start: IntProperty(
        name="Start Frame",
        description="First frame to bake; the scene's start frame when not set",
        soft_min=FRAME_MIN,
        soft_max=FRAME_MAX,
    )
    frame_end: IntProperty(
        name="End Frame",
        description="Last frame to bake; the scene's end frame when not set",
        soft_min=FRAME_MIN,
        soft_max=FRAME_MAX,
    )
    all_chains: BoolProperty(
        name="All Chains",
        description="Bake every enabled chain of the armature, not only the active one",
        default=False,
    )

    def _prepare(self, context):
        """(armature, chain names) to bake, with the frame range filled in; None after a report."""
        scene = context.scene
        if not self.properties.is_property_set("frame_start"):
            self.frame_start = scene.frame_start
        if not self.properties.is_property_set("frame_end"):
            self.frame_end = scene.frame_end
        obj, chain = self.armature_and_chain(context)
        if chain is None:
            return None
        names = [chain.name]
        if self.all_chains:
            names = [other.name for other in obj.two_bone_ik.chains if other.enabled] or names
        return obj, names

    def execute(self, context):
        prepared = self._prepare(context)
        if prepared is None:
            return {"CANCELLED"}
        obj, names = prepared
        window_manager = context.window_manager
        window_manager.progress_begin(0, self.frame_end - self.frame_start + 1)
        try:
            keys = bake(context, obj, names, self.frame_start, self.frame_end, window_manager.progress_update)
        except BakeError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        finally:
            window_manager.progress_end()
        self._report_done(names, keys)
        return {"FINISHED"}

    def invoke(self, context, event):
        prepared = self._prepare(context)
        if prepared is None:
            return {"CANCELLED"}
        obj, names = prepared
        try:
            self._job = BakeJob(context, obj, names, self.frame_start, self.frame_end)
        except BakeError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        window_manager = context.window_manager
        window_manager.progress_begin(0, len(self._job.frames))
        self._timer = window_manager.event_timer_add(0.001, window=context.window)
        window_manager.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC":
            self._job.cancel(context)
            self._end_modal(context)
            self.report({"WARNING"}, "Bake cancelled: nothing was keyed")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"RUNNING_MODAL"}  # the bake owns the interface until it ends
        started = time.perf_counter()
        try:
            while time.perf_counter() - started < SLICE_SECONDS:
                if self._job.step(context):
                    keys = self._job.finish(context)
                    self._end_modal(context)
                    self._report_done(self._job.chain_names, keys)
                    return {"FINISHED"}
        except Exception as error:  # a modal that raises would keep the interface captured
            self._job.cancel(context)
            self._end_modal(context)
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        context.window_manager.progress_update(self._job.done)
        return {"RUNNING_MODAL"}

    def _end_modal(self, context) -> None:
        window_manager = context.window_manager
        window_manager.event_timer_remove(self._timer)
        window_manager.progress_end()

    def _report_done(self, names, keys: int) -> None:
        chains = ", ".join(f"'{name}'" for name in names)
        self.report(
            {"INFO"},
            f"Baked {chains} over frames {self.frame_start}-{self.frame_end} ({keys} keys); "
            + ("chain disabled" if len(names) == 1 else "chains disabled"),
        )
