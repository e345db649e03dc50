# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's animatable settings (influence, enabled, twist, softness) live as custom properties
of its network's root bone, ``pose.bones["MCH-IK-<lower>-root"]["influence"]``: the drivers read
them there, so their keys and drivers play in a Blender without the extension (docs/design.md).

The chain's properties of the same names are views of them: reading gives the bone's value, and
setting writes it and tags the armature (a custom property set from Python tags nothing). A chain
without a network yet keeps its values in its own storage, which the network copies when built.
"""

from __future__ import annotations

import math

from ..network import build as network
from .bones import ChainError

DEFAULTS = {name: default for name, default, _, _ in network.SETTINGS}


def _stored(chain):
    """The chain's own ID properties (Blender 5.0+ keeps registered properties apart from the
    user's custom properties, ``bl_system_properties_get``; before 5.0 they are the same)."""
    if hasattr(chain, "bl_system_properties_get"):
        return chain.bl_system_properties_get(do_create=True)
    return chain


def _named_root(chain):
    """The pose bone named as the chain's root bone, whichever chain's it is (None when absent)."""
    obj = chain.id_data
    return (
        None
        if obj.pose is None
        else obj.pose.bones.get(network.parts(chain.upper_bone, chain.lower_bone).root)
    )


def root_bone(chain):
    """The pose bone holding the chain's settings, or None when the network is not built."""
    bone = _named_root(chain)
    if bone is None or network.sharing(chain.id_data, chain):
        return None  # a chain on an earlier chain's bones has no network of its own
    return bone


def path(chain, name: str) -> tuple[object, str]:
    """(owner, data path) to key or drive setting ``name``: the root bone and ``'["name"]'``, or
    the chain itself and ``name`` when the network is not built."""
    bone = root_bone(chain)
    return (bone, f'["{name}"]') if bone is not None and name in bone else (chain, name)


def _value(chain, bone, name: str) -> float:
    if bone is not None and name in bone:
        return float(bone[name])
    stored = _stored(chain).get(name)
    return float(stored) if stored is not None else DEFAULTS[name]


def value(chain, name: str) -> float:
    bone = _named_root(chain)
    # (Whose root it is matters only when it holds the setting: finding that walks the chains.)
    if bone is not None and name in bone and network.sharing(chain.id_data, chain):
        bone = None
    return _value(chain, bone, name)


def values(chain) -> dict[str, float]:
    """Every setting of the chain by name (the root bone found once: finding it walks the
    chains)."""
    bone = root_bone(chain)
    return {name: _value(chain, bone, name) for name in DEFAULTS}


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
    bone = root_bone(chain)
    if bone is not None and name in bone:
        # Enabled is a boolean custom property; the others floats.
        stored = number > 0.0 if isinstance(bone[name], bool) else number
        if not (bone[name] == stored or (math.isnan(number) and math.isnan(bone[name]))):
            bone[name] = stored
            chain.id_data.update_tag()


def getter(name: str):
    return lambda chain: value(chain, name)


def setter(name: str):
    return lambda chain, number: set_value(chain, name, number)
