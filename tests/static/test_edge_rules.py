# SPDX-License-Identifier: GPL-3.0-or-later
"""What the chain puts on the rig, and the names it gives bones, each written in one module (checked
on the shipped source, no Blender needed):

- The chain's constraints on its own bones are rows of network/spec.py (``OUTPUTS``): no other
  module names one as a string of its own (a constant, a comparison, a look-up).
- Which bones carry them, and in which space, is network/outputs.py's alone (:data:`OWNERS`).
- Bone names are built and read back by network/naming.py alone: no other module reads the
  network's name prefix.
"""

import ast

from shipped import network_spec, parsed

SPEC = "network/spec.py"
# Names that only one shipped module defines: (that module, whether others may read it, through
# the module's name: ``outputs.lower_space``). The network's name prefix is read by naming.py alone.
OWNERS = {
    "end_bone_name": ("network/outputs.py", True),
    "lower_space": ("network/outputs.py", True),
    "PREFIX": ("network/naming.py", False),
}
# Calls whose string argument names a constraint or a bone.
LOOKUPS = {"get", "find", "new", "remove", "startswith", "removeprefix"}


def _naming_strings(tree: ast.Module) -> list[ast.Constant]:
    """String constants of ``tree`` that name something: a module-level constant's value, an operand
    of a comparison, an argument of a look-up (:data:`LOOKUPS`), a subscript's key, or a part of an
    f-string."""
    found: list[ast.AST] = []
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            found.append(statement.value)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            found += [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") in LOOKUPS:
            found += node.args
        elif isinstance(node, ast.Subscript):
            found.append(node.slice)
        elif isinstance(node, ast.JoinedStr):
            found += node.values
    return [named for named in found if isinstance(named, ast.Constant) and isinstance(named.value, str)]


def misplaced(files: list[tuple[str, ast.Module]], written: set[str]) -> list[str]:
    """Where a module names an output's constraint (``written``) that network/spec.py does not, or the
    network's name prefix that network/naming.py does not, or defines, imports or reads a name of
    :data:`OWNERS` but through the module that owns it."""
    found = []
    for name, tree in files:
        owners = {SPEC, OWNERS["PREFIX"][0]}
        found += [
            f"{name}:{node.lineno} writes '{node.value}'"
            for node in _naming_strings(tree)
            if node.value in written and name not in owners
        ]
        found += [f"{name}:{line} {what}" for line, what in _borrowed(name, tree)]
    return found


def _stem(used: str) -> str:
    """The module name of the owner of ``used`` (``outputs`` for network/outputs.py)."""
    return OWNERS[used][0].rsplit("/", 1)[-1].removesuffix(".py")


def _borrowed(name: str, tree: ast.Module) -> list[tuple[int, str]]:
    """(line, what) where module ``name`` defines, imports or reads a name of :data:`OWNERS` that
    another module owns, other than as ``<owner's module>.<name>`` where reading is allowed."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in OWNERS:
            used, how = node.name, "defines"
        elif isinstance(node, ast.Name) and node.id in OWNERS:
            used, how = node.id, "reads"
        elif isinstance(node, ast.ImportFrom):
            source = (node.module or "").rsplit(".", 1)[-1]
            used = next((a.name for a in node.names if a.name in OWNERS and source != _stem(a.name)), "")
            how = "imports"
        elif isinstance(node, ast.Attribute) and node.attr in OWNERS:
            readable = OWNERS[node.attr][1]
            through = getattr(node.value, "id", "")
            used = "" if readable and through == _stem(node.attr) else node.attr
            how = "reads"
        else:
            continue
        if used and OWNERS[used][0] != name:
            found.append((getattr(node, "lineno", 0), f"{how} {used}, which is {OWNERS[used][0]}'s"))
    return found


def written_names() -> set[str]:
    """The constraint names of the spec's outputs, and the network bones' name prefix."""
    return {output.name for output in network_spec().OUTPUTS} | {"MCH-IK-"}


def test_the_chains_edge_and_its_names_are_written_once():
    assert misplaced(parsed(), written_names()) == []
