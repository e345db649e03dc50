# SPDX-License-Identifier: GPL-3.0-or-later
"""Each static rule finds what it should: one table of examples, a rule, a shipped file's name, a
source and whether the rule must flag it (the rules: test_module_rules.py, test_house_rules.py,
test_edge_rules.py)."""

import ast

import pytest
import test_edge_rules
import test_house_rules
import test_module_rules

# The modules the module-name rule knows of in its examples.
FILES = {"network/build.py", "network/layout.py", "network/__init__.py", "chain/reading.py"}
RULES = {
    "facade": test_module_rules.passed_on,
    "module name": lambda name, tree: test_module_rules.disguised(name, tree, FILES),
    "layer": lambda name, tree: test_house_rules.layer_violations([(name, tree)]),
    "edge": lambda name, tree: test_edge_rules.misplaced([(name, tree)], test_edge_rules.written_names()),
}
EXAMPLES = [
    ("facade", "network/build.py", "from .layout import PREFIX  # noqa: F401\n", True),
    ("facade", "network/build.py", "from .layout import PREFIX\nname = PREFIX + 'x'\n", False),
    ("facade", "network/build.py", "from .layout import PREFIX as P\nP\n", False),
    ("facade", "network/__init__.py", "from .layout import PREFIX\n__all__ = ['PREFIX']\n", False),
    ("facade", "network/__init__.py", "from .layout import PREFIX, parts\n__all__ = ['PREFIX']\n", True),
    ("facade", "network/build.py", "import math\n", False),  # not the extension's: ruff's business
    ("module name", "chain/reading.py", "from ..network import build as network\n", True),
    ("module name", "chain/reading.py", "from ..network import layout as build\n", True),
    ("module name", "chain/reading.py", "from ..network import build\n", False),
    ("module name", "chain/reading.py", "from ..network import build as network_build\n", False),
    ("module name", "chain/reading.py", "from ..network.layout import parts as network\n", False),  # a name
    ("layer", "network/build.py", "from ..chain.status import REST\n", True),
    ("layer", "network/build.py", "from ..compat import animation_fcurves\n", False),
    ("layer", "chain/reading.py", "from ..network import build\n", False),
    ("layer", "chain/upgrade.py", "from .. import compat\n", False),
    ("layer", "animation/bake.py", "from ..operators import common\n", True),
    ("layer", "solver/scalar.py", "from .. import compat\n", True),
    ("edge", "network/layout.py", 'CONTROLS_CONSTRAINT = "Two-Bone IK Controls"\n', True),
    ("edge", "network/spec.py", 'CONTROLS = "Two-Bone IK Controls"\n', False),
    ("edge", "chain/bones.py", 'bone.constraints.get("Two-Bone IK End Rotation")\n', True),
    ("edge", "chain/bones.py", 'ok = constraint.name == "Two-Bone IK End Rotation"\n', True),
    ("edge", "chain/bones.py", 'x = f"MCH-IK-{lower}"\n', True),
    ("edge", "chain/bones.py", 'label = "Two-Bone IK End Rotation is on"\n', False),
    ("edge", "chain/chains.py", "name.startswith(layout.PREFIX)\n", True),
    ("edge", "network/naming.py", "name.startswith(PREFIX)\n", False),
    ("edge", "chain/sources.py", "found = naming.PREFIX + name\n", True),
    ("edge", "network/health.py", "from .layout import end_bone_name\n", True),
    ("edge", "network/health.py", "from .outputs import end_bone_name\n", False),
    ("edge", "network/outputs.py", "def lower_space(lower): return lower\n", False),
    ("edge", "network/build.py", "space = lower_space(bone)\n", True),
    ("edge", "network/build.py", "space = outputs.lower_space(bone)\n", False),
    ("edge", "network/build.py", "space = layout.lower_space(bone)\n", True),
]


@pytest.mark.parametrize(("rule", "name", "source", "wrong"), EXAMPLES)
def test_each_rule_finds_what_it_should(rule, name, source, wrong):
    assert bool(RULES[rule](name, ast.parse(source))) == wrong
