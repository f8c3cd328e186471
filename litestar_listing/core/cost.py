"""The price of a list before it runs: what admission, the ceiling and the per-client budgets weigh.

A list's cost is a sum of weighted ingredients read off its parsed ``ListQuery`` and the resource's
field map (which fields are indexed, which paths cross which relations): no statement runs, so a
cost takes microseconds. Each ingredient is charged to the query parameter that asked for it, so a
refusal can name what made a list expensive (docs: admission, "The cost of a list").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.fields import FieldPath
from litestar_listing.core.query import Filter, ListQuery, RawFilter
from litestar_listing.core.schema import ExposedField, FieldMap

if TYPE_CHECKING:
    from litestar_listing.core.facets import FacetQuery

__all__ = ("RESOURCE", "Cost", "CostModel", "cost_of", "counts_with_page", "facet_cost")

RESOURCE = ""
"""The parameter the resource's own part of a cost is charged to: its base, its default order."""


@dataclass(frozen=True, slots=True)
class CostModel:
    """The weights of a list's ingredients, in cost units (docs: admission, "The cost of a list").

    One unit is about the work of the cheapest list: one page of the listed model in an index's order,
    filtered by what its indexes serve, about 10 ms on the demo's 336,776 flights on SQLite, whose
    timings set the defaults (docs: admission, "The cost of a list"). Every weight must be zero or
    more; a resource tunes them to its store (``Resource(cost=CostModel(search_field=5.0))``).

    Attributes:
        base: Every list.
        join: Each to-one relation a list reaches (filtered, searched or ordered through), once
            however many parameters go through it.
        semi_join: Each filter or searched path through a to-many relation or into a list of a JSON
            document (an ``EXISTS`` test per row).
        scan_filter: Each filter no ordinary index serves: on a field without an index, an operator
            that tests every row (``ne``, ``nin``, the text operators; ``Operator.indexed``), or a date
            part computed per row (``month``, ``week_day``, ``hour``...; ``Part.ranged``).
        search_field: Each searched field: a substring test of every row.
        sort: An ordering no index serves (its first term is not an indexed field of the listed
            model): every matching row is sorted before the page is cut.
        order_term: Each term of such a sort, the primary-key tie-breaker included.
        computed: Each computed value filtered or ordered on: an expression, often a subquery, per row.
        skipped: Each 1,000 rows skipped before the page (``page`` times ``count``).
        rows: Each 100 rows of the page.
        facet: Each facet of a facet request (docs: facets): every matching row grouped by the
            facet's value, besides the joins or semi-join its path needs.
    """

    base: float = 1.0
    join: float = 3.0
    semi_join: float = 6.0
    scan_filter: float = 1.0
    search_field: float = 3.0
    sort: float = 8.0
    order_term: float = 1.0
    computed: float = 4.0
    skipped: float = 0.02
    rows: float = 0.5
    facet: float = 8.0

    def __post_init__(self) -> None:
        negative = [name for name in self.__slots__ if getattr(self, name) < 0]
        if negative:
            msg = f"cost weights must be >= 0; negative: {', '.join(negative)}"
            raise ConfigurationError(msg)


@dataclass(frozen=True, slots=True)
class Cost:
    """The price of one list (``cost_of``).

    Attributes:
        total: Cost units (``CostModel``), at least the model's ``base``.
        parts: ``(parameter, units)`` per query parameter that added to it (none for one that adds
            nothing, such as an indexed equality), in the order they were priced: a filter's
            parameter name (``airline__name__ne``), ``search``, ``order_by``, ``page``, ``count``;
            ``RESOURCE`` (``""``) for the resource's own part.
    """

    total: float
    parts: tuple[tuple[str, float], ...]

    def costliest(self, limit: int = 3) -> tuple[tuple[str, float], ...]:
        """The client's parameters that cost most, most first (at most ``limit``; the resource's part left out)."""
        sent = [(name, units) for name, units in self.parts if name != RESOURCE]
        return tuple(sorted(sent, key=lambda part: -part[1])[:limit])

    def over(self, ceiling: float) -> tuple[tuple[str, float], ...]:
        """The fewest of the client's costliest parameters without which the cost is at most ``ceiling``, most first.

        Empty when the cost is within ``ceiling``; every client parameter when even all of them
        together do not account for the excess.
        """
        excess = self.total - ceiling
        named: list[tuple[str, float]] = []
        for part in self.costliest(limit=len(self.parts)):
            if excess <= 0:
                break
            named.append(part)
            excess -= part[1]
        return tuple(named)


def cost_of(query: ListQuery, field_map: FieldMap, model: CostModel) -> Cost:
    """Price ``query`` on the resource whose field map is ``field_map``; nothing is run.

    The client's filters, search, ordering and page are priced; the forced filters and row policies
    are the server's, the same for each of a client's lists, and part of what ``base`` stands for.

    Args:
        query: The parsed list.
        field_map: The resource's field map (its graph's ``FieldInfo.indexed`` say which fields have
            an index).
        model: The weights.

    Returns:
        The cost, with what each parameter added.
    """
    return _Pricing(field_map, model).price(query)


