# SPDX-License-Identifier: GPL-3.0-or-later
"""Readouts that depend only on a rig's relations, kept from one draw of the interface to the next.

The panel works a chain's status out on every redraw, and most of that cost is one question: does
the target (or pole) move with the chain's own bones? Its answer depends only on what Blender's
dependency graph is built from (parenting, constraint targets, driver variables, Armature
modifiers), so it is kept until Blender rebuilds the graph's relations, which it does for every
such edit (docs/design.md, "The interface's cost").

Only draws ask for kept answers (:func:`drawing`); scripts, operators and the command line always
work everything out. Nothing runs per update unless an answer is kept: the handlers that forget
the answers are added when the first is kept and remove themselves when they forget, so a Blender
that only plays a file, or renders it, runs none of this.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextlib import contextmanager
from typing import TypeVar

import bpy
from bpy.app.handlers import persistent

T = TypeVar("T")

_kept: dict[Hashable, object] = {}
_this_draw: dict[Hashable, object] = {}
_drawing = 0


@contextmanager
def drawing():
    """Within it, :func:`relations_scoped` and :func:`per_draw` keep their answers (the
    interface's draw code)."""
    global _drawing
    _drawing += 1
    try:
        yield
    finally:
        _drawing -= 1
        if not _drawing:
            _this_draw.clear()


def per_draw(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, kept under ``key`` until the draw ends (nothing changes during a draw).
    Outside :func:`drawing`, always ``compute()``."""
    if not _drawing:
        return compute()
    if key not in _this_draw:
        _this_draw[key] = compute()
    return _this_draw[key]  # type: ignore[return-value]


def relations_scoped(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, kept under ``key`` while drawing until the rig's relations change, an undo or
    redo, or a file load. ``key`` names every input that is not a relation (IDs by session_uid,
    bone names). Outside :func:`drawing`, always ``compute()``."""
    if not _drawing:
        return compute()
    if key in _kept:
        return _kept[key]  # type: ignore[return-value]
    value = compute()
    _kept[key] = value
    _watch()
    return value


@persistent
def two_bone_ik_forget_relations(scene=None, depsgraph=None) -> None:
    """Forget every kept answer after a relations rebuild (Blender updates the scene with it),
    an undo, a redo or a file load; then stop listening until an answer is kept again."""
    try:
        if isinstance(depsgraph, bpy.types.Depsgraph) and not depsgraph.id_type_updated("SCENE"):
            return  # a pose, a frame or a setting changed: the relations are the same
        _kept.clear()
        # Not removed here: Blender is walking the handler list, and would skip the next handler.
        if not bpy.app.timers.is_registered(_unwatch):
            bpy.app.timers.register(_unwatch, first_interval=0.0)
    except Exception as error:  # never let an exception escape a handler
        print(f"Two-Bone IK: {error!r}")


def _lists() -> tuple[list, ...]:
    handlers = bpy.app.handlers
    return (handlers.depsgraph_update_post, handlers.undo_post, handlers.redo_post, handlers.load_post)


def _watch() -> None:
    for handlers in _lists():
        if two_bone_ik_forget_relations not in handlers:
            handlers.append(two_bone_ik_forget_relations)


def _unwatch() -> None:
    """Remove the handlers unless an answer was kept again since they forgot."""
    if _kept:
        return
    for handlers in _lists():
        # By name too: a reloaded module's old function object is still ours.
        for existing in [f for f in handlers if getattr(f, "__name__", "") == "two_bone_ik_forget_relations"]:
            handlers.remove(existing)


def forget() -> None:
    """Drop every kept answer and the handlers that watch them (unregister, tests)."""
    _kept.clear()
    _unwatch()
    if bpy.app.timers.is_registered(_unwatch):
        bpy.app.timers.unregister(_unwatch)
