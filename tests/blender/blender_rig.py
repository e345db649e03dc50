# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers for in-Blender tests: enable the extension, build rigs and empties, read world positions."""

from __future__ import annotations

import importlib
import os
import pathlib
import tempfile

import addon_utils
import bpy
from mathutils import Vector

REPO_NAME = "two_bone_ik_dev"
MODULE = f"bl_ext.{REPO_NAME}.two_bone_ik"


def enable_extension(repo: pathlib.Path) -> str:
    """Enable the checkout as extension ``bl_ext.two_bone_ik_dev.two_bone_ik``; returns the module name.

    A local extension repository points at a temp folder holding a link named ``two_bone_ik`` to the
    checkout (the module name comes from the folder name).
    """
    if MODULE not in {addon.module for addon in bpy.context.preferences.addons}:
        folder = pathlib.Path(tempfile.mkdtemp(prefix="two_bone_ik_repo_"))
        os.symlink(repo, folder / "two_bone_ik")
        repos = bpy.context.preferences.extensions.repos
        if repos.get(REPO_NAME) is None:
            repos.new(name=REPO_NAME, module=REPO_NAME, custom_directory=str(folder), source="USER")
        module = addon_utils.enable(MODULE, default_set=True, handle_error=None)
        if module is None:
            raise RuntimeError(f"could not enable {MODULE}: see the output above")
    return MODULE


def package():
    """The enabled extension's top-level module (for solver and driver access in tests)."""
    return importlib.import_module(MODULE)


def make_empty(name: str, location) -> bpy.types.Object:
    obj = bpy.data.objects.new(name, None)
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
    return obj


def make_leg(
    name: str = "Leg",
    thigh=((0, 0, 1), (0, 0.05, 0.5)),
    shin=((0, 0.05, 0.5), (0, 0, 0)),
    connected: bool = True,
    roll: float = 0.0,
) -> bpy.types.Object:
    """An armature object with bones ``thigh`` and ``shin`` (armature space, metres), active, object mode."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode="EDIT")
        upper = data.edit_bones.new("thigh")
        upper.head, upper.tail = thigh
        upper.roll = roll
        lower = data.edit_bones.new("shin")
        lower.head, lower.tail = shin
        lower.roll = roll
        lower.parent = upper
        lower.use_connect = connected
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.update()
    return obj


def add_chain(obj, target, pole, upper="thigh", lower="shin"):
    """Add a chain straight to the data (not via the operator)."""
    chain = obj.two_bone_ik.chains.add()
    chain.name = lower
    chain.upper_bone, chain.lower_bone = upper, lower
    chain.target, chain.pole = target, pole
    return chain


def world_tail(obj, bone: str) -> Vector:
    """Evaluated world-space tail of a pose bone."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    return evaluated.matrix_world @ evaluated.pose.bones[bone].tail


def world_head(obj, bone: str) -> Vector:
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    return evaluated.matrix_world @ evaluated.pose.bones[bone].head


def assert_close(actual, expected, tolerance: float) -> None:
    """Assert two 3-vectors are within ``tolerance`` (Euclidean)."""
    distance = (Vector(actual) - Vector(expected)).length
    assert distance <= tolerance, f"{tuple(actual)} != {tuple(expected)} (off by {distance:.3g} > {tolerance:.3g})"
