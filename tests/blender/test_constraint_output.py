# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain behaves like a Blender constraint (docs/design.md, "The native network").

The bones' own channels stay the animator's: the solve reaches the pose through the chain's
constraints, Blender evaluates influence and Enabled on every frame and render, keys, drivers and
typed values on the chain bones are the FK pose, and files of earlier versions come back on the
network with their FK pose and the same evaluated pose, also in a Blender without the extension.
"""

import json
import math
import pathlib
import shutil

import bpy
import pytest
from blender_rig import (
    add_chain,
    add_chain_at,
    assert_close,
    exited_cleanly,
    expected_world,
    fcurves,
    key_setting,
    leg_bones,
    leg_with_chain,
    make_empty,
    make_leg,
    make_legs,
    marker_world,
    package,
    run_blender,
    set_mode,
    setup_marker_render,
    update_mechanism,
    world_head,
    world_tail,
)
from mathutils import Euler, Quaternion, Vector

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
TARGET = (0.3, 0.1, 0.2)
POLE = (0.0, -1.0, 0.5)
# The base leg is 0.5025 + 0.5025 m long; positions compare to 1e-5 x chain length.
TOLERANCE = 1e-5


def leg_with_foot():
    """The base leg with a connected ``foot`` under the shin, a chain added by the operator, target
    at TARGET; Object Mode."""
    return leg_with_chain(leg_bones(foot_tail=(0, -0.15, 0)), target=TARGET, controls="EMPTIES")


def channels(obj, names=("thigh", "shin", "foot")) -> list[tuple[float, ...]]:
    """Every channel (location, rotations, scale) of the named pose bones, as plain floats."""
    values = []
    for name in names:
        pose_bone = obj.pose.bones[name]
        values.append(
            (
                *pose_bone.location,
                *pose_bone.rotation_quaternion,
                *pose_bone.rotation_euler,
                *pose_bone.rotation_axis_angle,
                *pose_bone.scale,
            )
        )
    return values


def assert_channels(actual, expected, tolerance: float = 1e-6) -> None:
    for bone_actual, bone_expected in zip(actual, expected, strict=True):
        assert max(abs(a - b) for a, b in zip(bone_actual, bone_expected, strict=True)) <= tolerance


def pose_rotation(obj, name: str) -> Quaternion:
    """Evaluated armature-space rotation of a pose bone."""
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return evaluated.pose.bones[name].matrix.to_quaternion()


def angle(first: Quaternion, second: Quaternion) -> float:
    return first.rotation_difference(second).angle


def tails(obj, names=("thigh", "shin", "foot")) -> list[Vector]:
    return [world_tail(obj, name).copy() for name in names]


def fk_and_solved_tails(obj, chain) -> tuple[list[Vector], list[Vector]]:
    """World tails with the chain off (the FK pose), then on (the solve); the chain is left on."""
    chain.enabled = False
    update()
    fk = tails(obj)
    chain.enabled = True
    update()
    return fk, tails(obj)


def update(times: int = 1) -> None:
    for _ in range(times):
        bpy.context.view_layer.update()


def test_channels_hold_only_the_animators_pose(scene):
    """With the chain solving, the chain bones' channels keep exactly what the animator typed."""
    obj, chain = leg_with_foot()
    thigh = obj.pose.bones["thigh"]
    thigh.rotation_mode = "QUATERNION"
    thigh.rotation_quaternion = Quaternion((1, 0, 0), 0.4)
    update()
    typed = channels(obj)
    for location in ((0.4, 0.0, 0.1), (-0.2, 0.3, 0.4), TARGET):
        chain.target.location = location
        update(2)
        assert_channels(channels(obj), typed)
        _, end, _ = expected_world(obj, location, chain.pole.location)
        assert_close(world_tail(obj, "shin"), end, TOLERANCE)


