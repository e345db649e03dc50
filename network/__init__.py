# SPDX-License-Identifier: GPL-3.0-or-later
"""The native network: each chain as bones, Blender constraints and simple-expression drivers that
Blender evaluates itself, with no Python per update (docs/design.md, "The native network")."""
