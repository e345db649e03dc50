# SPDX-License-Identifier: GPL-3.0-or-later
"""What one depsgraph evaluation solves: the chains of every armature in the evaluated scene, in
dependency order (dependency.py), planned once and kept until the relations change.

"In the scene" means an object of the view layer (hidden ones included), of a collection instanced
by one of them (at any depth), or of a background set scene. Linked armatures are left out (their
pose belongs to the library); their library overrides are in.
"""

from __future__ import annotations

from . import batch, dependency

_plans: dict[tuple[int, str], dependency.Plan] = {}


def invalidate() -> None:
    """Plan again on the next update: a chain's bones, target, pole or mechanism changed, or the
    file changed under the cached references (load, undo)."""
    _plans.clear()


def members(depsgraph) -> dict[int, object]:
    """Every object in the evaluated scene, by session_uid (original objects)."""
    found = {obj.session_uid: obj for obj in depsgraph.view_layer.objects}
    scene, scenes = depsgraph.scene.background_set, set()
    while scene is not None and scene.session_uid not in scenes:
        scenes.add(scene.session_uid)
        found.update((obj.session_uid, obj) for obj in scene.objects)
        scene = scene.background_set
    pending = [obj for obj in found.values() if obj.instance_type == "COLLECTION" and obj.instance_collection]
    collections = set()
    while pending:
        collection = pending.pop().instance_collection
        if collection.session_uid in collections:
            continue
        collections.add(collection.session_uid)
        for obj in collection.all_objects:
            if obj.session_uid not in found:
                found[obj.session_uid] = obj
                if obj.instance_type == "COLLECTION" and obj.instance_collection:
                    pending.append(obj)
    return found


def _armatures(objects) -> list:
    return [obj for obj in objects if obj.type == "ARMATURE" and obj.library is None and obj.pose is not None]


def plan(depsgraph, relations_changed: bool = False, recount: bool = False) -> dependency.Plan:
    """The plan for ``depsgraph``'s scene and view layer: cached, rebuilt when ``relations_changed``
    (the depsgraph updated the scene's relations), after :func:`invalidate`, or when stale.

    ``recount``: also rebuild when the view layer's object count changed (for frame changes, which
    report no relations update; counting costs time in proportion to the scene's size).
    """
    key = (depsgraph.scene.session_uid, depsgraph.view_layer.name)
    cached = None if relations_changed else _plans.get(key)
    if cached is not None:
        try:
            stale = dependency.stale(cached)
            if not stale and recount:
                stale = len(depsgraph.view_layer.objects) != cached.scene_size
            if not stale:
                return cached
        except ReferenceError:  # an object was deleted
            pass
    objects = members(depsgraph)
    layer = {obj.session_uid for obj in depsgraph.view_layer.objects}
    plan = dependency.build(_armatures(objects.values()), set(objects), layer, depsgraph.scene.name)
    batched, steps = batch.prepare(plan.steps)
    plan = plan._replace(batch=batched, steps=steps)
    _plans[key] = plan
    return plan