def test_fk_survives_moving_the_thigh_at_half_influence(scene):
    """The animator's thigh rotation survives influence 0.5 and a location moved and put back: the
    pose comes back exactly and influence 0 shows the animator's 0.4 rad."""
    obj, chain = leg_with_foot()
    thigh = obj.pose.bones["thigh"]
    thigh.rotation_mode = "QUATERNION"
    thigh.rotation_quaternion = Quaternion((1, 0, 0), 0.4)
    chain.influence = 0.5
    update(2)
    before = tails(obj)
    rotation_before = pose_rotation(obj, "thigh")
    for z in (0.02, 0.0):
        thigh.location = (0.0, 0.0, z)
        update(2)
        assert angle(Quaternion(thigh.rotation_quaternion), Quaternion((1, 0, 0), 0.4)) < 1e-7
    assert angle(pose_rotation(obj, "thigh"), rotation_before) < 1e-6
    for tail, old in zip(tails(obj), before, strict=True):
        assert_close(tail, old, TOLERANCE)
    chain.influence = 0.0
    update()
    rest = obj.data.bones["thigh"].matrix_local.to_quaternion()
    assert angle(pose_rotation(obj, "thigh"), rest @ Quaternion((1, 0, 0), 0.4)) < 1e-6


def test_influence_blends_each_bone_in_its_local_space(scene):
    """Influence 0 shows the FK pose, 1 the solve, and 0.5 turns each bone halfway from its FK to its
    solved rotation relative to its parent (rotations slerp in the bone's local space)."""
    obj, chain = leg_with_foot()
    obj.pose.bones["thigh"].rotation_quaternion = Euler((0.3, 0.1, -0.2)).to_quaternion()
    obj.pose.bones["shin"].rotation_quaternion = Euler((0.5, 0.0, 0.0)).to_quaternion()
    results = {}
    for influence in (0.0, 1.0, 0.5):
        chain.influence = influence
        update()
        thigh, shin = pose_rotation(obj, "thigh"), pose_rotation(obj, "shin")
        results[influence] = (thigh, thigh.inverted() @ shin, world_tail(obj, "shin").copy())
    chain.enabled = False
    update()
    assert_close(world_tail(obj, "shin"), results[0.0][2], 1e-7)  # influence 0 is the FK pose
    _, end, reachable = expected_world(obj, TARGET, chain.pole.location)
    assert reachable
    assert_close(results[1.0][2], end, TOLERANCE)
    for index in (0, 1):
        halfway = results[0.0][index].slerp(results[1.0][index], 0.5)
        assert angle(results[0.5][index], halfway) < 1e-5


def test_enabled_and_influence_switch_to_fk_in_the_same_update(scene):
    """Enabled off or influence 0 shows the animator's pose in the same update; back on, the solve;
    the same inputs give the same pose however many updates ran, in any order."""
    obj, chain = leg_with_foot()
    obj.pose.bones["shin"].rotation_quaternion = Euler((0.7, 0.0, 0.0)).to_quaternion()
    fk, solved = fk_and_solved_tails(obj, chain)
    assert (solved[1] - fk[1]).length > 0.1
    for setting, value, expected in (
        ("enabled", False, fk),
        ("enabled", True, solved),
        ("influence", 0.0, fk),
        ("influence", 1.0, solved),
    ):
        setattr(chain, setting, value)
        update()
        for tail, wanted in zip(tails(obj), expected, strict=True):
            assert_close(tail, wanted, 1e-6)
        update(3)
        for tail, wanted in zip(tails(obj), expected, strict=True):
            assert_close(tail, wanted, 1e-6)


