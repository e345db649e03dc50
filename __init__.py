# SPDX-License-Identifier: GPL-3.0-or-later
"""Two-Bone IK: analytic two-bone IK chains for Blender (extension entry point; wiring only)."""


def register() -> None:
    pass


def unregister() -> None:
    pass
