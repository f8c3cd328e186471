"""The reference backend: evaluates a ``ListQuery`` over plain dicts in Python.

It is the oracle of the conformance tests: every other backend must return what it returns.
Rows are dicts; a to-one relation is a nested dict or None, a to-many relation a list of dicts.

A related row that is missing reads exactly like a hidden one (docs: query language, "Relation
paths"; scoping, "Row policies"): a to-one relation whose row is missing is None, and reads NULL; a to-many list
may hold None for a link to a missing row (a link row whose key names no row), which is no related
row: no path reaches it and no load lists it.

Row policies (``ListQuery.policies``) are applied by the plainest reading of their rule: a row of a
model outside its policy does not exist. The listed rows are filtered by the listed model's policy,
and wherever a path or an eager load reaches a related row outside its model's policy, that row is
taken away: a to-one relation reads as None, a to-many list loses it. A policy that follows a
relation (``Policy.through``) hides a row whose related row is missing or taken away; the rows must
carry that relation (a nested dict) for it to be seen.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from litestar_listing.backends.base import Capabilities, ListContext, Page, dispatch, field_filter, where
from litestar_listing.core.cursor import follows
from litestar_listing.core.errors import UnavailableError
from litestar_listing.core.facets import Facet, FacetCounts, FacetPage, FacetQuery, ranked
from litestar_listing.core.query import FieldPath, Filter, ListQuery, OrderTerm, Policy, Search, load_tree
from litestar_listing.core.schema import FieldInfo, ModelGraph
from litestar_listing.core.text import LikePattern, fold_case

__all__ = ("MemoryBackend",)

Row = Mapping[str, Any]
Test = Callable[[Row], bool]


def _all_of(tests: Sequence[Test]) -> Test:
    return lambda row: all(test(row) for test in tests)


def _any_of(tests: Sequence[Test]) -> Test:
    return lambda row: any(test(row) for test in tests)


def _plain(value: object) -> object:
    return value.value if isinstance(value, enum.Enum) else value


def _present(rows: Sequence[Row | None] | None) -> list[Row]:
    """The related rows of a to-many list that exist: a None (a link to a missing row) is none of them."""
    return [row for row in rows or () if row is not None]


class MemoryBackend:
    """Lists rows held in memory.

    Args:
        graph: The models behind the rows (relation names, which are to-many).
        rows: The listed rows; computed aliases are plain keys of each row.
        computed: Computed aliases (docs: computed, "The memory backend") and their types.
        values: Computed aliases whose value is derived from the row as the list's row policies let
            it be seen (its related rows outside their policies taken away), e.g. a count of its
            visible to-many rows: the oracle of ``backends.base.Computed``. These replace the keys.
    """

    capabilities = Capabilities(keyset=True, row_policies=True, inherited_policies=True, facets=True)
    type_encoders: Mapping[Any, Callable[[Any], Any]] = MappingProxyType({})
    narrows_rows = False
    """The rows given are the whole list: no base query leaves any out."""

    @property
    def visitor(self) -> type[Any]:
        """The backend's own class: its ``op_<name>`` methods compile the operators."""
        return type(self)

    def __init__(
        self,
        graph: ModelGraph,
        rows: Sequence[Row],
        computed: Mapping[str, FieldInfo] | None = None,
        values: Mapping[str, Callable[[Row], object]] | None = None,
    ) -> None:
        self._graph = graph
        self._rows = list(rows)
        self._computed = dict(computed or {})
        self._derived = dict(values or {})
        self._patterns: dict[LikePattern, re.Pattern[str]] = {}

    def model_graph(self) -> ModelGraph:
        """The graph given at construction."""
        return self._graph

    def computed_fields(self) -> Mapping[str, FieldInfo]:
        """The computed aliases given at construction."""
        return self._computed

    def prepare(self) -> None:
        """Nothing to prepare."""

    def check_started(self, app: Any, *, routed: bool) -> None:
        """Nothing to check: the rows are in memory."""

    def unavailable(self, error: BaseException) -> UnavailableError | None:
        """None: rows in memory are always there, so no error is the store's."""
        return None

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        """Filter, search, order and cut the rows; items as the other backends list them.

        An item holds the listed entity's non-private fields, the computed values, and the
        relations of ``context.load`` only, each projected the same way (docs: eager loading).
        """
        matching = self._matching(self._seen(query), query)
        ordered = self._sorted(matching, query.order)
        if query.after is None:
            start = query.window.offset
        else:
            after = tuple(_plain(value) for value in query.after)
            start = next(
                (index for index, row in enumerate(ordered) if follows(self._key(row, query), after, query.order)),
                len(ordered),
            )
        rows = ordered[start : start + query.window.count]
        tree = load_tree(context.load)
        items = [self._item(row, self._graph.root, tree, top=True) for row in rows]
        last_key = self._key(rows[-1], query) if context.keyset and rows else None
        return Page(items=items, total=len(matching), last_key=last_key)

    async def facet_counts(self, query: FacetQuery, context: ListContext) -> FacetPage:
        """Count each facet's values among the rows its query matches (docs: facets).

        The definition the other backends follow: a row counts once under each distinct value its
        path reaches (a date part of it, for a part), and once under None when it reaches none.
        """
        rows = self._seen(query.query)
        counted: list[FacetCounts] = []
        for facet in query.facets:
            tally: dict[Any, int] = {}
            for row in self._matching(rows, query.counted(facet)):
                for value in self._facet_values(row, facet) or {None}:
                    tally[value] = tally.get(value, 0) + 1
            counted.append(FacetCounts(facet, ranked(tally, query.limit), len(tally)))
        return FacetPage(len(self._matching(rows, query.query)), tuple(counted))

    def _facet_values(self, row: Row, facet: Facet) -> set[object]:
        """The distinct values ``facet`` reaches from ``row``: its part, for a part."""
        part = facet.part
        found = self._values(row, facet.path)
        return {value if part is None or value is None else part.extract(value) for value in found}  # type: ignore[arg-type]

    def _seen(self, query: ListQuery) -> list[Row]:
        """The rows as ``query``'s row policies let them be seen, computed values derived."""
        rows: list[Row] = self._rows
        if query.policies:
            policies = {policy.entity: policy for policy in query.policies}
            visible = (self._visible(row, self._graph.root, policies) for row in rows)
            rows = [row for row in visible if row is not None]
        if self._derived:
            rows = [{**row, **{name: value(row) for name, value in self._derived.items()}} for row in rows]
        return rows

    def _matching(self, rows: list[Row], query: ListQuery) -> list[Row]:
        """The rows of ``rows`` that ``query``'s filters and search match."""
        test = where(
            query,
            lambda item: lambda row: self._filter(row, field_filter(item)),
            lambda search: lambda row: self._search(row, search),
            _all_of,
            _any_of,
        )
        return rows if test is None else [row for row in rows if test(row)]

    def _visible(self, row: Row, entity_name: str, policies: Mapping[str, Policy]) -> Row | None:
        """``row`` as the policies let it be seen: None when outside its model's policy, related rows pruned.

        A policy that follows a relation (``Policy.through``) needs the related row, itself seen
        through the policies: a missing or hidden one hides the row.
        """
        policy = policies.get(entity_name)
        if policy is not None and not (policy.visible and all(self._filter(row, item) for item in policy.filters)):
            return None
        pruned = dict(row)
        for name, relation in self._graph.entities[entity_name].relations.items():
            value = row.get(name)
            if relation.to_many:
                children = (self._visible(child, relation.target, policies) for child in _present(value))
                pruned[name] = [child for child in children if child is not None]
            elif value is not None:
                pruned[name] = self._visible(value, relation.target, policies)
        if policy is not None and any(pruned.get(name) is None for name in policy.through):
            return None
        return pruned

    def _key(self, row: Row, query: ListQuery) -> tuple[object, ...]:
        return tuple(next(self._values(row, term.path), None) for term in query.order)

    def _item(self, row: Row, entity_name: str, tree: Mapping[str, Any], *, top: bool = False) -> dict[str, Any]:
        entity = self._graph.entities[entity_name]
        item = {name: row.get(name) for name, info in entity.fields.items() if not info.private}
        if top:
            item.update((name, row.get(name)) for name in self._computed)
        for name, subtree in tree.items():
            relation = entity.relations[name]
            value = row.get(name)
            if relation.to_many:
                item[name] = [self._item(child, relation.target, subtree) for child in _present(value)]
            else:
                item[name] = None if value is None else self._item(value, relation.target, subtree)
        return item

    def _values(self, row: Row, path: FieldPath) -> Iterator[object]:
        """Every value ``path`` reaches from ``row``; a NULL to-one step yields one None."""
        entity = self._graph.root_entity
        current: list[Row | None] = [row]
        for step in path.relations:
            relation = entity.relations[step]
            following: list[Row | None] = []
            for item in current:
                if item is None:
                    if not relation.to_many:
                        following.append(None)
                elif relation.to_many:
                    following.extend(_present(item.get(step)))
                else:
                    following.append(item.get(step))
            current = following
            entity = self._graph.entities[relation.target]
        key = path.key
        for item in current:
            value = None if item is None else _plain(item.get(path.field))
            if key is None:
                yield value
            elif key.many:
                yield from key.values(value)  # some element: none for a missing list
            else:
                yield next(iter(key.values(value)), None)

    def _filter(self, row: Row, item: Filter) -> bool:
        test = dispatch(self, "op", item.operator.name, key=item.key or item.name)
        given: Any = item.value
        # Several elements (``in``, ``between``) arrive as a tuple (``ValueKind.arity``).
        expected = _plain(given) if item.operator.kind.arity.single else tuple(_plain(one) for one in given)
        part = item.part
        key = item.path.key
        if key is not None and key.many and item.operator.name == "isnull":
            # Whether the document holds a list there at all (docs: query language, "Keys of JSON documents").
            documents = self._values(row, FieldPath(item.path.segments))
            return any(key.holds_list(document) for document in documents) is not item.value
        for found in self._values(row, item.path):
            # A date part is compared instead of the whole value: its definition (``core.parts``).
            value = found if part is None or found is None else part.extract(found)  # type: ignore[arg-type]
            if value is None and item.operator.name != "isnull":
                if item.operator.matches_null:
                    return True
            elif test(value, expected):
                return True
        return False

    def _search(self, row: Row, search: Search) -> bool:
        needle = fold_case(search.text)
        return any(
            value is not None and needle in fold_case(str(value))
            for path in search.paths
            for value in self._values(row, path)
        )

    def _like(self, pattern: LikePattern) -> re.Pattern[str]:
        compiled = self._patterns.get(pattern)
        if compiled is None:
            compiled = self._patterns[pattern] = pattern.to_regex()
        return compiled

    def _sorted(self, rows: list[Row], order: Sequence[OrderTerm]) -> list[Row]:
        ordered = list(rows)
        for term in reversed(order):
            keyed = [(next(self._values(row, term.path), None), row) for row in ordered]
            present = [pair for pair in keyed if pair[0] is not None]
            present.sort(key=lambda pair: pair[0], reverse=term.descending)  # type: ignore[arg-type,return-value]
            ordered = [row for _, row in present] + [row for value, row in keyed if value is None]
        return ordered

    # One method per operator of the registry; ``value`` is never None here.
    def op_eq(self, value: Any, expected: Any) -> bool:  # noqa: D102
        return bool(value == expected)

    def op_ne(self, value: Any, expected: Any) -> bool:  # noqa: D102
        return bool(value != expected)

    def op_gt(self, value: Any, expected: Any) -> bool:  # noqa: D102
        return bool(value > expected)

    def op_gte(self, value: Any, expected: Any) -> bool:  # noqa: D102
        return bool(value >= expected)

    def op_lt(self, value: Any, expected: Any) -> bool:  # noqa: D102
        return bool(value < expected)

    def op_lte(self, value: Any, expected: Any) -> bool:  # noqa: D102
        return bool(value <= expected)

    def op_in(self, value: Any, expected: tuple[Any, ...]) -> bool:  # noqa: D102
        return value in expected

    def op_nin(self, value: Any, expected: tuple[Any, ...]) -> bool:  # noqa: D102
        return value not in expected

    def op_between(self, value: Any, expected: tuple[Any, Any]) -> bool:  # noqa: D102
        return bool(expected[0] <= value <= expected[1])

    def op_isnull(self, value: Any, expected: bool) -> bool:  # noqa: D102, FBT001
        return (value is None) is expected

    def op_like(self, value: str, expected: LikePattern) -> bool:  # noqa: D102
        return self._like(expected).fullmatch(value) is not None

    def op_ilike(self, value: str, expected: str) -> bool:  # noqa: D102
        return fold_case(expected) in fold_case(value)

    def op_startswith(self, value: str, expected: str) -> bool:  # noqa: D102
        return value.startswith(expected)

    def op_istartswith(self, value: str, expected: str) -> bool:  # noqa: D102
        return fold_case(value).startswith(fold_case(expected))

    def op_endswith(self, value: str, expected: str) -> bool:  # noqa: D102
        return value.endswith(expected)

    def op_iendswith(self, value: str, expected: str) -> bool:  # noqa: D102
        return fold_case(value).endswith(fold_case(expected))

    def op_contains(self, value: Any, expected: Any) -> bool:  # noqa: D102
        return bool(value == expected)  # ``value`` is one element of the list
