# SPDX-License-Identifier: GPL-3.0-or-later
"""Viewport overlay: a line from each chain's root to its target and one from its joint to its pole.

Interactive sessions only. Shaders are built lazily inside the draw callback, because creating any
``gpu`` shader raises SystemError in background mode, and only shader names valid from 4.2 to 5.2
are used. The draw handler is there while the Overlay toggle is on (added once, removed once):
turned off, nothing of it runs per redraw.
"""

from __future__ import annotations

from typing import NamedTuple

import bpy
import gpu
from bpy.props import BoolProperty
from gpu_extras.batch import batch_for_shader
from mathutils import Vector

from ..chain.glance import glance
from ..compat import WIDE_LINE_SHADER

# Line colours (linear RGBA) and widths in pixels.
REACH_COLOR = (0.25, 0.75, 1.0, 0.9)
OUT_OF_REACH_COLOR = (1.0, 0.3, 0.15, 1.0)
POLE_COLOR = (0.9, 0.9, 0.9, 0.6)
REACH_WIDTH = 2.0
POLE_WIDTH = 1.0

_handle = None
_shaders: dict = {}


class OverlayLine(NamedTuple):
    """One segment to draw: world-space ends, colour and width in pixels."""

    start: Vector
    end: Vector
    color: tuple[float, float, float, float]
    width: float


def overlay_lines(context) -> list[OverlayLine]:
    """The overlay's segments for every enabled chain of every visible armature (read-only).

    Root to target when the end is on it; root to where the end stops, in the warning colour,
    when it is not. Joint to pole when there is a pole. Drawn from the evaluated bones and the
    chain's sources alone (chain.glance.glance), never a status: a chain with nothing to
    show (disabled, Rest Position, no target, or one that cannot be read) draws nothing.
    """
    depsgraph = context.view_layer.depsgraph
    lines = []
    for obj in context.view_layer.objects:
        if obj.type != "ARMATURE" or not len(obj.two_bone_ik.chains) or not obj.visible_get():
            continue
        obj_eval = obj.evaluated_get(depsgraph)
        for chain in obj.two_bone_ik.chains:
            seen = glance(chain, obj_eval) if chain.enabled else None
            if seen is None:
                continue
            if seen.on_target:
                lines.append(OverlayLine(seen.root, seen.target, REACH_COLOR, REACH_WIDTH))
            else:
                lines.append(OverlayLine(seen.root, seen.end, OUT_OF_REACH_COLOR, REACH_WIDTH))
            if seen.pole is not None:
                lines.append(OverlayLine(seen.joint, seen.pole, POLE_COLOR, POLE_WIDTH))
    return lines


def _shader():
    # Built on first draw, never at import or register (background mode has no GPU shaders).
    if "line" not in _shaders:
        _shaders["line"] = gpu.shader.from_builtin(WIDE_LINE_SHADER)
    return _shaders["line"]


def _draw() -> None:
    context = bpy.context
    if not getattr(context.window_manager, "two_bone_ik_show_overlay", False):
        return
    lines = overlay_lines(context)
    if not lines:
        return
    shader = _shader()
    region = context.region
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_test_set("NONE")
    shader.bind()
    shader.uniform_float("viewportSize", (region.width, region.height))
    # One batch per colour and width (three at most), not one per line: each batch costs a GPU
    # upload and a draw call.
    groups: dict[tuple, list[Vector]] = {}
    for line in lines:
        groups.setdefault((line.color, line.width), []).extend((line.start, line.end))
    for (color, width), points in groups.items():
        shader.uniform_float("lineWidth", width)
        shader.uniform_float("color", color)
        # A Vector is a sequence of floats, but fake-bpy-module does not declare it a Sequence.
        batch_for_shader(shader, "LINES", {"pos": points}).draw(shader)  # type: ignore[dict-item]
    gpu.state.blend_set("NONE")


def add_draw_handler() -> None:
    """Add the overlay's draw callback to the 3D Viewport, once."""
    global _handle
    if _handle is None:
        _handle = bpy.types.SpaceView3D.draw_handler_add(_draw, (), "WINDOW", "POST_VIEW")


def remove_draw_handler() -> None:
    """Remove the draw callback if it is there (a second ``draw_handler_remove`` would raise)."""
    global _handle
    if _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, "WINDOW")
        _handle = None
    _shaders.clear()


def _toggled(self, context) -> None:
    # Off, the callback is removed: nothing of ours runs per redraw.
    if not bpy.app.background:
        if self.two_bone_ik_show_overlay:
            add_draw_handler()
        else:
            remove_draw_handler()
    for window in context.window_manager.windows:
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


def register() -> None:
    bpy.types.WindowManager.two_bone_ik_show_overlay = BoolProperty(
        name="Overlay",
        description="Draw a line from each chain's root to its target (to where the tip stops when out of "
        "reach) and from its joint to its pole in the 3D Viewport",
        default=True,
        update=_toggled,
    )
    window_manager = getattr(bpy.context, "window_manager", None)
    if not bpy.app.background and getattr(window_manager, "two_bone_ik_show_overlay", True):
        add_draw_handler()


def unregister() -> None:
    remove_draw_handler()
    del bpy.types.WindowManager.two_bone_ik_show_overlay