def test_keys_drivers_and_typed_values_on_chain_bones_are_fk_input(scene):
    """A driven shin rotation, a keyed thigh and a typed value are the FK pose: the end stays on the
    target over them, the chain says Reachable, and keys store the animator's values."""
    obj, chain = leg_with_foot()
    obj["bend"] = 0.9
    shin = obj.pose.bones["shin"]
    shin.rotation_mode = "XYZ"
    fcurve = shin.driver_add("rotation_euler", 0)
    variable = fcurve.driver.variables.new()
    variable.name, variable.type = "bend", "SINGLE_PROP"
    variable.targets[0].id, variable.targets[0].data_path = obj, '["bend"]'
    fcurve.driver.expression = "bend"
    thigh = obj.pose.bones["thigh"]
    thigh.rotation_quaternion = Euler((0.2, 0.0, 0.1)).to_quaternion()
    thigh.keyframe_insert("rotation_quaternion", frame=1)
    scene.frame_set(1)
    update()
    assert shin.rotation_euler.x == pytest.approx(0.9, abs=1e-6)
    assert chain.reachable and chain.status == ""
    _, end, _ = expected_world(obj, TARGET, chain.pole.location)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)
    keyed = {
        fc.array_index: fc.evaluate(1) for fc in fcurves(obj) if fc.data_path.endswith("rotation_quaternion")
    }
    assert angle(Quaternion([keyed[i] for i in range(4)]), Euler((0.2, 0.0, 0.1)).to_quaternion()) < 1e-6
    # A value typed into a chain bone stays there; the end stays on the target.
    thigh.rotation_quaternion = Euler((-0.3, 0.0, 0.0)).to_quaternion()
    update()
    assert angle(Quaternion(thigh.rotation_quaternion), Euler((-0.3, 0.0, 0.0)).to_quaternion()) < 1e-7
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    assert evaluated.pose.bones["shin"].rotation_euler.x == pytest.approx(0.9, abs=1e-6)


def test_end_rotation_switches_without_losing_the_end_bones_fk(scene):
    """End Rotation Target turns the foot to the target's world rotation; FK gives back the foot's own
    rotation exactly; Target again turns it again."""
    obj, chain = leg_with_foot()
    foot = obj.pose.bones["foot"]
    foot.rotation_quaternion = Euler((0.0, 0.3, 0.2)).to_quaternion()
    chain.target.rotation_euler = (0.0, 0.0, 0.8)
    update()
    fk_rotation = pose_rotation(obj, "foot")
    fk_channel = Quaternion(foot.rotation_quaternion)
    for setting in ("TARGET", "FK", "TARGET", "FK"):
        chain.end_rotation = setting
        update()
        assert chain.status == ""
        if setting == "TARGET":
            wanted = chain.target.matrix_world.to_quaternion()
            evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
            world = evaluated.matrix_world @ evaluated.pose.bones["foot"].matrix
            assert angle(world.to_quaternion(), wanted) < 1e-5
        else:
            assert angle(pose_rotation(obj, "foot"), fk_rotation) < 1e-6
        assert angle(Quaternion(foot.rotation_quaternion), fk_channel) < 1e-7


def test_other_constraints_on_chain_bones_never_give_a_false_reachable(scene):
    """A Limit Rotation after the chain's constraint composes in stack order: the end misses the
    target, and the chain says so (OFF_TARGET, naming the bone) instead of Reachable."""
    obj, chain = leg_with_foot()
    limit = obj.pose.bones["shin"].constraints.new("LIMIT_ROTATION")
    limit.use_limit_x, limit.min_x, limit.max_x = True, 0.0, math.radians(10)
    limit.owner_space = "LOCAL"
    update(2)
    constraints = obj.pose.bones["shin"].constraints
    # (The muted IK first: the chain's controls, for Select > Constraint Target.)
    assert [c.type for c in constraints] == ["IK", "COPY_TRANSFORMS", "LIMIT_ROTATION"]
    assert not constraints["Two-Bone IK Controls"].enabled
    assert chain.state == "OFF_TARGET" and not chain.reachable
    assert "other constraints on 'shin'" in chain.status
    limit.influence = 0.0
    update(2)
    assert chain.reachable
    _, end, _ = expected_world(obj, TARGET, chain.pole.location)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)


def _scene_frame_tails(scene, obj, frames) -> dict[int, Vector]:
    found = {}
    for frame in frames:
        scene.frame_set(frame)
        found[frame] = world_tail(obj, "shin").copy()
    return found


