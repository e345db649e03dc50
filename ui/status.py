# SPDX-License-Identifier: GPL-3.0-or-later
"""How a chain's state reads at a glance: an icon and a short text (read-only, no drawing).

The panel and the list draw from these; tests check every state here.
"""

from __future__ import annotations

from typing import NamedTuple

import bpy

from ..driver.chains import OFF_TARGET_PREFIXES, WAITS, solved


class ChainState(NamedTuple):
    """What a chain's reach indicator shows.

    kind: one of "DISABLED", "FAILED", "REACHABLE", "TOO_FAR", "TOO_CLOSE", "OFF_TARGET", "WAITING".
    icon: a Blender icon name.
    text: the sentence next to the icon.
    """

    kind: str
    icon: str
    text: str


def length_text(context, value: float) -> str:
    """A length in the scene's units ("0.12 m", "4.7 in")."""
    units = context.scene.unit_settings
    # Blender's unit formatting is float32: it shows a target 1e38 m away as "inf km".
    if units.system == "NONE" or not abs(value * units.scale_length) < 1e30:
        return f"{value:.3g}"
    return bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=3)


def chain_state(context, chain) -> ChainState:
    """The reach indicator of ``chain``.

    Disabled; failed (the driver's status, the pose was left alone); off target (other constraints
    move the bones, the driver measured the evaluated miss); waiting (another chain moves its
    inputs through a constraint or driver, so it is one update late); reachable; too close or out
    of reach, with the distance the tip stops short by.
    """
    if not chain.enabled:
        return ChainState("DISABLED", "HIDE_ON", "Disabled")
    if not solved(chain.status):
        return ChainState("FAILED", "ERROR", chain.status)
    distance = length_text(context, chain.shortfall)
    if chain.status.startswith(OFF_TARGET_PREFIXES):
        return ChainState("OFF_TARGET", "ERROR", f"Off target by {distance}")
    if chain.status.startswith(WAITS):
        return ChainState("WAITING", "TIME", "One update late")
    if chain.reachable:
        return ChainState("REACHABLE", "CHECKMARK", "Reachable")
    if chain.too_close:
        return ChainState("TOO_CLOSE", "CANCEL", f"Too close by {distance}")
    return ChainState("TOO_FAR", "CANCEL", f"Out of reach by {distance}")


def status_line(chain) -> tuple[str, str] | None:
    """(icon, sentence) for the driver's status under the indicator, or None when nothing applies.

    A warning icon when the pole is (nearly) on the root-target line or other constraints move the
    bones, an info icon for "No pole". A failure's status is already the indicator's text.
    """
    if not chain.enabled or not chain.status or not solved(chain.status):
        return None
    if chain.status.startswith("No pole"):
        return "INFO", chain.status
    return "ERROR", chain.status