def facet_cost(query: FacetQuery, field_map: FieldMap, model: CostModel) -> Cost:
    """Price the facet request ``query`` on the resource whose field map is ``field_map``; nothing is run.

    Its list's filters and search as a list prices them, and each facet (``CostModel.facet``, charged
    to ``facet``) with the joins its path needs, or a semi-join through a to-many relation or into a
    JSON list; no order and no page (docs: admission, "The cost of a list"; facets).
    """
    return _Pricing(field_map, model).price_facets(query)


class _Pricing:
    """One pricing: the relations already reached, and the parts charged so far."""

    __slots__ = ("_field_map", "_joined", "_model", "_parts")

    def __init__(self, field_map: FieldMap, model: CostModel) -> None:
        self._field_map = field_map
        self._model = model
        self._joined: set[tuple[str, ...]] = set()
        self._parts: dict[str, float] = {}

    def price(self, query: ListQuery) -> Cost:
        model = self._model
        self._charge(RESOURCE, model.base)
        self._rows(query)
        self._order(query)
        if query.after is None:
            self._charge("page", model.skipped * query.window.offset / 1000)
        self._charge("count", model.rows * query.window.count / 100)
        parts = tuple(self._parts.items())
        return Cost(total=sum(units for _, units in parts), parts=parts)

    def price_facets(self, query: FacetQuery) -> Cost:
        model = self._model
        self._charge(RESOURCE, model.base)
        self._rows(query.query)
        for facet in query.facets:
            reach = self._reach(self._exposed(facet.path), to_many_each=True) + self._elements(facet.path)
            self._charge("facet", model.facet + reach)
        parts = tuple(self._parts.items())
        return Cost(total=sum(units for _, units in parts), parts=parts)

    def _rows(self, query: ListQuery) -> None:
        """Price what decides a list's rows: its filters and its search."""
        model = self._model
        for item in query.filters:
            self._filter(item)
        if query.search is not None:
            for path in query.search.paths:
                reach = self._reach(self._exposed(path), to_many_each=True) + self._elements(path)
                self._charge("search", model.search_field + reach)

    def _filter(self, item: Filter | RawFilter) -> None:
        model = self._model
        if isinstance(item, RawFilter):  # a document store's raw key: no index is known for it
            self._charge(item.key, model.scan_filter)
            return
        exposed = self._exposed(item.path)
        units = self._reach(exposed, to_many_each=True) + self._elements(item.path)
        if exposed.field.computed:
            units += model.computed
        elif not (item.operator.indexed and exposed.field.indexed and (item.part is None or item.part.ranged)):
            units += model.scan_filter
        self._charge(item.key or item.name, units)

    def _order(self, query: ListQuery) -> None:
        model = self._model
        terms = query.order
        field_map = self._field_map
        charged_to = RESOURCE if terms == field_map.with_pk(field_map.default_order) else "order_by"
        units = 0.0
        exposed = [self._exposed(term.path) for term in terms]
        for each in exposed:
            units += self._reach(each, to_many_each=False)
            if each.field.computed:
                units += model.computed
        if exposed and _sorted(exposed[0]):
            units += model.sort + model.order_term * len(terms)
        self._charge(charged_to, units)

    def _reach(self, exposed: ExposedField, *, to_many_each: bool) -> float:
        """What reaching ``exposed``'s field costs: the to-one joins not yet made, a semi-join through a to-many."""
        model = self._model
        if exposed.to_many and to_many_each:
            return model.semi_join
        units = 0.0
        segments = exposed.path.segments
        for depth in range(1, len(exposed.hops) + 1):
            prefix = segments[:depth]
            if prefix not in self._joined:
                self._joined.add(prefix)
                units += model.join
        return units

    def _elements(self, path: FieldPath) -> float:
        """What testing the elements of a JSON list costs: an ``EXISTS`` per row, as a to-many path."""
        return self._model.semi_join if path.key is not None and path.key.many else 0.0

    def _exposed(self, path: FieldPath) -> ExposedField:
        return self._field_map.reached(path)  # a walk of a few steps of the graph

    def _charge(self, parameter: str, units: float) -> None:
        if units:
            self._parts[parameter] = self._parts.get(parameter, 0.0) + units


def _sorted(first: ExposedField) -> bool:
    """Whether an ordering that starts with ``first`` sorts every matching row: no index of the model serves it.

    Through a relation, a computed value, or a field that leads no index the model declares.
    """
    return bool(first.hops or first.field.computed or not first.field.indexed)


def counts_with_page(query: ListQuery, field_map: FieldMap) -> bool:
    """Whether ``query``'s total is best read with its page, in one statement (a window count), not counted apart.

    When the page sorts every matching row anyway (no index serves its order: ``CostModel.sort``) and
    each row costs a search to match, a count apart would search every row a second time, while the
    page's own scan can count them: one scan instead of two. Elsewhere a count apart is cheaper: an
    index walk stops at the end of the page, and a count without a search is a fast scan (or an
    index's), where the window would keep every matching row whole until the page is cut. Never after
    a keyset cursor, whose statement does not read the rows before it. (docs: design, "Totals").

    Args:
        query: The parsed list.
        field_map: The resource's field map (which fields lead an index).

    Returns:
        True to ask the backend for the total in the page's statement (``ListContext.count_in_page``).
    """
    if query.search is None or query.after is not None or not query.order:
        return False
    return _sorted(field_map.reached(query.order[0].path))
