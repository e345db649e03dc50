# SPDX-License-Identifier: GPL-3.0-or-later
"""The documents' links hold: every relative Markdown link (and image) in README.md and docs/*.md
names a file of the repository, and every ``#anchor`` a heading of the file it points to (GitHub's
anchors: the heading in lower case, punctuation but ``-`` and ``_`` dropped, spaces made ``-``)."""

import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# [text](target) and ![alt](target); the target ends at the first space or closing parenthesis.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def prose(text: str) -> str:
    """The text outside code blocks and code spans, where links are links."""
    return CODE.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: pathlib.Path) -> set[str]:
    """Every heading's anchor in a Markdown file (a repeated heading gets -1, -2 ...)."""
    seen: dict[str, int] = {}
    found = set()
    for match in re.finditer(r"^#{1,6} (.+?)\s*#*$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M):
        name = anchor(match.group(1))
        count = seen.get(name, 0)
        seen[name] = count + 1
        found.add(name if count == 0 else f"{name}-{count}")
    return found


def relative_links(path: pathlib.Path) -> list[str]:
    text = prose(path.read_text(encoding="utf-8"))
    return [
        target
        for target in LINK.findall(text)
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto: ...
    ]


def test_the_documents_are_found():
    assert (REPO / "README.md") in DOCUMENTS
    assert len(DOCUMENTS) >= 5


def test_the_anchor_rule():
    assert anchor("Join (Ctrl+J)") == "join-ctrlj"
    assert (
        anchor("The command line: `blender --command two_bone_ik`")
        == "the-command-line-blender---command-two_bone_ik"
    )
    assert anchor("Blender 4.2 and 4.5 on exit") == "blender-42-and-45-on-exit"
    assert anchor("Statuses: every problem is a sentence, never an exception") == (
        "statuses-every-problem-is-a-sentence-never-an-exception"
    )


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(REPO).as_posix())
def test_relative_links_resolve(document: pathlib.Path):
    broken = []
    for target in relative_links(document):
        file_part, _, fragment = target.partition("#")
        linked = (document.parent / file_part).resolve() if file_part else document
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no heading #{fragment} in {linked.relative_to(REPO)}")
    assert not broken, "\n".join(broken)
