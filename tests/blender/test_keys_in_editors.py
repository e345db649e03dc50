# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain in the animator's world: its settings' and rolls' keys where the animation editors
list them (the lower bone's properties), and files of the network's earlier layout, whose keys sat
on hidden network bones, playing as before and moved by Update Mechanism."""

from __future__ import annotations

import json
import pathlib
import shutil

import bpy
from blender_rig import package, update_mechanism
from mathutils import Vector

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
TOLERANCE = 1e-5  # x the chain's length


def _open_copy(tmp_path, stem: str) -> dict:
    recorded = json.loads((DATA / f"{stem}.json").read_text())
    path = tmp_path / f"{stem}.blend"
    shutil.copy(DATA / f"{stem}.blend", path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    return recorded


def _miss(obj, wanted: dict) -> float:
    """The largest distance of a non-network bone's evaluated world head or tail from ``wanted``."""
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    world = evaluated.matrix_world
    worst = 0.0
    for name, points in wanted.items():
        bone = evaluated.pose.bones[name]
        worst = max(
            worst,
            (world @ bone.head - Vector(points["head"])).length,
            (world @ bone.tail - Vector(points["tail"])).length,
        )
    return worst


def _network_paths(action) -> set[str]:
    return {f.data_path for f in _fcurves(action) if f.data_path.startswith('pose.bones["MCH-IK-')}


def _fcurves(action) -> list:
    if hasattr(action, "layers") and len(action.layers):
        return [
            f
            for layer in action.layers
            for strip in layer.strips
            for bag in strip.channelbags
            for f in bag.fcurves
        ]
    return list(action.fcurves)


def test_a_file_of_the_earlier_layout_plays_as_before_and_update_mechanism_moves_its_keys(
    scene, tmp_path, capfd
):
    """A file saved with the network's earlier layout (settings keyed on the hidden root bone, rolls
    keyed by Snap on the solved bones' channels, a second action with settings keys) plays every
    frame as recorded. Update Mechanism says what it moved and leaves no key on the network: the
    settings' F-Curves move to the lower bone in both actions (the same curves), the rolls get keys
    on the lower bone's properties, and every keyed frame plays as recorded. (Between keys the rolls
    interpolate as angles, not as the old quaternions: 0.5 mm off on this leg, measured.)"""
    recorded = _open_copy(tmp_path, "two_bone_ik_root_settings")
    obj, scene = bpy.data.objects["Rig"], bpy.context.scene
    tolerance = TOLERANCE * recorded["chain_length"]
    chain = obj.two_bone_ik.chains["shin"]
    assert package().network.layout.legacy(obj, chain)
    for frame, wanted in recorded["frames"].items():
        scene.frame_set(int(frame))
        assert _miss(obj, wanted) <= tolerance, frame
    scene.frame_set(1)
    assert chain.state == "OK", chain.status
    assert _network_paths(bpy.data.actions["Walk"]) == set(recorded["walk_network_paths"])
    capfd.readouterr()
    update_mechanism(obj)
    out = capfd.readouterr().out
    assert "Moved keys of a network of the earlier layout to the lower bone" in out, out
    chain = obj.two_bone_ik.chains["shin"]
    assert not package().network.layout.legacy(obj, chain)
    walk, run = bpy.data.actions["Walk"], bpy.data.actions["Run"]
    assert _network_paths(walk) == set() and _network_paths(run) == set()
    names = ("Influence", "Twist", "Softness", "Enabled", "Upper Roll", "Lower Roll")
    assert {f'pose.bones["shin"]["IK {name}"]' for name in names} <= {f.data_path for f in _fcurves(walk)}
    assert {f'pose.bones["shin"]["IK {name}"]' for name in ("Influence", "Twist")} <= {
        f.data_path for f in _fcurves(run)
    }
    misses = {}
    for frame, wanted in recorded["frames"].items():
        scene.frame_set(int(frame))
        misses[int(frame)] = _miss(obj, wanted)
    for frame in recorded["keyed_frames"]:
        assert misses[frame] <= tolerance, (frame, misses)
