# SPDX-License-Identifier: GPL-3.0-or-later
"""How a chain's state reads at a glance: an icon and a short text (read-only)."""

from __future__ import annotations

import bpy


def length_text(context, value: float) -> str:
    """A length in the scene's units ("0.12 m", "4.7 in")."""
    units = context.scene.unit_settings
    if units.system == "NONE":
        return f"{value:.3g}"
    return bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=3)


def chain_state(context, chain) -> tuple[str, str]:
    """(icon, text) for a chain: disabled, failed (its status), reachable, too far or too close."""
    if not chain.enabled:
        return "HIDE_ON", "Disabled"
    if chain.status and _is_failure(chain):
        return "ERROR", chain.status
    if chain.reachable:
        return "CHECKMARK", "Reachable"
    distance = length_text(context, chain.shortfall)
    if chain.too_close:
        return "CANCEL", f"Too close by {distance}"
    return "CANCEL", f"Out of reach by {distance}"


def _is_failure(chain) -> bool:
    # Failures leave the pose alone; warnings (no pole, pole on the line) still solve.
    return not (chain.status.startswith("No pole") or chain.status.startswith("Pole is on"))
