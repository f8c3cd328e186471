"""The one algorithm that compiles a ``ListQuery`` for a relational database.

``RelationalCompiler`` owns every rule: the WHERE clause, each operator of the registry and its NULL
rule, relation paths (one join alias per to-one path, semi-joins for to-many paths and for to-one
paths a condition never holds for NULL on), ordering with NULLS LAST, keyset conditions and the
deferred join for deep pages, and the statement that counts a facet's values. A dialect
(SQLAlchemy, Piccolo) subclasses it and supplies only primitives: columns, comparisons, LIKE
rendering, joins, semi-joins, row values and statements.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from litestar_listing.backends.base import IndexedSearch, TrigramTable, dispatch, field_filter, where
from litestar_listing.backends.relational.databases import Database
from litestar_listing.backends.relational.indexes import trigram_match
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.fields import JsonKey, ValueType
from litestar_listing.core.query import FieldPath, Filter, ListQuery, OrderTerm, Policy, Search
from litestar_listing.core.text import LikePattern, contains_pattern

if TYPE_CHECKING:
    from litestar_listing.core.facets import Facet, FacetQuery
    from litestar_listing.core.parts import PartOf, Span
    from litestar_listing.core.schema import ModelGraph

__all__ = (
    "CANDIDATE_LIMIT",
    "DEFERRED_OFFSET",
    "FACET_LABELS",
    "KEY_LABEL",
    "TOTAL_LABEL",
    "Continue",
    "Policies",
    "Reach",
    "RelationalCompiler",
    "SearchForm",
    "TextMatch",
    "trigram_lookup",
    "with_followed",
)

DEFERRED_OFFSET = 1000
"""From this many skipped rows on, a page is fetched by a deferred join (keys first, then rows)."""

KEY_LABEL = "_listing_key_"
"""Prefix of the labels of the ordering values a page statement selects for keyset continuation."""

TOTAL_LABEL = "_listing_total"
"""The label of the total a page statement selects with its rows (``RelationalCompiler.counts_in_page``)."""

FACET_LABELS = ("listing_value", "listing_count", "listing_groups", "listing_rows")
"""The labels of what each row of a facet statement selects, in order (``RelationalCompiler.facet_statement``):
a value, the listed rows holding it, then the number of values and the sum of their counts (before the limit)."""

_TIE_LABEL = "listing_tie"
_OWNER_LABEL = "listing_owner_"

CANDIDATE_LIMIT = 1_000
"""Up to this many candidate rows, whatever the table's size, a search whose fields are indexed reads
its rows from their indexes (``RelationalCompiler.candidate_limit``; docs: indexes, "Search from indexes")."""


class SearchForm(enum.Enum):
    """How a statement finds the rows a search matches (docs: indexes, "Search from indexes")."""

    SCAN = enum.auto()
    """The search's OR of its fields' matches, tested on each row the rest of the statement reads."""
    CANDIDATES = enum.auto()
    """That OR, ANDed with ``<key> IN (<each field's matching keys, read from its index>)``."""
    PROBE = enum.auto()
    """The total statement counts the candidates instead, ``candidate_limit + 1`` at most."""


Expression = TypeVar("Expression")
"""A dialect's SQL expression: SQLAlchemy's ``ColumnElement``, Piccolo's ``QueryString`` or column."""

Statement = TypeVar("Statement")
"""A dialect's complete statement: SQLAlchemy's ``Select``, Piccolo's ``QueryString``."""


class Continue(Protocol):
    """Walks the rest of a path from ``place`` inside a subquery of ``source``; returns its condition."""

    def __call__(self, source: Any, place: Any, *, semi: bool) -> Any: ...  # noqa: D102


class Reach(Protocol):
    """Walks the rest of a path from ``place``, the related row of a to-many relation, inside a statement of ``source``.

    Returns the value the path reaches there, and the condition on the related row (its model's row
    policy), None for none.
    """

    def __call__(self, source: Any, place: Any) -> tuple[Any, Any]: ...  # noqa: D102


@dataclass(frozen=True)
class _Reached(Generic[Expression]):
    """The end of a path followed through joins (``RelationalCompiler._along``): its row and its (guarded) column."""

    place: Any
    entity: str
    value: Expression


@dataclass(frozen=True)
class _Branched(Generic[Expression]):
    """A path followed until a step ended it (``RelationalCompiler._along``): what it ended with, the guards so far."""

    value: Expression
    guards: list[Expression]


Policies = Mapping[str, Policy]
"""The row policies of one query by model name (``ListQuery.policies``)."""

_NO_POLICIES: Policies = MappingProxyType({})


def trigram_lookup(tables: Iterable[TrigramTable]) -> Mapping[tuple[str, str], str]:
    """``RelationalCompiler.trigram_tables`` of ``tables``: each table by its (model, field)."""
    return MappingProxyType({(table.entity, table.field): table.table for table in tables})


def with_followed(policy: Policy, policies: Mapping[str, Policy] | None) -> Policies:
    """``policies`` with ``policy`` among them: what ``policy_condition`` needs for ``policy``'s model.

    For the backends' ``policy_condition`` helpers, which take one model's policy and, for a policy
    that follows a relation (``Policy.through``), the request's others.

    Raises:
        ConfigurationError: ``policy`` follows a relation and ``policies`` is None: the related model's
            policy would be unknown, and the condition would let every related row through.
    """
    if policies is None:
        if policy.through:
            msg = (
                f"the row policy of {policy.entity} follows {', '.join(policy.through)}: pass "
                "policies=request_policies(context) so that the related model's policy applies too"
            )
            raise ConfigurationError(msg)
        return {policy.entity: policy}
    return {**policies, policy.entity: policy}


_COMPARISONS: Mapping[str, str] = {"eq": "=", "ne": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


class TextMatch:
    """A leaf that matches text with a LIKE pattern: a trigram table may give its candidate rows first.

    Attributes:
        build: The match on a column.
        pattern: The pattern, as the client's text made it (not folded).
        folded: The match ignores case (Unicode case folding).
    """

    __slots__ = ("build", "folded", "pattern")

    def __init__(self, build: Callable[[Any], Any], pattern: LikePattern, *, folded: bool) -> None:
        self.build = build
        self.pattern = pattern
        self.folded = folded

    def __call__(self, column: Any) -> Any:
        """The match on ``column``."""
        return self.build(column)


_TEXT_MATCHES: Mapping[str, tuple[Callable[[Any], LikePattern], bool]] = MappingProxyType(
    {
        "like": (lambda value: value, False),
        "ilike": (contains_pattern, True),
        "startswith": (lambda value: contains_pattern(value, leading=False), False),
        "istartswith": (lambda value: contains_pattern(value, leading=False), True),
        "endswith": (lambda value: contains_pattern(value, trailing=False), False),
        "iendswith": (lambda value: contains_pattern(value, trailing=False), True),
    }
)
"""The operators that match text with a pattern: how each makes its pattern from its value, and
whether it ignores case (docs: query language, "Filters and operators")."""


class RelationalCompiler(ABC, Generic[Expression, Statement]):
    """Compiles queries for one listed model; subclasses supply the dialect's primitives.

    Paths are walked from a *source* (the to-one joins of one FROM clause: the main statement or one
    subquery) and a *place* (where the walk stands: the source's root, or a joined relation); both
    are opaque here, made and read by the dialect.

    Row policies (``ListQuery.policies``; docs: design, "Row policies") are applied here, for every
    dialect alike: the listed model's is ANDed into the WHERE clause; a to-one step's related row
    outside its model's policy reads as NULL (its columns are guarded, ``guarded``), exactly like a
    missing row; a semi-join (to-many, or to-one where the dialect has one) only sees rows inside
    the policy of the model it reaches.

    Attributes:
        computed: Computed aliases mapped to expressions, for ordering (docs: computed).
        base_where: A condition of the base list query ANDed first, e.g. excluding soft-deleted
            rows (docs: soft delete), or None when the dialect's base statement carries it.
        graph: The listed model and every model reachable from it: the model a path reaches,
            whose policy applies there.
        trigram_tables: By (model, field), the SQLite trigram table whose candidates a text match on
            that field reads first (``backends.base.TrigramTable``; docs: indexes, "Trigram indexes
            on SQLite"); empty elsewhere.
        indexed_search: The searchable paths whose matches an index of the listed table finds, and
            the table's size (``plugin.indexes.indexed_search``): a search over these alone may read
            its candidates from them (``SearchForm``); None: none is.
    """

    computed: Mapping[str, Expression]
    base_where: Expression | None = None
    graph: ModelGraph
    trigram_tables: Mapping[tuple[str, str], str] = MappingProxyType({})
    indexed_search: IndexedSearch | None = None

    # -- statements ---------------------------------------------------------------------------
    def compile(
        self,
        query: ListQuery,
        selected: Sequence[Any] = (),
        *,
        keys: bool = False,
        offset: Any = None,
        total: bool = False,
        search_form: SearchForm = SearchForm.SCAN,
    ) -> tuple[Statement, Statement]:
        """Return ``(page statement, total statement)`` for ``query``.

        Args:
            query: The query; with ``after``, the page starts after those ordering values instead of
                at an offset (keyset continuation).
            selected: The page's select list, for a dialect whose base statement has none (Piccolo).
            keys: Also select each ordering term's value, labelled ``KEY_LABEL + <index>``.
            offset: The rows skipped, as the dialect's ``page_statement`` takes it, for a query's
                shape (``shapes.shape_of``: a ``Slot``); None: ``query.window.offset``. Whether the
                page is a deferred join is read from ``query.window`` either way.
            total: Also select the total, labelled ``TOTAL_LABEL``, before the keys; only where
                ``counts_in_page(query)``.
            search_form: How the search finds its rows; other than ``SCAN`` only where
                ``narrows_search(query)``. With ``PROBE`` the second statement is the probe.
        """
        source = self.source()
        condition = self.where(source, query, candidates=search_form is SearchForm.CANDIDATES)
        # The total joins only what the WHERE clause needs: order joins never change a count.
        if search_form is SearchForm.PROBE:
            counted = self.capped_count(self.search_keys(query), self.candidate_limit + 1)
        else:
            counted = self.total_statement(source, condition)
        policies = self.policies(query)
        values = [self.order_value(source, term.path, policies) for term in query.order]
        order = [self.order_term(term, value) for term, value in zip(query.order, values, strict=True)]
        labelled = [(f"{KEY_LABEL}{index}", value) for index, value in enumerate(values)] if keys else []
        if total:
            if not self.counts_in_page(query):
                msg = "this page statement cannot count its rows (counts_in_page)"
                raise ValueError(msg)
            labelled.insert(0, (TOTAL_LABEL, self.window_count()))
        window = query.window
        skipped = window.offset if offset is None else offset
        if query.after is not None:
            after = self.keyset(query, values)
            condition = after if condition is None else self.all_of([condition, after])
            return self.page_statement(source, condition, order, selected, labelled, window.count, None), counted
        if self.defers(query):
            # A deferred join: the skipped rows are walked for their keys alone (an index-only scan
            # where an index covers the order), and only the page's rows are read whole.
            page_keys = self.keys_statement(source, condition, order, window.count, skipped)
            return self.deferred_page(source, page_keys, order, selected, labelled, window.count), counted
        page = self.page_statement(source, condition, order, selected, labelled, window.count, skipped)
        return page, counted

    def where(self, source: Any, query: ListQuery, *, candidates: bool = False) -> Expression | None:
        """The WHERE clause: base, the listed model's policy, forced filters, (client filters, combined), search.

        All ANDed (forced filters and the policy outside the client's filters; docs: design, "Forced
        filters"); with ``candidates``, the search's candidates too (``search_keys``).
        """
        policies = self.policies(query)
        condition = where(
            query,
            lambda item: self.filter(source, field_filter(item), policies),
            lambda search: self.search(source, search, policies),
            self.all_of,
            self.any_of,
        )
        parts = [] if self.base_where is None else [self.base_where]
        if candidates and self.database.search_candidates is not None:
            (key,) = self.graph.root_entity.pk
            keys = self.statement_value(self.search_keys(query))
            parts.append(self.condition_sql(self.database.search_candidates, self.field(self.start(source), key), keys))
        own = self.policy_condition(self.start(source), self.graph.root, policies)
        if own is not None:
            parts.append(own)
        if not parts:
            return condition
        return self.all_of([*parts, *([] if condition is None else [condition])])

    @staticmethod
    def policies(query: ListQuery) -> Policies:
        """``query``'s row policies by model name."""
        if not query.policies:
            return _NO_POLICIES
        return {policy.entity: policy for policy in query.policies}

    def policy_condition(self, place: Any, entity: str, policies: Policies) -> Expression | None:
        """The condition the policy of model ``entity`` puts on its row at ``place``, or None for none.

        A policy that lets no row through is a constant false; its filters are over the model's own
        fields and follow the operators' NULL rules like any filter. A policy that follows a relation
        (``Policy.through``) adds a semi-join: the related row exists and is inside its own model's
        policy, which may follow a relation in turn.
        """
        policy = policies.get(entity)
        if policy is None:
            return None
        if not policy.visible:
            return self.constant(value=False)
        parts = [self._leaf(item)(self.field(place, item.path.field)) for item in policy.filters]
        for step in policy.through:
            relation = self.relation(place, step)
            inner = self._parent_visible(self.graph.entities[entity].relations[step].target, policies)
            joined = self.semi_join_one(place, relation, inner)
            parts.append(self.semi_join_many(place, relation, inner, semi=True) if joined is None else joined)
        return self.all_of(parts) if parts else None

    def _parent_visible(self, entity: str, policies: Policies) -> Continue:
        """The condition inside a semi-join on rows of ``entity``: its policy, or any row when it restricts none."""

        def inner(source: Any, place: Any, *, semi: bool) -> Expression:
            condition = self.policy_condition(place, entity, policies)
            return self.constant(value=True) if condition is None else condition

        return inner

    # -- paths --------------------------------------------------------------------------------
    def predicate(
        self,
        source: Any,
        path: FieldPath,
        leaf: Callable[[Any], Expression],
        *,
        semi: bool,
        policies: Policies = _NO_POLICIES,
    ) -> Expression:
        """``leaf`` applied to the column at ``path``, through joins and semi-joins.

        To-many steps become semi-joins (no listed row repeats, totals stay exact). With ``semi`` (a
        ``leaf`` that never holds for NULL), a to-one step becomes a semi-join too where the dialect
        can: the same rows (no related row, no match), the condition evaluated once per related row
        rather than once per listed row, and a count without joins (docs: design, "Relation paths").
        On a to-one path with an identity ``leaf`` this is the (joined) column itself.

        ``policies`` apply to every model the path reaches: a joined related row outside its policy
        reads as NULL, and a semi-join only sees the rows inside the policy of its model.
        """
        return self._walk(source, self.start(source), self.graph.root, path, leaf, semi=semi, policies=policies)

    def _walk(
        self,
        source: Any,
        place: Any,
        entity: str,
        path: FieldPath,
        leaf: Callable[[Any], Expression],
        *,
        semi: bool,
        policies: Policies,
    ) -> Expression:
        def branch(place: Any, relation: Any, target: str, rest: FieldPath) -> Expression | None:
            inner = self._continue(rest, leaf, target, policies)
            if self.is_to_many(relation):
                return self.semi_join_many(place, relation, inner, semi=semi)
            return self.semi_join_one(place, relation, inner) if semi else None

        walked = self._along(source, place, entity, path, policies, branch)
        if isinstance(walked, _Branched):
            # A semi-join from a joined row outside its policy finds nothing, as from a missing one.
            return self.all_of([*walked.guards, walked.value]) if walked.guards else walked.value
        value = walked.value
        if path.key is None:
            return self._narrowed(walked.place, walked.entity, path.field, leaf, leaf(value))
        if path.key.many:
            return self.json_any(value, path.key, leaf)
        return leaf(self.json_value(value, path.key))

    def _along(
        self,
        source: Any,
        place: Any,
        entity: str,
        path: FieldPath,
        policies: Policies,
        branch: Callable[[Any, Any, str, FieldPath], Expression | None],
    ) -> _Reached[Expression] | _Branched[Expression]:
        """Follow ``path`` from ``place``: each to-one step joined, until ``branch`` ends the walk at a step.

        ``branch`` is given the place, the relation, its target model and the rest of the path; it
        returns what the walk ends with there (a semi-join, a to-many join's value), or None to join
        the step. A joined row outside its model's policy makes the path read NULL: its guard is kept.
        """
        # The policies of the to-one rows joined so far: outside any of them, the path reads NULL.
        guards: list[Expression] = []
        for index, step in enumerate(path.relations):
            relation = self.relation(place, step)
            target = self.graph.entities[entity].relations[step].target
            ended = branch(place, relation, target, FieldPath(path.segments[index + 1 :], path.key))
            if ended is not None:
                return _Branched(ended, guards)
            place = self.join(source, place, path.relations[: index + 1], relation)
            entity = target
            guard = self.policy_condition(place, entity, policies)
            if guard is not None:
                guards.append(guard)
        value = self.field(place, path.field)
        return _Reached(place, entity, self.guarded(value, self.all_of(guards)) if guards else value)

    def _continue(
        self, rest: FieldPath, leaf: Callable[[Any], Expression], entity: str, policies: Policies
    ) -> Continue:
        def inner(source: Any, place: Any, *, semi: bool) -> Expression:
            condition = self._walk(source, place, entity, rest, leaf, semi=semi, policies=policies)
            # The semi-join's rows: only those inside the policy of the model it reaches.
            guard = self.policy_condition(place, entity, policies)
            return condition if guard is None else self.all_of([guard, condition])

        return inner

    def _narrowed(
        self, place: Any, entity: str, field: str, leaf: Callable[[Any], Expression], condition: Expression
    ) -> Expression:
        """``condition``, and where a trigram table serves the text match ``leaf`` on ``field``, its rows first.

        The table names the rows by the model's integer primary key (the rowid); its candidates hold
        every row the match holds for (``indexes.trigram_match``), and ``condition`` still decides.
        """
        if not isinstance(leaf, TextMatch):
            return condition
        table = self.trigram_tables.get((entity, field))
        match = None if table is None else trigram_match(leaf.pattern, folded=leaf.folded)
        if table is None or match is None:
            return condition
        (key,) = self.graph.entities[entity].pk
        name = '"' + table.replace('"', '""') + '"'  # a table of the catalog, never a client's text
        rows = self.condition_sql(
            f"{{0}} IN (SELECT rowid FROM {name} WHERE {name} MATCH {{1}})",  # noqa: S608
            self.field(place, key),
            self.bind(match, self.field(place, field)),  # text, as the field's own values are
        )
        return self.all_of([rows, condition])

    def order_value(self, source: Any, path: FieldPath, policies: Policies = _NO_POLICIES) -> Expression:
        """The value an ordering term sorts by: a computed alias's expression or a (joined) column.

        A related row outside its policy sorts as NULL, like a missing one.
        """
        if len(path.segments) == 1 and path.field in self.computed:
            return self.computed[path.field]
        return self.sortable(self.predicate(source, path, lambda column: column, semi=False, policies=policies))

    # -- facets -------------------------------------------------------------------------------
    def facet_statement(self, query: FacetQuery, facet: Facet) -> Statement:
        """The statement that counts the values of ``facet`` among the rows of ``query.counted(facet)`` (docs: facets).

        The rows the list itself reads (``where``: the base, the listed model's policy, forced
        filters, the client's filters, the search) grouped by the facet's value (``facet_value``),
        counted per value; ranked in a statement around that: the count descending, then the value
        ascending (text in the database's collation, as a list orders it) with NULL after the values
        of its count (``core.facets.ranked``), ``query.limit`` rows. Each row selects what
        ``FACET_LABELS`` name: the value, its count, and, before the limit, the number of values
        and the sum of all counts (window aggregates).

        A facet whose rows may hold several values (``counts_keys``) counts distinct listed rows
        per value: the distinct pairs of a listed row's primary key and a value are grouped. Values
        are grouped as equality compares them (``exact``).
        """
        counted = query.counted(facet)
        source = self.source()
        condition = self.where(source, counted)
        value = self.facet_value(source, facet, self.policies(counted))
        grouped, tie = self.exact(value), self.sortable(value)
        ties = tie is not grouped  # the value orders otherwise than it groups (a collation that merges text)
        label, count_label, groups_label, rows_label = FACET_LABELS
        values = [(label, grouped), *([(_TIE_LABEL, tie)] if ties else [])]
        if self.counts_keys(facet):
            keys = [
                (f"{KEY_LABEL}{index}", self.field(self.start(source), name))
                for index, name in enumerate(self.graph.root_entity.pk)
            ]
            pairs = self.derived(self.listed_rows(source, condition, [*keys, *values], distinct=True), "listing_pairs")
            values = [(name, self.derived_column(pairs, name)) for name, _ in values]
            counts = self.from_derived(pairs, self._counted(values), grouped=1)
        else:
            counts = self.listed_rows(source, condition, self._counted(values), grouped=1)
        groups = self.derived(counts, "listing_facet")
        value, count = self.derived_column(groups, label), self.derived_column(groups, count_label)
        order = [self.ordered(count, descending=True, nulls_last=False)]
        if ties:
            order.append(self.ordered(self.derived_column(groups, _TIE_LABEL), descending=False, nulls_last=True))
        order.append(self.ordered(value, descending=False, nulls_last=True))
        selected = [
            (label, value),
            (count_label, count),
            (groups_label, self.window_count()),
            (rows_label, self.sql("SUM({0}) OVER ()", ValueType.INTEGER, count)),
        ]
        return self.from_derived(groups, selected, order=order, limit=query.limit)

    def _counted(self, values: Sequence[tuple[str, Expression]]) -> list[tuple[str, Expression]]:
        """The select list of one group: its value, its rows, and the value it orders by where that differs."""
        (label, value), *tie = values
        counted = [(label, value), (FACET_LABELS[1], self.sql("COUNT(*)", ValueType.INTEGER))]
        return counted + [(name, self.sql("MIN({0})", ValueType.TEXT, expression)) for name, expression in tie]

    def counts_keys(self, facet: Facet) -> bool:
        """Whether ``facet``'s statement counts distinct listed rows per value, not rows.

        A facet whose rows may hold several values (``Facet.many``: a to-many path, a JSON list), or
        a base statement that may read a row more than once (``merges_rows``).
        """
        return facet.many or self.merges_rows

    @property
    def merges_rows(self) -> bool:
        """Whether the base statement merges rows it reads more than once (``DISTINCT``); a dialect overrides it."""
        return False

    def sums_total(self, query: FacetQuery, facet: Facet) -> bool:
        """Whether the list's total is the sum of ``facet``'s counts (``FACET_LABELS``' last), so no count need run.

        For a facet that counts each listed row once (``counts_keys`` false), under the list's own
        query: none of its filters left out (docs: facets, "The answer").
        """
        return not self.counts_keys(facet) and query.counted(facet) is query.query

    def facet_value(self, source: Any, facet: Facet, policies: Policies = _NO_POLICIES) -> Expression:
        """The value of ``facet`` on the rows of ``source``: what its rows are grouped by (docs: facets).

        A to-one step joins one alias per path, as ordering does, and a related row that is missing
        or outside its model's policy reads NULL. A to-many step LEFT JOINs the related rows that
        exist and that their model's policy lets through, each with the value the rest of the path
        reaches from it (``join_many``), so a listed row without any reads NULL once. A JSON key reads
        its value of the declared type (``json_value``), a list key each element of that type
        (``join_elements``); a part of a date its integer or date (``facet_part``).
        """
        part = facet.part

        def leaf(value: Any) -> Expression:
            return value if part is None else self.facet_part(value, part)

        return self._reach(source, self.start(source), self.graph.root, facet.path, leaf, policies)

    def _reach(
        self,
        source: Any,
        place: Any,
        entity: str,
        path: FieldPath,
        leaf: Callable[[Any], Expression],
        policies: Policies,
    ) -> Expression:
        def branch(place: Any, relation: Any, target: str, rest: FieldPath) -> Expression | None:
            if not self.is_to_many(relation):
                return None
            return self.join_many(source, place, relation, self._related(target, rest, leaf, policies))

        walked = self._along(source, place, entity, path, policies, branch)
        if isinstance(walked, _Branched):
            return self.guarded(walked.value, self.all_of(walked.guards)) if walked.guards else walked.value
        key = path.key
        if key is None:
            return leaf(walked.value)
        return leaf(self.join_elements(source, walked.value, key) if key.many else self.json_value(walked.value, key))

    def _related(self, entity: str, rest: FieldPath, leaf: Callable[[Any], Expression], policies: Policies) -> Reach:
        def reach(source: Any, place: Any) -> tuple[Expression, Expression | None]:
            value = self._reach(source, place, entity, rest, leaf, policies)
            return value, self.policy_condition(place, entity, policies)

        return reach

    def join_elements(self, source: Any, document: Any, key: JsonKey) -> Expression:
        """Each element of the key's type in the list at ``key`` of ``document``, LEFT JOINed in ``source``.

        ``Database.json_elements`` over the document, ON the document holding a list there and the
        element being of the key's type (``JsonKey.values``): a row whose list holds none reads NULL once.
        """
        found = self.database
        element = self.sql(found.json_element[key.type], key.type)
        listed = self.is_null(self.json_list(document, key), null=False)
        condition = self.all_of([listed, self.is_null(element, null=False)])
        self.join_sql(source, found.json_template(found.json_elements, key.keys), condition, document)
        return element

    def facet_part(self, value: Any, part: PartOf) -> Expression:
        """``part`` of the date at ``value``, every part computed per row (``part``); of a JSON key's text, its year."""
        if not part.text:
            return self.part(value, part)
        if part.name != "year":
            msg = f"the part {part.name!r} of a JSON key's date text is not defined"
            raise ValueError(msg)
        return self.sql(self.database.text_year, ValueType.INTEGER, value)

    def exact(self, value: Expression) -> Expression:
        """``value`` as equality compares it: exactly, text by code point (docs: design, "Case and patterns").

        The value itself, unless the database's collation merges values (a dialect overrides it).
        """
        return value

    # -- nodes --------------------------------------------------------------------------------
    def _leaf(self, item: Filter) -> Callable[[Any], Expression]:
        build = dispatch(self, "op", item.operator.name, key=item.key or item.name)
        part = None if item.operator.name == "isnull" else item.part  # a part is NULL where its field is

        def leaf(column: Any) -> Expression:
            condition: Expression
            if part is None:
                condition = build(column, item.value)
            elif part.ranged:
                condition = self.within(column, part.spans(item.operator.name, item.value))
            else:
                condition = build(self.part(column, part), item.value)
            if item.operator.matches_null:
                return self.any_of([condition, self.is_null(column, null=True)])
            return condition

        text = _TEXT_MATCHES.get(item.operator.name)
        if text is not None and part is None and not item.operator.matches_null:
            make, folded = text
            return TextMatch(leaf, make(item.value), folded=folded)
        return leaf

    def filter(self, source: Any, item: Filter, policies: Policies = _NO_POLICIES) -> Expression:
        """One filter: the operator's ``op_<name>``, OR the value IS NULL when the operator matches NULL."""
        key = item.path.key
        if key is not None and key.many and item.operator.name == "isnull":
            # Whether the document holds a list there at all, not an element (docs: query language,
            # "Keys of JSON documents").
            null = bool(item.value)

            def listed(document: Any) -> Expression:
                return self.is_null(self.json_list(document, key), null=null)

            return self.predicate(source, FieldPath(item.path.segments), listed, semi=not null, policies=policies)
        # A filter that NULL satisfies must see the NULL of a missing related row: it keeps the join.
        return self.predicate(source, item.path, self._leaf(item), semi=not item.matches_null, policies=policies)

    def search(self, source: Any, search: Search, policies: Policies = _NO_POLICIES) -> Expression:
        """Case-insensitive substring search over the searchable paths, OR-combined (docs: query language, "Search")."""
        leaf = self._search_leaf(search)
        return self.any_of([self.predicate(source, path, leaf, semi=True, policies=policies) for path in search.paths])

    def _search_leaf(self, search: Search) -> TextMatch:
        pattern = contains_pattern(search.text)
        return TextMatch(lambda column: self.ilike(column, pattern), pattern, folded=True)

    def narrows_search(self, query: ListQuery) -> bool:
        """Whether ``query``'s search may read its candidates from its fields' indexes (``SearchForm``).

        On a database that reads them (``Database.search_candidates``), for a listed model keyed by
        one column: every searched path is in ``indexed_search``, and where one is a field of the
        listed model itself, the text has a trigram to look up (``indexes.trigram_match``); without
        one, a trigram index holds no candidates for it and its arm would read every row.
        """
        search, indexed = query.search, self.indexed_search
        if search is None or indexed is None or self.database.search_candidates is None:
            return False
        if len(self.graph.root_entity.pk) != 1:
            return False
        if not all(path.name in indexed.paths for path in search.paths):
            return False
        own = any(not path.relations for path in search.paths)
        return not own or trigram_match(contains_pattern(search.text), folded=True) is not None

    @property
    def candidate_limit(self) -> int:
        """Up to how many candidates a search reads them: ``CANDIDATE_LIMIT``, or the database's share of the table.

        ``Database.candidate_share`` of the listed table's rows when the application started
        (``IndexedSearch.rows``), if that is more (docs: indexes, "Search from indexes").
        """
        rows = 0 if self.indexed_search is None else self.indexed_search.rows
        return max(CANDIDATE_LIMIT, int(rows * self.database.candidate_share))

    def search_keys(self, query: ListQuery) -> Statement:
        """The primary keys of the rows each searched path matches, one ``SELECT`` each, ``UNION ALL``.

        Each arm is the search's own match on one path, in a statement of its own, where an index of
        the listed table finds its rows: a trigram index for its own field, the index over a relation's
        columns for a path through it. Every row the search matches is among them; the statement
        that reads them still tests the search itself (docs: indexes, "Search from indexes").
        """
        search = query.search
        if search is None:
            msg = "search_keys needs a query with a search"
            raise ValueError(msg)
        policies = self.policies(query)
        leaf = self._search_leaf(search)
        arms = []
        for path in search.paths:
            source = self.source()
            matched = self.predicate(source, path, leaf, semi=True, policies=policies)
            arms.append(self.keys_statement(source, matched, (), None, None))
        return self.union_keys(arms)

    def nullable(self, term: OrderTerm) -> bool:
        """Whether ``term``'s value can be NULL: a relation path (a LEFT JOIN), a computed alias, a nullable column."""
        path = term.path
        return bool(path.relations or path.key) or path.field in self.computed or self.nullable_field(path.field)

    def order_term(self, term: OrderTerm, value: Expression) -> Expression:
        """One ORDER BY term over ``value``; NULLs last in both directions (docs: design, "Ordering")."""
        return self.ordered(value, descending=term.descending, nulls_last=self.nullable(term))

    def keyset(self, query: ListQuery, values: Sequence[Expression]) -> Expression:
        """Rows that sort after ``query.after`` in ``query.order`` (``core.cursor.follows`` in SQL).

        One disjunct per term: the earlier terms equal, this one after (NULLs last); plus a bound
        on the leading term alone, which lets the database start from an index position. When
        every term has one direction and cannot be NULL, a row-value comparison says the same.
        """
        assert query.after is not None  # noqa: S101 - only called for a continued query
        terms = list(zip(query.order, values, query.after, strict=True))
        directions = {term.descending for term in query.order}
        if len(directions) == 1 and not any(self.nullable(term) or bound is None for term, _, bound in terms):
            bounds = [self.bind(bound, like=value) for _, value, bound in terms]
            return self.row_compare(values, "<" if query.order[0].descending else ">", bounds)
        disjuncts: list[Expression] = []
        equal: list[Expression] = []
        for term, value, bound in terms:
            if bound is not None:
                beyond = self.compare(value, "<" if term.descending else ">", self.bind(bound, like=value))
                if self.nullable(term):
                    beyond = self.any_of([beyond, self.is_null(value, null=True)])
                disjuncts.append(self.all_of([*equal, beyond]))
            equal.append(
                self.is_null(value, null=True)
                if bound is None
                else self.compare(value, "=", self.bind(bound, like=value))
            )
        lead_term, lead, lead_bound = terms[0]
        if lead_bound is None:
            leading = self.is_null(lead, null=True)
        else:
            leading = self.compare(lead, "<=" if lead_term.descending else ">=", self.bind(lead_bound, like=lead))
            if self.nullable(lead_term):
                leading = self.any_of([leading, self.is_null(lead, null=True)])
        return self.all_of([leading, self.any_of(disjuncts) if disjuncts else self.constant(value=False)])

    def within(self, column: Any, spans: Sequence[Span]) -> Expression:
        """``column`` inside one of ``spans`` (half-open, ``low <= column < high``): a date part as a range.

        Comparisons of the column itself, which an ordinary index on it serves (docs: query
        language, "Parts of dates"); a span open on both sides is any value but NULL, no span no row.
        """
        conditions = []
        for low, high in spans:
            ends = [] if low is None else [self.compare(column, ">=", self.bind(low))]
            ends += [] if high is None else [self.compare(column, "<", self.bind(high))]
            conditions.append(self.all_of(ends) if ends else self.is_null(column, null=False))
        return self.any_of(conditions) if conditions else self.constant(value=False)

    def json_value(self, document: Any, key: JsonKey) -> Expression:
        """The value at ``key`` in the JSON ``document``, NULL where it is missing, JSON null or not of the key's type.

        By the database's SQL (``Database.json_value``), as ``JsonKey.values`` defines it (docs: query
        language, "Keys of JSON documents").
        """
        found = self.database
        return self.sql(found.json_template(found.json_value[key.type], key.keys), key.type, document)

    def json_any(self, document: Any, key: JsonKey, leaf: Callable[[Any], Expression]) -> Expression:
        """Some element of the list at ``key`` in ``document``, of the key's type, meets ``leaf``."""
        found = self.database
        element = self.sql(found.json_element[key.type], key.type)
        template = found.json_template(found.json_some, key.keys)
        return self.sql(template, ValueType.BOOLEAN, document, element, leaf(element))

    def json_list(self, document: Any, key: JsonKey) -> Expression:
        """A value that is NULL unless ``document`` holds a list at ``key`` (for ``isnull``)."""
        found = self.database
        return self.sql(found.json_template(found.json_list, key.keys), ValueType.INTEGER, document)

    def part(self, column: Any, part: PartOf) -> Expression:
        """The ``part`` of the date or datetime ``column``, in UTC, by the database's SQL.

        An integer, a date for ``date`` (``Part.type``).

        ``Database.parts`` holds the SQL of each part per database (a template of the column), and
        ``Database.utc`` the SQL that reads an offset-carrying column in UTC first.
        """
        found = self.database
        template = found.parts[part.name]
        if part.field_type is ValueType.DATETIME and part.aware:
            template = template.format(found.utc)
        return self.sql(template, part.part.type, column)

    # -- operators (one per entry of core.operators.OPERATORS) --------------------------------
    def _compare(self, name: str, column: Any, value: Any) -> Expression:
        return self.compare(column, _COMPARISONS[name], self.bind(value))

    def op_eq(self, column: Any, value: Any) -> Expression:  # noqa: D102
        return self._compare("eq", column, value)

    def op_ne(self, column: Any, value: Any) -> Expression:  # noqa: D102
        return self._compare("ne", column, value)

    def op_gt(self, column: Any, value: Any) -> Expression:  # noqa: D102
        return self._compare("gt", column, value)

    def op_gte(self, column: Any, value: Any) -> Expression:  # noqa: D102
        return self._compare("gte", column, value)

    def op_lt(self, column: Any, value: Any) -> Expression:  # noqa: D102
        return self._compare("lt", column, value)

    def op_lte(self, column: Any, value: Any) -> Expression:  # noqa: D102
        return self._compare("lte", column, value)

    def op_in(self, column: Any, value: tuple[Any, ...]) -> Expression:  # noqa: D102
        return (
            self.among(column, [self.bind(item) for item in value], negate=False)
            if value
            else self.constant(value=False)
        )

    def op_nin(self, column: Any, value: tuple[Any, ...]) -> Expression:  # noqa: D102
        return (
            self.among(column, [self.bind(item) for item in value], negate=True) if value else self.constant(value=True)
        )

    def op_between(self, column: Any, value: tuple[Any, Any]) -> Expression:  # noqa: D102
        low, high = value
        return self.all_of([self.compare(column, ">=", self.bind(low)), self.compare(column, "<=", self.bind(high))])

    def op_isnull(self, column: Any, value: bool) -> Expression:  # noqa: D102, FBT001
        return self.is_null(column, null=value)

    def op_like(self, column: Any, value: LikePattern) -> Expression:  # noqa: D102
        return self._text_match("like", column, value)

    def op_ilike(self, column: Any, value: str) -> Expression:  # noqa: D102
        return self._text_match("ilike", column, value)

    def op_startswith(self, column: Any, value: str) -> Expression:  # noqa: D102
        return self._text_match("startswith", column, value)

    def op_istartswith(self, column: Any, value: str) -> Expression:  # noqa: D102
        return self._text_match("istartswith", column, value)

    def op_endswith(self, column: Any, value: str) -> Expression:  # noqa: D102
        return self._text_match("endswith", column, value)

    def op_iendswith(self, column: Any, value: str) -> Expression:  # noqa: D102
        return self._text_match("iendswith", column, value)

    def _text_match(self, name: str, column: Any, value: Any) -> Expression:
        make, folded = _TEXT_MATCHES[name]
        return self.ilike(column, make(value)) if folded else self.like(column, make(value))

    def op_contains(self, column: Any, value: Any) -> Expression:  # noqa: D102
        return self._compare("eq", column, value)  # ``column`` is one element of the list (``json_any``)

    def defers(self, query: ListQuery) -> bool:
        """Whether ``query``'s page is fetched by a deferred join (keys first, then the page's rows).

        From ``DEFERRED_OFFSET`` skipped rows on, where the rows skipped would otherwise be read
        whole; a dialect may defer other pages too. Never a keyset page, which skips nothing.
        """
        return query.window.offset >= DEFERRED_OFFSET

    def counts_in_page(self, query: ListQuery) -> bool:
        """Whether ``query``'s page statement can select its total beside its rows (``compile(total=True)``).

        A window count over the matching rows, before the page is cut (``window_count``): not after a
        keyset cursor, whose statement leaves out the rows before it, nor in a deferred join, whose
        rows are the page's keys only (docs: design, "Totals"). A dialect may refuse more.
        """
        return query.after is None and not self.defers(query)

    def deferred_page(
        self,
        source: Any,
        keys: Statement,
        order: Sequence[Expression],
        selected: Sequence[Any],
        labelled: Sequence[tuple[str, Expression]],
        limit: int,
    ) -> Statement:
        """The page of a deferred join: the rows whose primary keys ``keys`` reads, ordered.

        ``<primary key> IN (<keys>)`` (``among_keys``), unless the database is better served otherwise
        (a dialect overrides it).
        """
        return self.page_statement(source, self.among_keys(keys), order, selected, labelled, limit, None)

    def sortable(self, value: Expression) -> Expression:
        """The value a field is ordered by, as the query language orders its type (docs: design, "Ordering").

        The value itself, unless the database orders the type otherwise (a dialect overrides it).
        """
        return value

    # -- dialect primitives: statements -------------------------------------------------------
    @property
    @abstractmethod
    def database(self) -> Database:
        """The database it compiles for (``relational.databases``)."""

    @abstractmethod
    def source(self) -> Any:
        """A new source for the main statement."""

    @abstractmethod
    def total_statement(self, source: Any, condition: Expression | None) -> Statement:
        """``SELECT COUNT(*)`` over the listed rows that meet ``condition``."""

    @abstractmethod
    def page_statement(
        self,
        source: Any,
        condition: Expression | None,
        order: Sequence[Expression],
        selected: Sequence[Any],
        labelled: Sequence[tuple[str, Expression]],
        limit: int,
        offset: Any,
    ) -> Statement:
        """The page: the listed rows meeting ``condition``, ordered and cut.

        It selects ``selected`` (or the base statement's columns) then the ``labelled`` values.
        ``offset``: the rows skipped (an int, or a value ``bind`` takes); None: none are skipped by
        offset (a keyset page or a deferred join).
        """

    @abstractmethod
    def window_count(self) -> Expression:
        """``COUNT(*) OVER ()``: the rows of the statement before its ``LIMIT`` and ``OFFSET``."""

    @abstractmethod
    def keys_statement(
        self,
        source: Any,
        condition: Expression | None,
        order: Sequence[Expression],
        limit: int | None,
        offset: Any,
    ) -> Statement:
        """The primary keys of one page, for a deferred join, or of every row (``limit`` None); uncorrelated."""

    @abstractmethod
    def among_keys(self, keys: Statement) -> Expression:
        """``<primary key> IN (<keys>)``."""

    @abstractmethod
    def union_keys(self, statements: Sequence[Statement]) -> Statement:
        """``statements`` (each the primary keys of some rows) combined with ``UNION ALL``; one: itself."""

    @abstractmethod
    def statement_value(self, statement: Statement) -> Any:
        """``statement`` as a value in parentheses, for a template (``condition_sql``)."""

    @abstractmethod
    def capped_count(self, keys: Statement, limit: int) -> Statement:
        """``SELECT COUNT(*)`` of the rows of ``keys``, ``limit`` at most: their reading stops there.

        Selects one column, as ``total_statement`` does.
        """

    @abstractmethod
    def listed_rows(
        self,
        source: Any,
        condition: Expression | None,
        selected: Sequence[tuple[str, Expression]],
        *,
        distinct: bool = False,
        grouped: int = 0,
    ) -> Statement:
        """``SELECT [DISTINCT] <selected, labelled> FROM <the listed rows, source's joins> WHERE <condition>``.

        The rows of the base statement; with ``grouped``, ``GROUP BY`` the first ``grouped`` columns
        selected, by position (an expression with parameters is never written twice).
        """

    @abstractmethod
    def derived(self, statement: Statement, name: str) -> Any:
        """``(<statement>) AS <name>``: a FROM item of ``statement``'s rows (``derived_column``, ``from_derived``)."""

    @abstractmethod
    def derived_column(self, derived: Any, label: str) -> Expression:
        """The column labelled ``label`` of a ``derived`` FROM item."""

    @abstractmethod
    def from_derived(
        self,
        derived: Any,
        selected: Sequence[tuple[str, Expression]],
        *,
        grouped: int = 0,
        order: Sequence[Expression] = (),
        limit: int | None = None,
    ) -> Statement:
        """``SELECT <selected, labelled> FROM <derived> [GROUP BY <the first grouped>] [ORDER BY] [LIMIT]``."""

    @abstractmethod
    def join_many(self, source: Any, place: Any, relation: Any, reach: Reach) -> Expression:
        """The value ``reach`` reads from each related row of the to-many ``relation`` at ``place``.

        A statement of its own (uncorrelated) reads the related rows that exist (a link naming no
        row is none) and meet the condition ``reach`` returns, each with its value and the keys
        that tie it to ``place``; ``source`` LEFT JOINs it on those keys.
        """

    @abstractmethod
    def join_sql(self, source: Any, template: str, condition: Expression, *values: Any) -> None:
        """LEFT JOIN, in ``source``, the FROM item of the SQL ``template`` ON ``condition``.

        ``values`` go in place of the template's ``{0}``, ``{1}``...
        """

    # -- dialect primitives: paths ------------------------------------------------------------
    @abstractmethod
    def start(self, source: Any) -> Any:
        """The place at ``source``'s root."""

    @abstractmethod
    def relation(self, place: Any, name: str) -> Any:
        """The relation ``name`` of the model at ``place``."""

    @abstractmethod
    def is_to_many(self, relation: Any) -> bool:
        """Whether ``relation`` reaches many rows."""

    @abstractmethod
    def join(self, source: Any, place: Any, steps: tuple[str, ...], relation: Any) -> Any:
        """The place across the to-one ``relation``: one LEFT JOIN alias per path ``steps`` in ``source``."""

    @abstractmethod
    def semi_join_one(self, place: Any, relation: Any, inner: Continue) -> Expression | None:
        """``<key> IN (SELECT <target key> FROM <target> WHERE <inner>)``, or None where it cannot be had."""

    @abstractmethod
    def semi_join_many(self, place: Any, relation: Any, inner: Continue, *, semi: bool) -> Expression:
        """A condition that some row of the to-many ``relation`` meets ``inner``."""

    @abstractmethod
    def field(self, place: Any, name: str) -> Any:
        """The column of field ``name`` at ``place``."""

    @abstractmethod
    def nullable_field(self, name: str) -> bool:
        """Whether the listed model's own field ``name`` can be NULL."""

    # -- dialect primitives: conditions and values --------------------------------------------
    @abstractmethod
    def all_of(self, parts: Sequence[Expression]) -> Expression:
        """``parts`` combined with AND (one part: itself)."""

    @abstractmethod
    def any_of(self, parts: Sequence[Expression]) -> Expression:
        """``parts`` combined with OR (one part: itself)."""

    @abstractmethod
    def constant(self, *, value: bool) -> Expression:
        """A condition that always (``value``) or never holds."""

    @abstractmethod
    def bind(self, value: Any, like: Any = None) -> Any:
        """A coerced value as a bind parameter; ``like`` is the expression it is compared with, if typed.

        A dialect that compiles query shapes (``shapes.shape_of``) binds a ``Slot`` as the named
        parameter it stands for.
        """

    @abstractmethod
    def compare(self, left: Any, operator: str, right: Any) -> Expression:
        """``left <operator> right``; ``operator`` is one of ``= <> < <= > >=``."""

    @abstractmethod
    def row_compare(self, left: Sequence[Any], operator: str, right: Sequence[Any]) -> Expression:
        """The row-value comparison ``(left...) <operator> (right...)``."""

    @abstractmethod
    def among(self, column: Any, values: Sequence[Any], *, negate: bool) -> Expression:
        """``column IN (values)``, or ``NOT IN`` with ``negate``; ``values`` is never empty."""

    @abstractmethod
    def guarded(self, value: Any, condition: Expression) -> Any:
        """``CASE WHEN condition THEN value END``: ``value`` where ``condition`` holds, else NULL."""

    @abstractmethod
    def is_null(self, value: Any, *, null: bool) -> Expression:
        """``value IS NULL`` (``null``) or ``IS NOT NULL``."""

    @abstractmethod
    def ordered(self, value: Any, *, descending: bool, nulls_last: bool) -> Expression:
        """One ORDER BY term."""

    @abstractmethod
    def like(self, column: Any, pattern: LikePattern) -> Expression:
        """The case-sensitive pattern match (GLOB on SQLite, LIKE elsewhere; docs: design, "Case and patterns")."""

    @abstractmethod
    def sql(self, template: str, value_type: ValueType, *values: Any) -> Expression:
        """The SQL ``template`` with ``values`` in place of its ``{0}``, ``{1}``... (``Database``), a ``value_type``."""

    @abstractmethod
    def condition_sql(self, template: str, *values: Any) -> Expression:
        """The SQL ``template`` with ``values`` in place of its ``{0}``, ``{1}``...: a condition, as written.

        Unlike a boolean ``sql`` value, never compared with true: a planner reads it as it is.
        """

    @abstractmethod
    def ilike(self, column: Any, pattern: LikePattern) -> Expression:
        """The match ignoring case by Unicode case folding on every database (docs: design, "Case and patterns")."""
