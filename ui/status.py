# SPDX-License-Identifier: GPL-3.0-or-later
"""How a chain's state reads at a glance: an icon and a short text (read-only, no drawing).

Branches on data only (the chain's state, shortfall cause and Enabled, from one
``shortfall.summary`` a draw); the status sentence is shown, never parsed. The panel and the list
draw from these; tests check every state.
"""

from __future__ import annotations

from typing import NamedTuple

import bpy

from ..chain import glance, shortfall


class ChainState(NamedTuple):
    """What a chain's reach indicator shows.

    kind: "DISABLED", "FAILED", "REST", or the chain's Shortfall Cause ("NONE" shows as
    "REACHABLE"; "TOO_FAR", "TOO_CLOSE", "INFLUENCE", "CONSTRAINTS", "SOFTNESS").
    icon: a Blender icon name.
    text: the sentence next to the icon.
    """

    kind: str
    icon: str
    text: str


# Shortfall Cause -> (kind, icon, sentence with {} for the distance)
_CAUSES = {
    "NONE": ("REACHABLE", "CHECKMARK", "Reachable"),
    "TOO_FAR": ("TOO_FAR", "CANCEL", "Out of reach by {}"),
    "TOO_CLOSE": ("TOO_CLOSE", "CANCEL", "Too close by {}"),
    "INFLUENCE": ("INFLUENCE", "INFO", "Influence keeps the end {} off the target"),
    "SOFTNESS": ("SOFTNESS", "INFO", "Softness keeps the end {} off the target"),
    "CONSTRAINTS": ("CONSTRAINTS", "ERROR", "Off target by {}"),
    "REST": ("REST", "ARMATURE_DATA", "Rest Position"),
    "NOT_SOLVED": ("FAILED", "ERROR", "Not solved"),
}


def length_text(context, value: float) -> str:
    """A length in the scene's units, as Blender writes them ("12 cm", "4.7 in")."""
    units = context.scene.unit_settings
    # Blender's unit formatting is float32: it shows a target 1e38 m away as "inf km".
    if units.system == "NONE" or not abs(value * units.scale_length) < 1e30:
        return f"{value:.3g}"
    return bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=3)


def chain_state(context, chain, summary: shortfall.Summary | None = None) -> ChainState:
    """The reach indicator of ``chain``: disabled; failed (the status says why); Rest Position;
    else what keeps the end off the target (nothing, out of reach, too close, influence, softness,
    other constraints), with the distance. ``summary``: the chain's, when the caller has it."""
    if not chain.enabled:
        return ChainState("DISABLED", "HIDE_ON", "Disabled")
    summary = summary or shortfall.summary(chain)
    status = summary.reading.status
    if status.state == "ERROR":
        return ChainState("FAILED", "ERROR", status.text)
    if status.state == "REST":
        return ChainState(*_CAUSES[status.state])
    kind, icon, text = _CAUSES[summary.cause]
    return ChainState(kind, icon, text.format(length_text(context, summary.shortfall)))


def row_icon(chain) -> str:
    """The chain list's icon, from where the chain is (glance.glance), never its status, which
    only the active chain's box works out: disabled; the armature in its Rest Position; a chain
    with nothing to read (no target, or one the status explains); its end on the target; off it."""
    if not chain.enabled:
        return "HIDE_ON"
    if chain.id_data.data.pose_position == "REST":
        return "ARMATURE_DATA"
    seen = glance.glance(chain)
    if seen is None:
        return "ERROR"
    return "CHECKMARK" if seen.on_target else "CANCEL"


def status_line(chain, summary: shortfall.Summary | None = None) -> tuple[str, str] | None:
    """(icon, sentence) for the chain's status under the indicator, or None when nothing applies:
    an info icon for a note (no pole) or the Rest Position, a warning icon for the rest. A
    failure's status is already the indicator's text. ``summary``: the chain's, when the caller
    has it."""
    status = (summary or shortfall.summary(chain)).reading.status
    if not chain.enabled or not status.text or status.state == "ERROR":
        return None
    return ("INFO" if status.state in ("NOTE", "REST") else "ERROR"), status.text
