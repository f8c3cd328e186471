"""Facet counts: how many of a list's rows hold each value of a field, under the list's own query.

A facet request is a ``FacetQuery``: the ``ListQuery`` of the list it stands beside (filters,
search, forced filters, row policies), the facets asked and how many values of each to answer.
Parsing makes it (``core.parsing.QueryParser.parse_facets``); backends count it
(``backends.base.FacetBackend.facet_counts``). What a facet's counts obey, and how its values are
ranked, is decided here once for every backend (docs: facets).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from litestar_listing.core.fields import LOOKUP_SEP, FieldPath
from litestar_listing.core.query import Combine, Filter, ListQuery, RawFilter

if TYPE_CHECKING:
    from litestar_listing.core.parts import PartOf

__all__ = ("Facet", "FacetCount", "FacetCounts", "FacetMode", "FacetPage", "FacetQuery", "ranked")


class FacetMode(str, enum.Enum):
    """Whether a facet's own filters narrow its counts (docs: facets, "Disjunctive counts").

    ``DISJUNCTIVE`` (the default): a facet's counts leave out the client's filters on the facet's own
    path, so that a screen where ``carrier=UA`` is ticked still shows the other carriers' counts;
    every other filter, the search, the scopes and the row policies apply. ``CONJUNCTIVE``: every
    filter applies to every facet.
    """

    DISJUNCTIVE = "disjunctive"
    CONJUNCTIVE = "conjunctive"


@dataclass(frozen=True, slots=True)
class Facet:
    """One facet asked: the values a field (or a part of a date) takes among the listed rows.

    Attributes:
        path: The field, through zero or more relations, or a key of a JSON field.
        part: The part of the date or datetime at ``path`` counted instead of its whole value
            (``time_hour__month``), or None.
        many: A row may hold several values there: the path crosses a to-many relation, or the key
            holds a list. Each row then counts once under each distinct value it holds.
    """

    path: FieldPath
    part: PartOf | None = None
    many: bool = False

    @property
    def name(self) -> str:
        """The facet as a client names it: ``carrier``, ``airline__name``, ``time_hour__month``."""
        return self.path.name if self.part is None else f"{self.path.name}{LOOKUP_SEP}{self.part.name}"

    def owns(self, item: Filter | RawFilter) -> bool:
        """Whether ``item`` is one of the facet's own filters: a client filter on the same path and part."""
        return isinstance(item, Filter) and item.name == self.name


@dataclass(frozen=True, slots=True)
class FacetQuery:
    """A facet request: the list's query, the facets and how many values of each to answer.

    Attributes:
        query: The list's query: filters, search, forced filters and row policies (its order and
            window are not read).
        facets: The facets asked, each once, in the order asked.
        limit: The most values answered per facet (``facet_limit``).
        mode: Whether a facet's own filters narrow its counts (``FacetMode``).
    """

    query: ListQuery
    facets: tuple[Facet, ...]
    limit: int = 10
    mode: FacetMode = FacetMode.DISJUNCTIVE

    def counted(self, facet: Facet) -> ListQuery:
        """The query ``facet``'s counts obey (docs: facets, "Disjunctive counts").

        The list's query, without the client's filters on the facet's own path in disjunctive mode
        when the client's filters combine with AND (with OR, leaving one out would narrow the rows,
        not widen them: every filter then applies). Forced filters and row policies always apply.
        """
        query = self.query
        if self.mode is FacetMode.CONJUNCTIVE or query.combine is Combine.OR:
            return query
        kept = tuple(item for item in query.filters if not facet.owns(item))
        return query if len(kept) == len(query.filters) else replace(query, filters=kept)


@dataclass(frozen=True, slots=True)
class FacetCount:
    """One value of a facet and how many listed rows hold it.

    Attributes:
        value: The value, as the list's items hold it (an enumeration's value, a date part's
            integer); None for the rows that hold none (NULL, a missing or hidden related row, an
            empty to-many relation).
        count: The rows holding it.
    """

    value: Any
    count: int


@dataclass(frozen=True, slots=True)
class FacetCounts:
    """The answer for one facet.

    Attributes:
        facet: The facet.
        values: At most ``FacetQuery.limit`` values, the most frequent first, ties by value
            ascending, None last (``ranked``).
        distinct: How many distinct values the counted rows hold, None included.
    """

    facet: Facet
    values: tuple[FacetCount, ...]
    distinct: int


@dataclass(frozen=True, slots=True)
class FacetPage:
    """A facet request's answer.

    Attributes:
        total: The rows the list itself matches (every filter applying), counted exactly.
        facets: One ``FacetCounts`` per facet asked, in the order asked.
    """

    total: int
    facets: tuple[FacetCounts, ...]


def ranked(counts: Mapping[Any, int], limit: int) -> tuple[FacetCount, ...]:
    """The ``limit`` values of ``counts`` (value -> rows) a facet answers, in the order it answers them.

    The most frequent first; equal counts by value ascending, None last: the rule every backend's
    statement follows (docs: facets, "The answer"). Text values compare here by code point; a
    database orders them by its collation, as it orders a list (docs: design, "Ordering").
    """
    ordered = sorted(((value, count) for value, count in counts.items() if value is not None), key=_by_value)
    ordered.sort(key=lambda pair: -pair[1])  # stable: equal counts keep the values' order
    if None in counts:
        # None ranks by its count too, after the values of the same count.
        missing = counts[None]
        at = next((index for index, (_, count) in enumerate(ordered) if count < missing), len(ordered))
        ordered.insert(at, (None, missing))
    return tuple(FacetCount(value, count) for value, count in ordered[:limit])


def _by_value(pair: tuple[Any, int]) -> Any:
    return pair[0]
