# SPDX-License-Identifier: GPL-3.0-or-later
"""Panels, lists, the Pose menu entry and the viewport overlay (draw code only reads)."""

import bpy

# Registered in this order (the overlay's toggle before the panel that shows it), unregistered in reverse.
register, unregister = bpy.utils.register_submodule_factory(__name__, ["overlay", "panel", "menu"])
