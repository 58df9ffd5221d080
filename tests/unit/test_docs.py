"""The README leads and the docs hold the rest: the README stays short, starts with the two commands
(.ci/run runs its test command), and every relative link in it, in infra/README.md and in docs/ reaches
a file, and a heading when it names one (GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from baton.workflows.source_tree import source_tree

ROOT = source_tree().root
README_MAX_LINES = 350
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "infra" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    prose = FENCE.sub("", document.read_text())
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", prose, re.MULTILINE)}


def _relative_links(document: Path) -> list[str]:
    prose = FENCE.sub("", document.read_text())
    return [t for t in LINK.findall(prose) if not re.match(r"[a-z]+:", t)]


def test_the_readme_stays_short() -> None:
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES}): move detail to docs/"


def test_the_readme_starts_with_the_two_commands_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in first_block.splitlines()] == ["make dev", "make test"]
    assert readme.index("```bash") < readme.index("\n## "), "the commands come before any section"
    assert "make test" in (ROOT / ".ci" / "run").read_text().splitlines()


def test_there_are_docs_to_lead_to() -> None:
    assert len(list((ROOT / "docs").glob("*.md"))) >= 4


def _broken_links(document: Path) -> list[str]:
    broken = []
    for target in _relative_links(document):
        path, _, fragment = target.partition("#")
        reached = (document.parent / path).resolve() if path else document
        if not reached.exists():
            broken.append(f"{target}: no such file")
        elif fragment and reached.suffix == ".md" and fragment not in _anchors(reached):
            broken.append(f"{target}: no heading #{fragment} in {reached.name}")
    return broken


@pytest.mark.parametrize("document", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_its_file_and_heading(document: Path) -> None:
    assert _broken_links(document) == [], document.relative_to(ROOT)


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    page = tmp_path / "a.md"
    page.write_text(
        "# A\n\n## The `real` heading, here\n\n[x](b.md) [y](a.md#the-real-heading-here) [z](#gone) "
        "[w](https://example.com/missing.md)\n\n```\n[in code](c.md)\n```\n"
    )
    assert _broken_links(page) == ["b.md: no such file", "#gone: no heading #gone in a.md"]
