"""The code cites the project's own docs, in one form, and only pages and sections that exist.

The form is ``(docs: <page>, "<section>")`` (docs: design, "Citing the docs"): ``<page>`` is a page
of ``docs/`` by its file name, without ``.md`` and with spaces for hyphens; ``<section>`` one of its
headings, or the part of a heading before a colon. ``test_nothing_cites_a_document_outside_the_repository``
refuses what a reader of a clone cannot follow: the design notes and the contract kept outside the
repository, their numbered sections, and work items by number.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

CITING = (ROOT / "litestar_listing", DOCS, ROOT / "noxfile.py")
"""Where citations of the docs are checked: the package, the docs' own example code, nox."""

SCANNED = ("litestar_listing", "tests", "benchmarks", "scripts", "docs", "noxfile.py", "README.md")
"""Where no citation of a document outside the repository may appear."""

SECTION_SIGN = "\N{SECTION SIGN}"
OUTSIDE = re.compile(
    "|".join(
        (
            r"\bDESIGN\.md\b",  # the design notes kept outside the repository
            r"listing-interface\.md",  # the contract kept outside it
            r"\bspec\s*" + SECTION_SIGN,
            SECTION_SIGN + r"\s*[0-9]",
            r"\b[Ii]ssues?\s+#?[0-9]",  # a work item by its number
        )
    )
)
"""What a reader of the repository cannot follow. Written so that this module does not match it."""

_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")

_START = re.compile(r"(?:(?<=\()|(?<=; ))docs:\s*")
"""Where a citation starts: right after an opening parenthesis, or after ``; `` inside one."""
_LOOSE = re.compile(r"\bdocs:\s")
"""Any ``docs:``: each must start a citation, so that a citation in another form is not missed."""
_CITE = re.compile(r'\s*(?P<page>[a-z][a-z ]*[a-z])\s*(?:,\s*"(?P<section>[^"]+)")?\s*(?P<end>[;)])')
"""One ``<page>[, "<section>"]``, then ``;`` (another follows) or ``)`` (the citation ends)."""
_CONTINUED = re.compile(r"[ \t]*\n[ \t]*(?:#[ \t]*)?")
"""A line break in a docstring or between comment lines: a citation may wrap there."""


def _headings(text: str, *, rst: bool) -> set[str]:
    """Every heading of a page as a citation may name it: word for word, and before its first colon."""
    found: list[str] = []
    lines = text.splitlines()
    fence = ""
    for number, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1).startswith(fence):
                fence = ""
            continue
        if opened and not rst:
            fence = opened.group(1)
            continue
        if rst:
            below = lines[number + 1] if number + 1 < len(lines) else ""
            if line.strip() and _RST_UNDERLINE.match(below) and len(below.strip()) >= len(line.strip()):
                found.append(line.strip())
            continue
        heading = _MD_HEADING.match(line)
        if heading:
            found.append(heading.group(2))
    names: set[str] = set()
    for title in found:
        plain = " ".join(title.replace("`", "").split())
        names.add(plain)
        names.add(plain.split(":", 1)[0].strip())
    return names


def _pages() -> dict[str, set[str]]:
    """Every page of the docs by its citation name, with its headings."""
    pages: dict[str, set[str]] = {}
    for path in sorted((*DOCS.rglob("*.md"), *DOCS.rglob("*.rst"))):
        if "examples" in path.relative_to(DOCS).parts:
            continue
        name = path.stem.replace("-", " ")
        assert name not in pages, f"two pages are cited as {name!r}: give one another file name"
        pages[name] = _headings(path.read_text(encoding="utf-8"), rst=path.suffix == ".rst")
    return pages


def _citing_files() -> list[Path]:
    files: list[Path] = []
    for place in CITING:
        files.extend([place] if place.is_file() else sorted(place.rglob("*.py")))
    return files


def _citations(text: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """The ``(page, section)`` pairs cited in ``text``, and the citations that are not in the form."""
    joined = _CONTINUED.sub(" ", text)
    cited: list[tuple[str, str | None]] = []
    malformed: list[str] = []
    for loose in _LOOSE.finditer(joined):
        start = _START.match(joined, loose.start())
        if start is None:
            malformed.append(joined[max(0, loose.start() - 30) : loose.end() + 50])
            continue
        position = start.end()
        while True:
            match = _CITE.match(joined, position)
            if match is None:
                malformed.append(joined[max(0, loose.start() - 30) : loose.end() + 50])
                break
            section = match.group("section")
            cited.append((match.group("page"), None if section is None else " ".join(section.split())))
            position = match.end()
            if match.group("end") == ")":
                break
    return cited, malformed


def test_pages_have_headings_a_citation_can_name() -> None:
    pages = _pages()
    assert {"design", "query language", "scoping", "backends", "reference"} <= set(pages)
    assert {"Glossary", "Citing the docs", "Errors", "NULL"} <= pages["design"]
    assert "Row policies" in pages["scoping"]  # "Row policies: scoping that follows every path"
    assert "Keyset continuation" in pages["extensions"]  # "Keyset continuation: `keyset=True`"


def test_the_citation_form_reads_as_documented() -> None:
    text = '''
    """A list (docs: query language, "Relation paths"; scoping,
        "Row policies") and a comment:
    """
    # ordered (measured; docs: benchmarks) and (docs: design,
    # "Beanie (MongoDB)") but not docs: "Scaling out".
    '''
    cited, malformed = _citations(text)
    assert cited == [
        ("query language", "Relation paths"),
        ("scoping", "Row policies"),
        ("benchmarks", None),
        ("design", "Beanie (MongoDB)"),
    ]
    assert len(malformed) == 1
    assert 'docs: "Scaling out"' in malformed[0]


def test_every_citation_names_a_page_and_a_heading_that_exist() -> None:
    pages = _pages()
    problems: list[str] = []
    for path in _citing_files():
        cited, malformed = _citations(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        problems.extend(f'{where}: not in the form (docs: <page>, "<section>"): ...{text}...' for text in malformed)
        for page, section in cited:
            if page not in pages:
                problems.append(f"{where}: no page {page!r} in docs/ (pages: {', '.join(sorted(pages))})")
            elif section is not None and section not in pages[page]:
                problems.append(f"{where}: the page {page!r} has no heading {section!r}")
    assert not problems, "\n".join(problems)


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        place = ROOT / name
        if place.is_file():
            files.append(place)
        elif place.is_dir():
            files.extend(
                path
                for path in sorted(place.rglob("*"))
                if path.is_file() and "__pycache__" not in path.parts and path.suffix not in {".png", ".pyc"}
            )
    return files


@pytest.mark.parametrize("text", ["DESIGN" + ".md", f"spec {SECTION_SIGN}4.2", f"{SECTION_SIGN}7", "iss" + "ue 13"])
def test_the_pattern_finds_what_a_reader_cannot_follow(text: str) -> None:
    assert OUTSIDE.search(f"see ({text}) for why") is not None


def test_nothing_cites_a_document_outside_the_repository() -> None:
    found: list[str] = []
    for path in _scanned_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "cite the project's docs instead (docs: design, 'Citing the docs'):\n" + "\n".join(found)
