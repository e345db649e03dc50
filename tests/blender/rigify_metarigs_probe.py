# SPDX-License-Identifier: GPL-3.0-or-later
"""Run inside a fresh Blender (tests/blender/test_rigify_metarigs.py, ``run_blender``): generate a rig
from every metarig the bpy's Rigify offers (``bpy.ops.object.armature_*_metarig_add``), with IK_FK 0
and IK_Stretch 0 on every limb, and measure Rigify's own IK and then Rigify Limbs on Two-Bone IK on
it: each limb's IK control moved 7 cm, Rigify's IK->FK and FK->IK snaps, Remove. Prints
``METARIG <name>`` before each rig's output (the operators' reports) and one line ``RESULT <json>``."""

import json
import re
import sys
import time

import addon_utils
import bpy
from blender_rig import generate_rigify
from mathutils import Euler, Matrix, Vector

addon_utils.enable("rigify", default_set=True, handle_error=None)
METARIGS = sorted(
    name[len("armature_") : -len("_metarig_add")]
    for name in dir(bpy.ops.object)
    if name.startswith("armature_") and name.endswith("_metarig_add")
)
MOVE = Vector((0.0, -0.04, 0.0574)).normalized() * 0.07  # each IK control moved 7 cm (armature space)
FK_TURN = (Euler((0.3, 0.1, 0.0)), Euler((0.5, 0.0, 0.0)))  # the FK pose the IK->FK snap takes


def generate(name: str):
    rig = generate_rigify(name)
    with bpy.context.temp_override(active_object=rig, object=rig):
        bpy.ops.object.mode_set(mode="POSE")
    bpy.context.view_layer.update()
    return rig


def snap_operators(rig) -> list[dict]:
    """The rig UI script's snap buttons: each operator call with the properties it sets."""
    text = next(t for t in bpy.data.texts if t.name.startswith("rig_ui")).as_string()
    found, current = [], None
    for line in text.splitlines():
        called = re.search(r"operator\('pose\.(rigify_limb_ik2fk|rigify_generic_snap)_", line)
        if called:
            current = {"operator": called.group(1)}
            found.append(current)
            continue
        setting = re.match(r"\s*props\.(\w+) = '(.*)'\s*$", line)
        if setting and current is not None:
            current[setting.group(1)] = setting.group(2)
        elif "operator(" in line:
            current = None
    return found


def evaluated(rig):
    return rig.evaluated_get(bpy.context.evaluated_depsgraph_get())


def points(rig, names) -> dict[str, Vector]:
    obj = evaluated(rig)
    return {
        f"{name} {part}": obj.matrix_world @ getattr(obj.pose.bones[name], part)
        for name in names
        for part in ("head", "tail")
    }


def deform_lengths(rig, limb_bones) -> dict:
    """The worst relative length change of the deform bones of the limbs' two bones (``limb_bones``)
    and of the rig's other deform bones, each with that bone's name."""
    obj = evaluated(rig)
    found = {"limbs": (0.0, ""), "others": (0.0, "")}
    for bone in obj.pose.bones:
        if rig.data.bones[bone.name].use_deform:
            error = abs((bone.tail - bone.head).length / rig.data.bones[bone.name].length - 1.0)
            kind = "limbs" if bone.name in limb_bones else "others"
            found[kind] = max(found[kind], (error, bone.name))
    return found


def limb_deform_bones(rig, found) -> set[str]:
    """The deform bones of the ORG bones that copy the limbs' IK chains (``DEF-thigh.L``,
    ``DEF-thigh.L.001``...)."""
    orgs = [
        name[len("ORG-") :]
        for snap in found
        if snap["operator"] == "rigify_limb_ik2fk"
        for name in org_bones(rig, snap)
    ]
    return {
        bone.name
        for bone in rig.data.bones
        if bone.use_deform
        and any(bone.name == f"DEF-{org}" or bone.name.startswith(f"DEF-{org}.") for org in orgs)
    }


def rig_state(rig, skip=()) -> list:
    """Every constraint (bone, name, type, target, Enabled, influence) and driver (bone, path, index,
    mute) of the rig, but those of the network and of the bones in ``skip``."""
    constraints = [
        (bone.name, c.name, c.type, getattr(c, "subtarget", ""), c.enabled, round(c.influence, 6))
        for bone in rig.pose.bones
        for c in bone.constraints
    ]
    drivers = []
    for fcurve in rig.animation_data.drivers:
        owner = re.match(r'pose\.bones\["((?:[^"\\]|\\.)*)"\]', fcurve.data_path)
        drivers.append((owner.group(1) if owner else "", fcurve.data_path, fcurve.array_index, fcurve.mute))
    return sorted(
        item for item in constraints + drivers if item[0] not in skip and not item[0].startswith("MCH-IK-")
    )


