# SPDX-License-Identifier: GPL-3.0-or-later
"""Panels and lists (draw code only reads)."""

from . import panel

register = panel.register
unregister = panel.unregister
