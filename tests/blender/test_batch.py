# SPDX-License-Identifier: GPL-3.0-or-later
"""The batched path (driver/batch.py) writes what the exact per-chain path writes.

Random rigs with many chains: posed parents, rolls, disconnected bones with FK location, no pole,
poles on the line, targets out of reach and too close, a rotated and scaled armature. Chains the
batch cannot do exactly (inherit flags off, FK scale, a non-uniformly scaled parent) go to the exact
path on that update; the result is the same either way.
"""

import contextlib
import random

import bpy
import pytest
from blender_rig import make_armature, make_empty, package, update_mechanism
from mathutils import Euler, Matrix, Vector

CHAINS = 10


@pytest.fixture(autouse=True)
def batch_from_few_chains(batched):
    """Batch these few chains (conftest.batched)."""


def random_rig(seed: int, scale):
    """An armature of CHAINS random chains, each under a posed parent bone, with its empties."""
    rng = random.Random(seed)
    bones = []
    for index in range(CHAINS):
        base = Vector((index * 1.5, 0.0, 0.0))
        hip = base + Vector((0.0, 0.0, 1.5))
        knee = hip + Vector((rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), -rng.uniform(0.3, 0.8)))
        ankle = knee + Vector((rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), -rng.uniform(0.3, 0.8)))
        if index % 5 == 2:  # unequal bones, so a target at the root is too close
            knee, ankle = hip + Vector((0.1, 0.0, -0.9)), hip + Vector((0.1, 0.1, -1.1))
        connected = rng.random() < 0.7
        start = knee if connected else knee + Vector((0.05, 0.02, -0.03))
        bones += [
            (f"root.{index}", base, base + Vector((0.0, 0.0, 0.3)), None, False),
            (f"upper.{index}", hip, knee, f"root.{index}", False),
            (f"lower.{index}", start, ankle, f"upper.{index}", connected),
        ]
    obj = make_armature("Rig", bones)
    obj.matrix_world = Matrix.LocRotScale((0.3, -0.2, 0.1), Euler((0.2, -0.4, 0.7)), scale)
    for edit in obj.data.bones:
        edit.use_deform = False
    chains = obj.two_bone_ik.chains
    for index in range(CHAINS):
        pose_bones = obj.pose.bones
        pose_bones[f"root.{index}"].rotation_mode = "XYZ"
        pose_bones[f"root.{index}"].rotation_euler = [rng.uniform(-0.5, 0.5) for _ in range(3)]
        pose_bones[f"root.{index}"].location = [rng.uniform(-0.1, 0.1) for _ in range(3)]
        if not obj.data.bones[f"lower.{index}"].use_connect:
            pose_bones[f"lower.{index}"].location = [rng.uniform(-0.05, 0.05) for _ in range(3)]
        world_hip = obj.matrix_world @ obj.data.bones[f"upper.{index}"].head_local
        kind = index % 5
        distance = {0: 0.5, 1: 3.0, 2: 0.02, 3: 0.6, 4: 0.8}[kind]
        target = make_empty(f"Target.{index}", world_hip + Vector((0.1, 0.2, -1.0)).normalized() * distance)
        pole = (
            None
            if kind == 3
            else make_empty(f"Pole.{index}", world_hip + Vector((rng.uniform(-1, 1), -1.0, -0.3)))
        )
        if kind == 4:  # the pole on the root-target line
            pole.location = world_hip + (target.location - world_hip) * 2.0
        chain = chains.add()
        chain.name, chain.upper_bone, chain.lower_bone = f"leg.{index}", f"upper.{index}", f"lower.{index}"
        chain.target, chain.pole = target, pole
        chain.end_rotation = "FK"
    update_mechanism(obj)
    bpy.context.view_layer.update()
    return obj


def mechanism_state(obj):
    """Each chain's outputs and the evaluated world-space head and tail of its bones."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    result = []
    for chain in obj.two_bone_ik.chains:
        points = []
        for name in (chain.upper_bone, chain.lower_bone):
            pose_bone = evaluated.pose.bones[name]
            points += [evaluated.matrix_world @ pose_bone.head, evaluated.matrix_world @ pose_bone.tail]
        result.append((points, chain.state, chain.status, chain.reachable, chain.too_close))
    return result


@contextlib.contextmanager
def driver_handlers_off():
    """The extension's depsgraph handler out, so an update evaluates what was written and nothing more."""
    handler = package().driver.handlers.two_bone_ik_depsgraph_update_post
    bpy.app.handlers.depsgraph_update_post.remove(handler)
    try:
        yield
    finally:
        bpy.app.handlers.depsgraph_update_post.append(handler)


def exact_state(obj):
    """The same, solved chain by chain by the exact path."""
    driver = package().driver
    with driver_handlers_off():
        for pose_bone in obj.pose.bones:
            if pose_bone.name.startswith("MCH-IK-"):
                pose_bone.matrix_basis = Matrix.Identity(4)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for chain in obj.two_bone_ik.chains:
            driver.evaluate.evaluate_chain(obj, chain, depsgraph)
        bpy.context.view_layer.update()
        return mechanism_state(obj)