@pytest.mark.parametrize("start", [1, 8])
def test_keyed_influence_renders_each_frames_value(scene, tmp_path, start):
    """Influence keyed 0 at frame 1 and 1 at frame 8: every frame of render(animation=True), started
    from frame 1 or 8, shows that frame's pose, as frame_set does."""
    obj, chain = leg_with_foot()
    chain.influence = 0.0
    key_setting(chain, "influence", 1)
    chain.influence = 1.0
    key_setting(chain, "influence", 8)
    center, size, resolution = (0.15, 0.3), 1.0, 200
    setup_marker_render(scene, obj, "shin", center, size, resolution)
    frames = range(1, 9)
    expected = _scene_frame_tails(scene, obj, frames)
    assert (expected[8] - expected[1]).length > 0.3
    scene.frame_start, scene.frame_end = 1, 8
    scene.frame_set(start)
    scene.render.filepath = str(tmp_path / "frame_")
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    pixel = size / resolution
    for frame in frames:
        found = marker_world(tmp_path / f"frame_{frame:04d}.png", center, size)
        assert found is not None
        tail = expected[frame]
        assert_close((found[0], 0.0, found[1]), (tail.x, 0.0, tail.z), pixel)


def test_remove_shows_the_animators_pose(scene):
    """Remove deletes the chain's constraints, drivers and mechanism bones; the bones show their own
    channels, which were never written."""
    obj, chain = leg_with_foot()
    obj.pose.bones["shin"].rotation_quaternion = Euler((0.6, 0.0, 0.0)).to_quaternion()
    fk, _ = fk_and_solved_tails(obj, chain)
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_remove() == {"FINISHED"}
    update()
    assert not len(obj.two_bone_ik.chains)
    assert not [bone.name for bone in obj.data.bones if bone.name.startswith("MCH-")]
    assert not any(len(pose_bone.constraints) for pose_bone in obj.pose.bones)
    assert obj.animation_data is None or not len(obj.animation_data.drivers)
    for tail, wanted in zip(tails(obj), fk, strict=True):
        assert_close(tail, wanted, 1e-6)


def test_apply_keeps_the_pose_in_the_channels(scene):
    """Apply writes the chain's result (influence 0.7, End Rotation Target) into the channels and
    removes the chain: nothing moves."""
    obj, chain = leg_with_foot()
    chain.influence = 0.7
    chain.end_rotation = "TARGET"
    chain.target.rotation_euler = (0.2, 0.0, 0.5)
    update()
    before = tails(obj)
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_apply() == {"FINISHED"}
    update()
    assert not len(obj.two_bone_ik.chains)
    for tail, wanted in zip(tails(obj), before, strict=True):
        assert_close(tail, wanted, TOLERANCE)


def test_chain_made_by_script_says_what_to_run(scene):
    """A chain added through the collection API alone says to run Update Mechanism; after it runs,
    the chain solves."""
    obj = make_leg()
    chain = obj.two_bone_ik.chains.add()
    chain.name, chain.upper_bone, chain.lower_bone = "leg", "thigh", "shin"
    chain.target, chain.pole = make_empty("Target", TARGET), make_empty("Pole", POLE)
    update()
    assert "Update Mechanism" in chain.status and not chain.reachable
    assert_close(world_tail(obj, "shin"), (0, 0, 0), 1e-6)
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    update()
    chain = obj.two_bone_ik.chains["leg"]
    assert chain.status == "" and chain.reachable
    _, end, _ = expected_world(obj, TARGET, POLE)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)


def test_renaming_a_chain_keeps_its_influence_driven(scene):
    """A renamed chain (quotes in its name too) still turns off: its drivers follow it."""
    obj, chain = leg_with_foot()
    chain.name = 'left "leg"'
    chain.enabled = False
    update()
    assert_close(world_tail(obj, "shin"), (0, 0, 0), 1e-6)