def set_all(rig, settings, name: str, value: float) -> None:
    for bone in settings:
        rig.pose.bones[bone][name] = value
    rig.update_tag()
    bpy.context.view_layer.update()


BASIS: dict = {}


def keep_basis(rig) -> None:
    """Remember every bone's channels (Rigify sets some at rest, the chains' network too)."""
    BASIS.clear()
    BASIS.update({bone.name: (bone.rotation_mode, bone.matrix_basis.copy()) for bone in rig.pose.bones})


def reset(rig) -> None:
    """Every bone's channels back to what :func:`keep_basis` remembered."""
    for bone in rig.pose.bones:
        bone.rotation_mode, bone.matrix_basis = BASIS[bone.name]
    bpy.context.view_layer.update()


def move_controls(rig, snaps) -> None:
    for snap in snaps:
        if snap["operator"] == "rigify_limb_ik2fk":
            control = rig.pose.bones[json.loads(snap["ctrl_bones"])[-1]]
            rest = rig.data.bones[control.name].matrix_local
            control.matrix = Matrix.Translation(MOVE) @ rest
    bpy.context.view_layer.update()


def org_bones(rig, snap) -> list[str]:
    """The bones copying the limb's IK chain (Rigify's ORG bones)."""
    ik = set(json.loads(snap["ik_bones"])[:2])
    return [
        bone.name
        for bone in rig.pose.bones
        if any(c.type == "COPY_TRANSFORMS" and c.subtarget in ik for c in bone.constraints)
    ]


def snaps(rig, found, settings) -> dict:
    """Rigify's IK->FK snap from a bent FK pose (IK_FK 1, then 0) and FK->IK snap from the moved
    IK controls (IK_FK 0, then 1): the worst distance of the limbs' ORG heads and tails from the
    pose snapped to, over all limbs."""
    rig_id = rig.data["rig_id"]
    limbs = [s for s in found if s["operator"] == "rigify_limb_ik2fk"]
    generic = {s["output_bones"]: s for s in found if s["operator"] == "rigify_generic_snap"}
    orgs = [name for snap in limbs for name in org_bones(rig, snap)]
    reset(rig)
    for snap in limbs:
        for bone, turn in zip(json.loads(snap["fk_bones"])[:2], FK_TURN, strict=True):
            rig.pose.bones[bone].rotation_mode = "XYZ"
            rig.pose.bones[bone].rotation_euler = turn
    set_all(rig, settings, "IK_FK", 1.0)
    before = points(rig, orgs)
    for snap in limbs:
        keys = ("prop_bone", "fk_bones", "ik_bones", "ctrl_bones", "tail_bones", "extra_ctrls")
        with bpy.context.temp_override(active_object=rig, object=rig):
            result = getattr(bpy.ops.pose, f"rigify_limb_ik2fk_{rig_id}")(**{k: snap[k] for k in keys})
        assert result == {"FINISHED"}, result
    set_all(rig, settings, "IK_FK", 0.0)
    after = points(rig, orgs)
    ik_to_fk = max((point - after[name]).length for name, point in before.items())
    reset(rig)
    move_controls(rig, found)
    before = points(rig, orgs)
    for snap in limbs:
        fk = generic[snap["fk_bones"]]
        with bpy.context.temp_override(active_object=rig, object=rig):
            result = getattr(bpy.ops.pose, f"rigify_generic_snap_{rig_id}")(
                output_bones=fk["output_bones"], input_bones=fk["input_bones"], ctrl_bones=fk["ctrl_bones"]
            )
        assert result == {"FINISHED"}, result
    set_all(rig, settings, "IK_FK", 1.0)
    after = points(rig, orgs)
    fk_to_ik = max((point - after[name]).length for name, point in before.items())
    set_all(rig, settings, "IK_FK", 0.0)
    reset(rig)
    return {"ik_to_fk": ik_to_fk, "fk_to_ik": fk_to_ik}