def batched_state(obj):
    """Solve the plan's chains through the batch, none handed back, and return mechanism_state."""
    driver = package().driver
    depsgraph = bpy.context.evaluated_depsgraph_get()
    plan = driver.scope.plan(depsgraph)
    assert sum(len(group.entries) for group in plan.batch.groups) == CHAINS
    assert driver.batch.evaluate(plan.batch, depsgraph) == []
    with driver_handlers_off():
        bpy.context.view_layer.update()
        return mechanism_state(obj)


def assert_same(batched, exact) -> None:
    """Same outputs, and every bone head and tail within 1e-5 x 4 m in world space (the longest
    chain, 2 m, times the largest armature scale)."""
    for (points, *outputs), (exact_points, *exact_outputs) in zip(batched, exact, strict=True):
        assert outputs == exact_outputs
        for point, exact_point in zip(points, exact_points, strict=True):
            assert (point - exact_point).length < 4e-5


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("scale", [(1.0, 1.0, 1.0), (2.0, 2.0, 2.0), (1.0, 2.0, 0.5)])
def test_batched_chains_match_the_exact_path(scene, seed, scale):
    """Every chain batched (nothing handed back), each bone where the exact path puts it, with the same
    status, reachable and too-close flags."""
    obj = random_rig(seed, scale)
    batched = batched_state(obj)
    statuses = {status for _, _, status, _, _ in batched}
    assert {"", "No pole: the joint bends as in the rest pose"} <= statuses
    assert any(reachable for *_, reachable, _ in batched) and any(too_close for *_, too_close in batched)
    assert_same(batched, exact_state(obj))


def test_chains_the_batch_cannot_do_go_to_the_exact_path(scene):
    """Inherit rotation off, an FK scale, a non-uniformly scaled parent: those chains are handed back,
    the others batched, and the pose is the exact path's."""
    obj = random_rig(4, (1.0, 1.0, 1.0))
    obj.data.bones["lower.1"].use_inherit_rotation = False
    obj.pose.bones["upper.2"].scale = (1.2, 1.2, 1.2)
    obj.pose.bones["root.3"].scale = (1.0, 1.5, 1.0)
    bpy.context.view_layer.update()
    driver = package().driver
    depsgraph = bpy.context.evaluated_depsgraph_get()
    plan = driver.scope.plan(depsgraph)
    handed_back = driver.batch.evaluate(plan.batch, depsgraph)
    assert sorted(step.chain_index for step in handed_back) == [1, 2, 3]
    for step in handed_back:
        driver.evaluate.evaluate_chain(obj, obj.two_bone_ik.chains[step.chain_index], depsgraph)
    with driver_handlers_off():
        bpy.context.view_layer.update()
        batched = mechanism_state(obj)
    assert_same(batched, exact_state(obj))


def test_mechanism_bones_in_euler_mode_keep_their_location_when_written_in_bulk(scene):
    """Every bone set to XYZ Euler (a common pipeline step), mechanism bones included, and the upper
    bones given an FK location: the bulk write keeps each mechanism bone's location."""
    obj = random_rig(5, (1.0, 1.0, 1.0))
    for pose_bone in obj.pose.bones:
        pose_bone.rotation_mode = "XYZ"
    for index in range(CHAINS):
        obj.pose.bones[f"upper.{index}"].location = (0.1, 0.05, -0.08)
    bpy.context.view_layer.update()
    driver = package().driver
    depsgraph = bpy.context.evaluated_depsgraph_get()
    assert driver.batch.evaluate(driver.scope.plan(depsgraph).batch, depsgraph) == []
    with driver_handlers_off():
        bpy.context.view_layer.update()
        batched = mechanism_state(obj)
    assert_same(batched, exact_state(obj))


def test_twist_softness_and_bone_targets_batch_like_the_exact_path(scene):
    """Per-chain twist and softness, and targets and poles that are bones at a Head/Tail point
    (contract D9, D10): batched, each bone where the exact path puts it."""
    obj = random_rig(6, (1.0, 2.0, 0.5))
    controls = make_armature(
        "Controls",
        [(f"ctl.{i}", (i * 1.5, -1.0, 0.4), (i * 1.5, -1.3, 0.7), None, False) for i in range(CHAINS)],
    )
    rng = random.Random(6)
    for index, chain in enumerate(obj.two_bone_ik.chains):
        chain.twist = rng.uniform(-1.5, 1.5) if index % 2 else 0.0
        chain.softness = rng.uniform(0.05, 0.5) if index % 3 else 0.0
        if index % 4 == 1:
            chain.target, chain.target_bone, chain.target_head_tail = controls, f"ctl.{index}", rng.random()
        if index % 4 == 2:
            chain.pole, chain.pole_bone, chain.pole_head_tail = controls, f"ctl.{index}", rng.random()
    bpy.context.view_layer.update()
    assert_same(batched_state(obj), exact_state(obj))