def open_copy(tmp_path, stem: str) -> dict:
    """Open a copy of test file ``stem``.blend (the extension enabled: it upgrades on load) and
    return its ``stem``.json record."""
    recorded = json.loads((DATA / f"{stem}.json").read_text())
    path = tmp_path / f"{stem}.blend"
    shutil.copy(DATA / f"{stem}.blend", path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    return recorded


def bone_lengths(recorded) -> dict[str, float]:
    """Each recorded chain's bones (upper, lower, end bone) -> the chain's rest length."""
    bones = recorded["bones"]
    lengths = {}
    for saved in recorded["chains"].values():
        upper, lower = bones[saved["upper_bone"]], bones[saved["lower_bone"]]
        length = (Vector(lower["head"]) - Vector(upper["head"])).length
        length += (Vector(lower["tail"]) - Vector(lower["head"])).length
        for name in (saved["upper_bone"], saved["lower_bone"], saved["end_bone_used"]):
            lengths[name] = length
    return lengths


def assert_pose(found: dict, wanted: dict, lengths: dict[str, float]) -> None:
    """Every bone's world head and tail in ``found`` within 1e-5 x its chain's length of
    ``wanted`` (both {"world_head": {bone: xyz}, "world_tail": ...})."""
    for key in ("world_head", "world_tail"):
        for bone, point in wanted[key].items():
            assert_close(found[key][bone], point, TOLERANCE * lengths[bone])


def world_pose(obj, bones) -> dict:
    return {
        "world_head": {bone: world_head(obj, bone).to_tuple() for bone in bones},
        "world_tail": {bone: world_tail(obj, bone).to_tuple() for bone in bones},
    }


def assert_upgraded(obj) -> None:
    """Every chain of ``obj`` has its network and no 0.1.0 bookkeeping, and no F-Curve animates a
    chain setting by its old path."""
    upgrade = package().chain.upgrade
    for chain in obj.two_bone_ik.chains:
        assert not upgrade.is_legacy(chain) and not upgrade.needs_network(obj, chain)
        assert package().network.health.problem(obj, chain) == ""
    paths = [fcurve.data_path for fcurve in fcurves(obj)]
    assert not [path for path in paths if path.startswith("two_bone_ik.")], paths


# Plays an upgraded file in a Blender that never had the extension: every recorded bone's world
# head and tail at each frame, as JSON on the last line of the output.
REPLAY = """
bpy.ops.wm.open_mainfile(filepath={path!r})
scene = bpy.context.scene
found = {{}}
for frame in {frames!r}:
    scene.frame_set(frame)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    obj = bpy.data.objects[{armature!r}].evaluated_get(depsgraph)
    found[frame] = {{
        "world_head": {{b: list(obj.matrix_world @ obj.pose.bones[b].head) for b in {bones!r}}},
        "world_tail": {{b: list(obj.matrix_world @ obj.pose.bones[b].tail) for b in {bones!r}}},
    }}
print("POSE " + json.dumps(found))
"""


def replay_without_extension(path, armature: str, frames, bones) -> dict:
    """The pose of each frame of the saved file ``path`` in a fresh Blender where the extension
    was never enabled."""
    code = REPLAY.format(path=str(path), frames=list(frames), armature=armature, bones=list(bones))
    process = run_blender(code, enable=False)
    assert exited_cleanly(process.returncode), process.stdout + process.stderr
    line = next(line for line in process.stdout.splitlines() if line.startswith("POSE "))
    return {int(frame): pose for frame, pose in json.loads(line[5:]).items()}


def test_a_file_saved_by_0_1_0_opens_with_the_same_pose(scene, tmp_path):
    """A file saved by 0.1.0 (influence 0.5, End Rotation Target, an unreachable arm) shows the same
    evaluated pose, with the stored FK pose back in the channels, the old properties gone and the
    chains on their network."""
    recorded = open_copy(tmp_path, "two_bone_ik_0_1_0")
    obj = bpy.data.objects[recorded["armature"]]
    lengths = bone_lengths(recorded)
    assert_upgraded(obj)
    for name, saved in recorded["chains"].items():
        chain = obj.two_bone_ik.chains[name]
        assert chain.status == "" and chain.reachable == saved["reachable"]
        assert chain.influence == pytest.approx(saved["influence"], abs=1e-6)
        assert_pose(world_pose(obj, saved["world_tail"]), saved, lengths)
        for bone, fk in saved["fk_channels"].items():
            if fk is None:
                continue
            pose_bone = obj.pose.bones[bone]
            rotation = fk["rotation_mode"]
            rotation = "rotation_quaternion" if rotation == "QUATERNION" else "rotation_euler"
            for channel in ("location", "scale", rotation):
                assert tuple(getattr(pose_bone, channel)) == pytest.approx(fk[channel], abs=1e-6)


def test_a_file_saved_with_the_handler_mechanism_upgrades_with_the_same_pose(scene, tmp_path):
    """A file saved by the handler-based version (MCH-IK bones written by a handler, keyed
    influence, twist and softness on the chains, End Rotation Target, a chain without a pole)
    opens on the network with the same evaluated pose in each of its frames, its setting keys
    re-pointed to the root bones' custom properties and playing the same values."""
    recorded = open_copy(tmp_path, "two_bone_ik_unreleased_mch")
    obj = bpy.data.objects[recorded["armature"]]
    lengths = bone_lengths(recorded)
    assert_upgraded(obj)
    scene = bpy.context.scene
    for frame, values in recorded["frames"].items():
        scene.frame_set(int(frame))
        assert_pose(world_pose(obj, values["world_tail"]), values, lengths)
        for name, saved in values["chains"].items():
            chain = obj.two_bone_ik.chains[name]
            for setting in ("influence", "twist", "softness"):
                assert getattr(chain, setting) == pytest.approx(saved[setting], abs=1e-6), (frame, setting)
            assert (chain.state, chain.status, chain.reachable) == (
                saved["state"],
                saved["status"],
                saved["reachable"],
            )


@pytest.mark.parametrize("stem", ["two_bone_ik_0_1_0", "two_bone_ik_unreleased_mch"])
def test_an_upgraded_file_plays_the_same_pose_without_the_extension(scene, tmp_path, stem):
    """A file of an earlier version, upgraded on load and saved, opens in a Blender where the
    extension was never enabled with the same pose in every recorded frame: the network, its
    drivers and the re-pointed setting keys need nothing of ours."""
    recorded = open_copy(tmp_path, stem)
    frames = {int(frame): values for frame, values in recorded.get("frames", {}).items()}
    if not frames:  # 0.1.0's record is one pose, of the frame the file was saved at
        frames = {bpy.context.scene.frame_current: _merged_chains(recorded)}
    upgraded = tmp_path / "upgraded.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(upgraded))
    lengths = bone_lengths(recorded)
    bones = sorted(lengths)
    played = replay_without_extension(upgraded, recorded["armature"], sorted(frames), bones)
    for frame, values in frames.items():
        assert_pose(played[frame], values, lengths)


def _merged_chains(recorded) -> dict:
    """0.1.0's per-chain world heads and tails as one pose."""
    pose: dict[str, dict] = {"world_head": {}, "world_tail": {}}
    for saved in recorded["chains"].values():
        for key in pose:
            pose[key].update(saved[key])
    return pose


def test_add_on_a_library_override_refuses_and_leaves_nothing(scene, tmp_path):
    """Add on a library override of a linked rig: no exception, CANCELLED with a message saying what
    to do, and no new objects."""
    obj = make_leg()
    collection = bpy.data.collections.new("Rig")
    scene.collection.children.link(collection)
    scene.collection.objects.unlink(obj)
    collection.objects.link(obj)
    library = tmp_path / "library.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_data_from, data_to):
        data_to.collections = ["Rig"]
    linked = bpy.data.collections["Rig"]
    bpy.context.scene.collection.children.link(linked)
    override = linked.override_hierarchy_create(bpy.context.scene, bpy.context.view_layer)
    rig = next(other for other in override.all_objects if other.type == "ARMATURE")
    rig.override_library.is_system_override = False  # editable, as the animator makes it
    objects = {other.name_full for other in bpy.data.objects}
    set_mode(rig, "POSE")
    with bpy.context.temp_override(active_object=rig, object=rig, active_pose_bone=rig.pose.bones["shin"]):
        with pytest.raises(RuntimeError, match="override cannot add bones"):
            bpy.ops.pose.two_bone_ik_add()
    assert {other.name_full for other in bpy.data.objects} == objects
    assert not len(rig.two_bone_ik.chains)


def test_removing_a_later_chain_on_the_same_bones_keeps_the_first(scene):
    """A second chain on the first chain's bones owns no mechanism: removing it leaves the first
    chain's constraints and mechanism bones, and the first chain still solves."""
    obj, chain = leg_with_foot()
    spare = add_chain(obj, make_empty("Spare Target", (0.0, 0.5, 0.5)), None)
    spare.name = "spare"
    update()
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_remove(chain="spare") == {"FINISHED"}
    update()
    chain = obj.two_bone_ik.chains[0]
    assert chain.status == "" and chain.reachable
    _, end, _ = expected_world(obj, TARGET, chain.pole.location)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)


