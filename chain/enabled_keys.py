# SPDX-License-Identifier: GPL-3.0-or-later
"""Keys on a chain's Enabled step, as a constraint's switch does (docs/design.md, "Enabled's keys").

Blender keys a boolean with constant interpolation, and plays a boolean's F-Curve as steps whatever
interpolation its keys have (the F-Curve's discrete flag), on every supported version but 4.4: there
the keys of every boolean get the preferences' interpolation (Bezier) and no discrete flag, and a
boolean reads on only where its F-Curve is 1, so a chain keyed on at frame 1 and off at frame 11
turned off from frame 2. Where that is so (:data:`.compat.BOOLEAN_KEYS_STEP` false), the handlers
(chain/handlers.py) make the keys of each chain's Enabled constant when they appear; elsewhere nothing
of this runs.
"""

from __future__ import annotations

from ..compat import animation_fcurves
from . import settings


def enabled_paths(obj) -> set[str]:
    """The data paths (from armature object ``obj``) of its chains' Enabled: the lower bone's custom
    property (chain/settings.py), or the chain's own property for a chain without a network."""
    paths = set()
    for chain in obj.two_bone_ik.chains:
        owner, name = settings.path(chain, "enabled")
        paths.add(owner.path_from_id(name))
    return paths


def step_enabled_keys(obj) -> int:
    """Give every key on the Enabled of ``obj``'s chains constant interpolation, in its action and in
    each NLA strip's; returns how many keys changed (0 when all were constant already)."""
    if obj.type != "ARMATURE" or obj.animation_data is None or not obj.two_bone_ik.chains:
        return 0
    paths = enabled_paths(obj)
    changed = 0
    for fcurves in animation_fcurves(obj)[1:]:  # [0] is the drivers
        for path in paths:
            fcurve = fcurves.find(path)
            if fcurve is None:
                continue
            for key in fcurve.keyframe_points:
                if key.interpolation != "CONSTANT":
                    key.interpolation = "CONSTANT"
                    changed += 1
    return changed


def step_all(objects) -> int:
    """:func:`step_enabled_keys` on every local armature in ``objects``; returns the keys changed."""
    return sum(step_enabled_keys(obj) for obj in objects if obj.type == "ARMATURE" and obj.library is None)
