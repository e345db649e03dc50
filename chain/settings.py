# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's animatable settings (influence, enabled, twist, softness) live as custom properties
of its lower bone, ``pose.bones["shin"]["IK Influence"]`` (network/layout.py, ``PROPERTIES``): the
drivers read them there, so their keys and drivers play in a Blender without the extension, and
the animation editors list their keys under the bone (docs/design.md).

The chain's properties of the same names are views of them: reading gives the bone's value, and
setting writes it and tags the armature (a custom property set from Python tags nothing). A chain
without a network yet keeps its values in its own storage, which the network copies when built;
a network of the earlier layout keeps them on its root bone under the setting's own name until Update
Mechanism moves them.
"""

from __future__ import annotations

import math

from ..network import health, layout, naming
from . import memo
from .bones import ChainError

DEFAULTS = {name: default for name, default, _, _ in layout.SETTINGS}


def _stored(chain):
    """The chain's own ID properties (Blender 5.0+ keeps registered properties apart from the
    user's custom properties, ``bl_system_properties_get``; before 5.0 they are the same)."""
    if hasattr(chain, "bl_system_properties_get"):
        return chain.bl_system_properties_get(do_create=True)
    return chain


def _named_holder(chain):
    """(pose bone, {setting: property name}) where the settings of a chain on these bones are,
    whichever chain's they are: the lower bone, or a network root bone (the earlier layout); (None, {}) when
    neither holds them."""
    obj = chain.id_data
    if obj.pose is None:
        return None, {}
    lower = obj.pose.bones.get(chain.lower_bone) if chain.lower_bone else None
    if lower is not None and layout.PROPERTIES["influence"] in lower:
        return lower, layout.PROPERTIES
    root = obj.pose.bones.get(naming.chain_parts(chain).root)
    if root is not None and "influence" in root:
        return root, {name: name for name in DEFAULTS}
    return None, {}


def _sharing(chain) -> str:
    """health.sharing, its walk of the chains made once per draw of the interface."""
    obj = chain.id_data
    return health.sharing(
        obj, chain, memo.per_draw(("first users", obj.session_uid), lambda: health.first_users(obj))
    )


def holder(chain):
    """(pose bone, {setting: property name}) holding the chain's settings (:func:`_named_holder`),
    or (None, {}) when the network is not built or the bones are an earlier chain's."""
    bone, keys = _named_holder(chain)
    if bone is None or _sharing(chain):
        return None, {}  # a chain on an earlier chain's bones has no network of its own
    return bone, keys


def path(chain, name: str) -> tuple[object, str]:
    """(owner, data path) to key or drive setting ``name``: the lower bone and
    ``'["IK Influence"]'``, or the chain itself and ``name`` when the network is not built."""
    bone, keys = holder(chain)
    key = keys.get(name)
    return (bone, f'["{key}"]') if bone is not None and key in bone else (chain, name)


def _value(chain, bone, key: str | None, name: str) -> float:
    if bone is not None and key in bone:
        return layout.number(bone[key])
    stored = _stored(chain).get(name)
    return layout.number(stored) if stored is not None else DEFAULTS[name]


def value(chain, name: str) -> float:
    bone, keys = _named_holder(chain)
    # (Whose bone it is matters only when it holds the setting: finding that walks the chains.)
    if bone is not None and keys.get(name) in bone and _sharing(chain):
        bone = None
    return _value(chain, bone, keys.get(name), name)


def values(chain) -> dict[str, float]:
    """Every setting of the chain by name (the holder found once: finding it walks the chains)."""
    bone, keys = holder(chain)
    return {name: _value(chain, bone, keys.get(name), name) for name in DEFAULTS}


def checked(chain) -> dict[str, float]:
    """:func:`values`, or ChainError naming the first setting that is not a number."""
    numbers = values(chain)
    name = next((name for name, number in numbers.items() if not math.isfinite(number)), "")
    if name:
        raise ChainError(f"{name.capitalize()} is not a number: set it")
    return numbers


def set_value(chain, name: str, number: float) -> None:
    number = float(number)
    _stored(chain)[name] = number
    bone, keys = holder(chain)
    key = keys.get(name)
    if bone is not None and key in bone:
        # Enabled is a boolean custom property; the others floats.
        stored = number > 0.0 if isinstance(bone[key], bool) else number
        now = layout.number(bone[key])
        if not (bone[key] == stored or (math.isnan(number) and math.isnan(now))):
            layout.set_number(bone, key, stored)
            chain.id_data.update_tag()


def getter(name: str):
    return lambda chain: value(chain, name)


def setter(name: str):
    return lambda chain, number: set_value(chain, name, number)
