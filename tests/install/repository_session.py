# SPDX-License-Identifier: GPL-3.0-or-later
"""One Blender session installing the extension from a studio repository; run by test_repository.py.

Adds the repository ``tools/build.py --repository`` made as a remote repository by its ``file://``
URL, in the empty user folder BLENDER_USER_RESOURCES names, with online access on; syncs it,
installs and enables the extension from it, and solves a leg. Writes what happened to a JSON report.

Usage: python repository_session.py INDEX_JSON REPORT_JSON
"""

from __future__ import annotations

import json
import pathlib
import sys
import traceback
from typing import Any

INDEX = pathlib.Path(sys.argv[1]).resolve()
REPORT = pathlib.Path(sys.argv[2])

import bpy  # noqa: E402

report: dict[str, Any] = {"blender": bpy.app.version_string}


def names(operator_result: Any) -> list[str]:
    """An operator's result set ({'FINISHED'}) as a sorted list (JSON has no sets)."""
    return sorted(operator_result)


try:
    preferences = bpy.context.preferences
    preferences.system.use_online_access = True
    repos = preferences.extensions.repos
    repo = repos.new(name="Studio", module="studio", remote_url=INDEX.as_uri())
    index = list(repos).index(repo)
    report["sync"] = names(bpy.ops.extensions.repo_sync(repo_index=index))
    report["install"] = names(
        bpy.ops.extensions.package_install(repo_index=index, pkg_id="two_bone_ik", enable_on_install=True)
    )
    module = "bl_ext.studio.two_bone_ik"
    report["enabled"] = module in {addon.module for addon in preferences.addons}
    report["installed_from"] = sys.modules[module].__file__

    # A leg whose chain is made by script, then solved.
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    data = bpy.data.armatures.new("Leg")
    leg = bpy.data.objects.new("Leg", data)
    scene.collection.objects.link(leg)
    bpy.context.view_layer.objects.active = leg
    bpy.ops.object.mode_set(mode="EDIT")
    thigh = data.edit_bones.new("thigh")
    thigh.head, thigh.tail = (0, 0, 0), (0, 1, 0)
    shin = data.edit_bones.new("shin")
    shin.head, shin.tail, shin.parent, shin.use_connect = (0, 1, 0), (0, 2, 0), thigh, True
    bpy.ops.object.mode_set(mode="OBJECT")
    target = bpy.data.objects.new("Target", None)
    target.location = (1.2, 0.0, 0.5)
    pole = bpy.data.objects.new("Pole", None)
    pole.location = (1.2, 0.5, 0.5)
    scene.collection.objects.link(target)
    scene.collection.objects.link(pole)
    chain = leg.two_bone_ik.chains.add()
    chain.name, chain.upper_bone, chain.lower_bone, chain.target, chain.pole = (
        "shin",
        "thigh",
        "shin",
        target,
        pole,
    )
    report["mechanism"] = names(bpy.ops.pose.two_bone_ik_update_mechanism())
    bpy.context.view_layer.update()
    evaluated = leg.evaluated_get(bpy.context.evaluated_depsgraph_get())
    end = evaluated.matrix_world @ evaluated.pose.bones["shin"].tail
    report["end"] = [end.x, end.y, end.z]
    report["status"] = leg.two_bone_ik.chains[0].status
except Exception:
    report["error"] = traceback.format_exc()
REPORT.write_text(json.dumps(report), encoding="utf-8")
print("REPORT WRITTEN")
