# SPDX-License-Identifier: GPL-3.0-or-later
"""The network's table in docs/how-it-works.md, made from network/spec.py (the docs' generator: a
test keeps the two equal, and prints the table to paste when they differ)."""


def _parent_text(bone) -> str:
    parent = f"`{_name(bone.parent)}`" if bone.parent else "the upper bone's parent"
    return parent + (", not inheriting rotation" if bone.inherit == "hinge" else "")


def _name(field: str) -> str:
    return {"upper": "MCH-IK-U", "lower": "MCH-IK-L"}.get(field, f"MCH-IK-L-{field}")


def _constraint_text(constraint) -> str:
    aimed = f"the chain's {constraint.source}" if constraint.source else f"`{_name(constraint.target)}`"
    space = ", in the root's space" if constraint.space == "CUSTOM" else ""
    driven = f", influence `{constraint.influence.rule}`" if constraint.influence else ""
    return f"{constraint.name}: {constraint.kind.replace('_', ' ').title()} of {aimed}{space}{driven}"


# The chain's own bones, by slot (network/spec.py, Output.slot).
SLOTS = {
    "upper": "`U` (chain bone)",
    "lower": "`L` (chain bone)",
    "end": "the end bone (End Rotation Target)",
}


def _output_text(output) -> str:
    aimed = f"`{_name(output.copies)}`" if output.copies else "the chain's " + " and ".join(output.sources)
    space = ", local where `L` inherits as Blender's defaults do" if output.space == "LOWER" else ""
    driven = f", influence `{output.influence.rule}`" if output.influence else ", muted"
    kind = "IK" if output.kind == "IK" else output.kind.replace("_", " ").title()
    return f"{output.name}: {kind} of {aimed}{space}{driven}"


def table(spec) -> str:
    """The network's bones of ``spec`` (network/spec.py) as a Markdown table, as
    ``docs/how-it-works.md`` shows them: bone, parent,
    constraints and drivers (with their :mod:`solver.expressions` rules), what it does. ``L`` is
    the lower bone's name, ``U`` the upper's."""
    rows = ["| bone | parent | constraints, drivers | what it does |", "|---|---|---|---|"]
    for bone in spec.NETWORK:
        parts = [_constraint_text(constraint) for constraint in bone.constraints]
        parts += [f"{driver.channel}[{driver.array_index}]: `{driver.rule}`" for driver in bone.drivers]
        rows.append(
            f"| `{_name(bone.field)}` | {_parent_text(bone)} | {'; '.join(parts) or '-'} | {bone.does} |"
        )
    moded = ", ".join(f"`{_name(field)}`" for field in spec.MODE_DRIVEN)
    rows.append(
        f"| {moded} | - | rotation_mode: a constant, the mode above | their Euler mode, put back "
        "when a tool sets another |"
    )
    for output in spec.OUTPUTS:
        rows.append(f"| {SLOTS[output.slot]} | - | {_output_text(output)} | {output.does} |")
    return "\n".join(rows)
