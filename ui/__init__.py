# SPDX-License-Identifier: GPL-3.0-or-later
"""Panels, lists, the Pose menu entry and the viewport overlay (draw code only reads).

Its modules (overlay, panel, menu) are wired by the package root.
"""
