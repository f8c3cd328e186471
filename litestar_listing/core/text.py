"""Text semantics shared by every backend: Unicode case-insensitivity and LIKE patterns.

Backends render these one way each (LIKE, GLOB, a regex) so the answers are the same everywhere.
"""

from __future__ import annotations

import enum
import functools
import re
import sys
from collections.abc import Iterable

__all__ = (
    "LIKE_ESCAPE",
    "LikePattern",
    "Wildcard",
    "case_variants",
    "caseless_regex",
    "contains_pattern",
    "fold_case",
    "parse_like",
)

LIKE_ESCAPE = "\\"
"""The escape character of client LIKE patterns and of every LIKE the backends render."""


@functools.cache
def _fold_table() -> dict[int, str]:
    # Per-character simple lowercase mapping: what PostgreSQL's lower() does on a UTF-8 ctype.
    # str.lower() alone differs in two places: it lowers U+0130 to two characters and applies the
    # context-dependent final sigma.
    table: dict[int, str] = {}
    for code in range(min(sys.maxunicode, 0x1F000)):
        char = chr(code)
        lowered = char.lower()
        if lowered != char:
            table[code] = lowered if len(lowered) == 1 else lowered[0]
    return table


def fold_case(text: str) -> str:
    """Lowercase ``text`` one character at a time by the Unicode simple lowercase mapping.

    This is the meaning of "case-insensitive" on every backend (docs: design, "Case and patterns"):
    ``fold_case("ÁLBUM") == "álbum"``. PostgreSQL's ``lower()`` on a UTF-8 database does the
    same; SQLite gets this function registered on each connection.
    """
    if text.isascii():
        return text.lower()
    return text.translate(_fold_table())


@functools.cache
def _case_variants() -> dict[str, str]:
    # folded character -> every character that folds to it, itself included, in code-point order.
    variants: dict[str, set[str]] = {}
    for code, folded in _fold_table().items():
        variants.setdefault(folded, {folded}).add(chr(code))
    return {folded: "".join(sorted(chars)) for folded, chars in variants.items()}


def case_variants(char: str) -> str:
    """Every character that ``fold_case`` folds as it folds ``char``, in code-point order: ``"k"`` -> ``"KkK"``.

    One character, ``char`` itself, for a character no other folds with (a digit, punctuation).
    """
    return _case_variants().get(fold_case(char), char)


def _regex_literal(char: str) -> str:
    # ASCII punctuation and space are escaped; a backslash before them is literal in PCRE and in
    # Python's re alike. Letters, digits and non-ASCII characters are literal as they are.
    return "\\" + char if char.isascii() and not char.isalnum() else char


def caseless_regex(text: str) -> str:
    """A regular expression that finds ``text`` as a substring ignoring case, by ``fold_case``.

    Every character becomes either an escaped literal or a class of the characters that fold to
    the same character (``"Ál"`` -> ``"[Áá][Ll]"``), so a document store's ``$regex`` matches
    exactly where ``fold_case(text) in fold_case(value)`` holds, without relying on the regex
    engine's own notion of case. The result has no quantifier, alternation or group: client text
    cannot inject regex syntax, and matching is linear in the searched value (no ReDoS).

    Args:
        text: Literal search text (docs: query language, "Search"); NUL characters are refused earlier
            by parsing.

    Returns:
        The pattern, valid for PCRE (MongoDB) and Python's ``re``.
    """
    out: list[str] = []
    for char in text:
        chars = case_variants(char)
        if len(chars) == 1:
            out.append(_regex_literal(char))
        else:
            out.append("[" + "".join(_regex_literal(member) for member in chars) + "]")
    return "".join(out)


class Wildcard(enum.Enum):
    """The two LIKE wildcards."""

    ANY_RUN = "%"
    ONE_CHAR = "_"


LikePart = str | Wildcard


class LikePattern(tuple[LikePart, ...]):
    """A parsed LIKE pattern: literal text runs and wildcards, in order."""

    __slots__ = ()

    def to_like(self, *, escape: str = LIKE_ESCAPE) -> str:
        """Render as a SQL LIKE pattern with ``escape`` as the escape character."""
        special = {"%", "_", escape}
        out: list[str] = []
        for part in self:
            if isinstance(part, Wildcard):
                out.append(part.value)
            else:
                out.extend(escape + char if char in special else char for char in part)
        return "".join(out)

    def to_glob(self) -> str:
        """Render as a SQLite GLOB pattern (case-sensitive, whole-string)."""
        out: list[str] = []
        for part in self:
            if part is Wildcard.ANY_RUN:
                out.append("*")
            elif part is Wildcard.ONE_CHAR:
                out.append("?")
            else:
                out.extend(f"[{char}]" if char in "*?[" else char for char in part)
        return "".join(out)

    def to_regex(self) -> re.Pattern[str]:
        """Compile to an anchored regular expression (used by the memory backend)."""
        out: list[str] = []
        for part in self:
            if part is Wildcard.ANY_RUN:
                out.append(".*")
            elif part is Wildcard.ONE_CHAR:
                out.append(".")
            else:
                out.append(re.escape(part))
        return re.compile("".join(out), re.DOTALL)

    def fold(self) -> LikePattern:
        """The same pattern with its literal text case-folded."""
        return LikePattern(part if isinstance(part, Wildcard) else fold_case(part) for part in self)


def _merge(parts: Iterable[LikePart]) -> LikePattern:
    merged: list[LikePart] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        elif part != "":
            merged.append(part)
    return LikePattern(merged)


def parse_like(pattern: str) -> LikePattern:
    r"""Parse a client LIKE pattern: ``%`` any run, ``_`` one character, ``\\`` escapes the next.

    Raises:
        ValueError: The pattern ends with a lone backslash.
    """
    parts: list[LikePart] = []
    chars = iter(pattern)
    for char in chars:
        if char == LIKE_ESCAPE:
            escaped = next(chars, None)
            if escaped is None:
                msg = "a pattern cannot end with a lone backslash; write \\\\ for a literal backslash"
                raise ValueError(msg)
            parts.append(escaped)
        elif char == "%":
            parts.append(Wildcard.ANY_RUN)
        elif char == "_":
            parts.append(Wildcard.ONE_CHAR)
        else:
            parts.append(char)
    return _merge(parts)


def contains_pattern(text: str, *, leading: bool = True, trailing: bool = True) -> LikePattern:
    """A pattern matching literal ``text``; ``leading``/``trailing`` add an any-run wildcard around it."""
    return _merge([Wildcard.ANY_RUN if leading else "", text, Wildcard.ANY_RUN if trailing else ""])
