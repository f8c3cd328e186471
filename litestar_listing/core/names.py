"""Did-you-mean hints: the allowed names of a resource, indexed once so that a lookup costs little.

A hint is what ``difflib.get_close_matches`` would answer; the index only skips the work that
cannot change that answer, so the cost of a lookup does not grow with the length of the name.
"""

from __future__ import annotations

import difflib
import heapq
from collections import Counter
from collections.abc import Iterable

__all__ = ("CUTOFF", "NameIndex")

CUTOFF = 0.6
"""The least similarity (``difflib.SequenceMatcher.ratio``, from 0 to 1) of a hint to the name."""


class NameIndex:
    """Allowed names, grouped by length, with the character counts of each; built once at start.

    ``SequenceMatcher.ratio`` is ``2 * M / (len(a) + len(b))`` with ``M`` at most the shorter
    length and at most the characters both share, so a candidate whose length is too far from the
    name's, or that shares too few characters with it, cannot reach ``CUTOFF``: the index rules it
    out from its length group and its precomputed counts before any matching. A name longer than
    ``(2 / CUTOFF - 1)`` times the longest allowed name is answered without reading it.
    """

    __slots__ = ("_by_length", "_counts")

    def __init__(self, names: Iterable[str]) -> None:
        """Index ``names`` (duplicates ignored)."""
        unique = list(dict.fromkeys(names))
        self._counts = {name: Counter(name) for name in unique}
        self._by_length: dict[int, list[str]] = {}
        for name in unique:
            self._by_length.setdefault(len(name), []).append(name)

    def closest(self, name: str, limit: int = 3) -> list[str]:
        """The allowed names closest to a misspelt ``name``, best first, as ``difflib.get_close_matches``.

        Args:
            name: What the client wrote.
            limit: The most names returned.

        Returns:
            Up to ``limit`` names whose similarity to ``name`` is at least ``CUTOFF``; ties in
            similarity go to the name that sorts last, as in ``difflib``.
        """
        size = len(name)
        candidates = [
            candidate
            for length, group in self._by_length.items()
            if _ratio(min(size, length), size + length) >= CUTOFF
            for candidate in group
        ]
        if not candidates:
            return []
        counts = Counter(name).items()
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(name)
        scored: list[tuple[float, str]] = []
        for candidate in candidates:
            theirs = self._counts[candidate]
            shared = sum(min(count, theirs.get(character, 0)) for character, count in counts)
            if _ratio(shared, size + len(candidate)) < CUTOFF:
                continue
            matcher.set_seq1(candidate)
            score = matcher.ratio()
            if score >= CUTOFF:
                scored.append((score, candidate))
        return [candidate for _, candidate in heapq.nlargest(limit, scored)]


def _ratio(matches: int, length: int) -> float:
    """``difflib``'s similarity of ``matches`` matching characters in two texts of ``length`` together."""
    return 2.0 * matches / length if length else 1.0