def test_unnamed_chains_made_by_script_drive_their_own_bones(scene):
    """Two chains added by script without names: each one's influence drives its own bones only,
    since its settings live on its own network's root bone. (Update Mechanism used to name them,
    because the drivers read chains by name.)"""
    obj = make_legs()
    for side, x in ((".L", 0.2), (".R", -0.2)):
        chain = obj.two_bone_ik.chains.add()
        chain.upper_bone, chain.lower_bone = f"thigh{side}", f"shin{side}"
        chain.target = make_empty(f"Target{side}", (x, 1.0, 1.0))
        chain.pole = make_empty(f"Pole{side}", (x, 1.0, -1.0))
    update_mechanism(obj)
    chains = obj.two_bone_ik.chains
    chains[1].influence = 0.0
    update()
    assert_close(world_tail(obj, "shin.R"), (-0.2, 2.0, 0.0), 1e-6)  # the rest (FK) pose
    _, end, _ = expected_world(obj, (0.2, 1.0, 1.0), (0.2, 1.0, -1.0), "thigh.L", "shin.L")
    assert_close(world_tail(obj, "shin.L"), end, TOLERANCE)
    assert [chain.status for chain in chains] == ["", ""]


def legs_with_two_chains():
    """make_legs with a chain on each leg added as a script does, target (x,1,1) and pole (x,1,-1)
    (x = ±0.2, world). (The right chain is added after the left one's Update Mechanism, no longer
    with both before one: Update Mechanism builds every chain's network to its spec either way.)"""
    obj = make_legs()
    for side, x in ((".L", 0.2), (".R", -0.2)):
        names = (f"Target{side}", f"Pole{side}")
        add_chain_at(
            obj, (x, 1.0, 1.0), (x, 1.0, -1.0), upper=f"thigh{side}", lower=f"shin{side}", names=names
        )
    update()
    return obj


