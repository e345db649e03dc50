# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain: its data on the armature object (properties, settings), setting it up (chains), its
readouts (glance, sources, solve, reading, causes, shortfall, status), pose math, and the upgrade
of files saved earlier (upgrade, handlers).

Its modules that register something (properties, handlers) are wired by the package root.
"""