def measure(rig, found, settings) -> dict:
    """With every limb's IK control moved: the deform bones' worst length change and every bone's
    world head and tail; then the snaps."""
    reset(rig)
    move_controls(rig, found)
    result = {
        "deform_length": deform_lengths(rig, limb_deform_bones(rig, found)),
        "pose": points(rig, [b.name for b in rig.pose.bones]),
    }
    if any(s["operator"] == "rigify_limb_ik2fk" for s in found):
        result.update(snaps(rig, found, settings))
    reset(rig)
    return result


def worst_distance(first: dict, second: dict) -> float:
    return max(((first[name] - second[name]).length for name in first), default=0.0)


result: dict = {}
for name in METARIGS:
    print(f"METARIG {name}", flush=True)
    start = time.perf_counter()
    rig = generate(name)
    seconds = time.perf_counter() - start
    found = snap_operators(rig)
    settings = sorted({s["prop_bone"] for s in found if s["operator"] == "rigify_limb_ik2fk"})
    set_all(rig, settings, "IK_FK", 0.0)
    set_all(rig, settings, "IK_Stretch", 0.0)
    set_all(rig, settings, "pole_vector", True)  # as the operator sets it: both IKs bend to the pole
    keep_basis(rig)
    rest = points(rig, [b.name for b in rig.pose.bones])
    native = measure(rig, found, settings)
    before = rig_state(rig)
    with bpy.context.temp_override(active_object=rig, object=rig):
        try:
            operator = list(bpy.ops.pose.two_bone_ik_rigify_limbs())
        except RuntimeError as error:
            operator = [str(error)]
    bpy.context.view_layer.update()
    chains = rig.two_bone_ik.chains
    keep_basis(rig)
    kept = [b.name for b in rig.pose.bones if not b.name.startswith("MCH-IK-")]
    entry = {
        "seconds": seconds,
        "operator": operator,
        "limbs": len([s for s in found if s["operator"] == "rigify_limb_ik2fk"]),
        "chains": {c.name: [c.upper_bone, c.target_bone, c.pole_bone, c.state, c.status] for c in chains},
        "rest_moved": worst_distance({name: rest[name] for name in points(rig, kept)}, points(rig, kept)),
        "native": {key: value for key, value in native.items() if key != "pose"},
    }
    if len(chains):
        owned = {bone for c in chains for bone in (c.upper_bone, c.lower_bone, c.target_bone)}
        after = rig_state(rig, owned)
        before_kept = [item for item in before if item[0] not in owned]
        entry["others_changed"] = sorted(set(map(str, after)) ^ set(map(str, before_kept)))
        ours = measure(rig, found, settings)
        entry["ours"] = {key: value for key, value in ours.items() if key != "pose"}
        reset(rig)
        move_controls(rig, found)
        obj = evaluated(rig)
        entry["end_miss"] = max(  # relative to the chain's length
            (obj.pose.bones[c.lower_bone].tail - obj.pose.bones[c.target_bone].head).length
            / (rig.data.bones[c.upper_bone].length + rig.data.bones[c.lower_bone].length)
            for c in chains
        )
        entry["states_moved"] = {c.name: c.state for c in chains}
        entry["reach_used"] = max(  # how far out the targets are, relative to the reach
            (obj.pose.bones[c.target_bone].head - obj.pose.bones[c.upper_bone].head).length
            / (rig.data.bones[c.upper_bone].length + rig.data.bones[c.lower_bone].length)
            for c in chains
        )
        reset(rig)
        with bpy.context.temp_override(active_object=rig, object=rig):
            entry["remove"] = list(bpy.ops.pose.two_bone_ik_remove(all_chains=True))
        bpy.context.view_layer.update()
        keep_basis(rig)
        removed = measure(rig, found, settings)
        entry["removed_pose"] = worst_distance(native["pose"], removed["pose"])
        entry["removed_changed"] = sorted(set(map(str, rig_state(rig))) ^ set(map(str, before)))
    result[name] = entry
    print(f"MEASURED {name}", flush=True)
print("RESULT " + json.dumps(result))
sys.stdout.flush()
# Rigify's callbacks would keep bpy alive past Python's shutdown, and bpy 4.2 would crash and 4.5
# hang at exit (docs/blender-4.2-exit-crash.md): undo what it registered.
for name in dir(bpy.types):
    cls = getattr(bpy.types, name)
    if isinstance(cls, type) and cls.__module__ == "builtins" and getattr(cls, "is_registered", False):
        bpy.utils.unregister_class(cls)  # the rigs' UI scripts
addon_utils.disable("rigify", default_set=True)
for name, module in list(sys.modules.items()):
    if name == "rigify" or name.startswith("rigify."):
        vars(module).clear()