def test_removing_an_earlier_chain_keeps_the_next_ones_influence_its_own(scene):
    """Removing the first chain leaves the second's network and settings alone: its influence
    still drives its own bones."""
    obj = legs_with_two_chains()
    with bpy.context.temp_override(active_object=obj, object=obj):
        obj.two_bone_ik.active_chain_index = 0
        assert bpy.ops.pose.two_bone_ik_remove() == {"FINISHED"}
    (chain,) = obj.two_bone_ik.chains
    assert chain.name == "shin.R"
    update()
    _, end, _ = expected_world(obj, (-0.2, 1.0, 1.0), (-0.2, 1.0, -1.0), "thigh.R", "shin.R")
    assert_close(world_tail(obj, "shin.R"), end, TOLERANCE)
    chain.influence = 0.0
    update()
    assert_close(world_tail(obj, "shin.R"), (-0.2, 2.0, 0.0), 1e-6)


def test_chains_moved_in_the_list_by_script_keep_their_settings(scene):
    """A script reordering the chains changes nothing: each chain's settings live on its own
    network's root bone, so both chains stay solved and each influence drives its own bones.
    (The drivers used to read chains by position, and both chains said to run Update Mechanism.)"""
    obj = legs_with_two_chains()
    obj.two_bone_ik.chains.move(0, 1)
    obj.update_tag()
    update()
    assert [chain.name for chain in obj.two_bone_ik.chains] == ["shin.R", "shin.L"]
    assert [chain.status for chain in obj.two_bone_ik.chains] == ["", ""]
    left = obj.two_bone_ik.chains["shin.L"]
    left.influence = 0.0
    update()
    assert_close(world_tail(obj, "shin.L"), (0.2, 2.0, 0.0), 1e-6)
    _, end, _ = expected_world(obj, (-0.2, 1.0, 1.0), (-0.2, 1.0, -1.0), "thigh.R", "shin.R")
    assert_close(world_tail(obj, "shin.R"), end, TOLERANCE)


