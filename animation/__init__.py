# SPDX-License-Identifier: GPL-3.0-or-later
"""The animation tools: Bake, Snap IK to FK and FK to IK, and the chain's result as channel values."""