def test_chain_operators_refuse_edit_mode_and_change_nothing(scene):
    """Remove, Apply and Bake refuse in Edit Mode (they need the evaluated pose and change bones)."""
    obj, _chain = leg_with_foot()
    set_mode(obj, "EDIT")
    for operator in (
        bpy.ops.pose.two_bone_ik_remove,
        bpy.ops.pose.two_bone_ik_apply,
        bpy.ops.pose.two_bone_ik_bake,
    ):
        with bpy.context.temp_override(active_object=obj, object=obj):
            with pytest.raises(RuntimeError, match="Edit Mode"):
                operator()
    set_mode(obj, "OBJECT")
    assert len(obj.two_bone_ik.chains) == 1 and obj.pose.bones["shin"].constraints.get("Two-Bone IK")


def test_a_duplicate_chain_name_is_made_unique(scene):
    """Renaming a chain to another chain's name gives it a unique name, so its drivers stay its own."""
    obj = make_legs()
    for side in (".L", ".R"):
        add_chain(obj, make_empty(f"Target{side}", (0.0, 1.0, 1.0)), None, f"thigh{side}", f"shin{side}")
    chains = obj.two_bone_ik.chains
    chains[1].name = chains[0].name
    assert chains[1].name != chains[0].name
    chains[1].influence = 0.0
    update()
    assert_close(world_tail(obj, "shin.R"), (-0.2, 2.0, 0.0), 1e-6)


def test_deleted_drivers_are_a_status_and_remove_still_cleans_up(scene):
    """With the drivers deleted (animation_data_clear), the chain says to update its mechanism;
    Remove still takes its constraints away and shows the FK pose."""
    obj, chain = leg_with_foot()
    obj.animation_data_clear()
    chain.target.location = (0.2, 0.1, 0.3)
    update()
    assert "Update Mechanism" in chain.status
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_remove() == {"FINISHED"}
    update()
    assert not any(len(pose_bone.constraints) for pose_bone in obj.pose.bones)
    assert_close(world_tail(obj, "shin"), (0, 0, 0), 1e-6)


def test_apply_keeps_the_pose_under_non_uniform_scale(scene):
    """Apply on an armature scaled (1, 1.3, 1): the applied channels show the live pose. (Between
    influence 0 and 1 Blender's world-space blend shears the bones there, which rotation channels
    cannot hold: docs/limits.md.)"""
    obj, _chain = leg_with_foot()
    obj.scale = (1.0, 1.3, 1.0)
    update()
    before = tails(obj)
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_apply() == {"FINISHED"}
    update()
    for tail, wanted in zip(tails(obj), before, strict=True):
        assert_close(tail, wanted, TOLERANCE)
