"""The ``ListingBackend`` protocol, its capabilities, and the visitor dispatch backends share."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, get_args, runtime_checkable

from litestar_listing.core.errors import ConfigurationError, UnavailableError, UnsupportedQueryError
from litestar_listing.core.operators import OPERATORS, Operator
from litestar_listing.core.parts import PARTS
from litestar_listing.core.query import Combine, Filter, FilterSyntax, RawFilter

if TYPE_CHECKING:
    from litestar_listing.core.facets import FacetPage, FacetQuery
    from litestar_listing.core.query import ListQuery, Policy, Search
    from litestar_listing.core.schema import FieldInfo, ModelGraph

__all__ = (
    "TOTAL_MODES",
    "Capabilities",
    "CompilerCache",
    "Computed",
    "FacetBackend",
    "IndexedSearch",
    "ListContext",
    "ListingBackend",
    "Page",
    "TotalMode",
    "TrigramTable",
    "check_contract",
    "dispatch",
    "driver_unavailable",
    "field_filter",
    "offered_operators",
    "where",
)

TotalMode = Literal["exact", "estimated"]
"""How a list's total is counted: ``"exact"`` (docs: design, "Totals") or ``"estimated"``, the planner's row estimate
(an extension: ``Resource.total_mode``, ``ListContext.total_mode``, ``Capabilities.total_modes``,
``Page.total_mode``)."""
TOTAL_MODES: tuple[TotalMode, ...] = get_args(TotalMode)

ModelT_co = TypeVar("ModelT_co", covariant=True)
ExpressionT_co = TypeVar("ExpressionT_co", covariant=True)


@dataclass(frozen=True, slots=True)
class Computed(Generic[ModelT_co, ExpressionT_co]):
    """A computed value (docs: computed) that reads rows of other models, under their row policies.

    A plain computed expression is fixed when the backend is built, so it cannot see the request:
    counting rows of a model that has a row policy, it would count every tenant's rows. A
    ``Computed`` is built for each list instead, from the request's policies (docs: scoping, "Row policies";
    computed): ``build(allowed)``, where
    ``allowed(model, alias=None)`` is the condition that ``model``'s policy puts on the rows the
    value reads, always true when it has none and always false when the request may see none of
    them. The value is listed and orderable like any computed value.

    The backends take it where they take a computed expression, and ``allowed`` names the rows it
    is over in each one's terms:

    * ``SQLAlchemyBackend(computed=...)``: a ``ColumnElement[bool]`` over the columns of the entity
      passed, a mapped class or an ``aliased(...)`` of one (``allowed(child)`` with
      ``child = aliased(Project)``); SQLAlchemy takes no second argument.
    * ``PiccoloBackend(computed=...)``: a ``QueryString`` over the table's rows as the statement
      names them: ``allowed(Table)`` over ``"<table>"."<column>"``, ``allowed(Table, "child")`` over
      ``"child"."<column>"``, for ``FROM <table> AS child``.
    * ``BeanieBackend(computed=...)``: an aggregation expression over ``$$this`` (``allowed(Document)``)
      or ``$$child`` (``allowed(Document, "child")``), a document of the class as the ``$filter`` or
      ``$map`` that reads it names it (its ``as``).

    A value that reads the listed model itself (a self-reference, or the same model twice) reads it
    through aliases. On SQLAlchemy and Piccolo ``allowed`` of the listed model unaliased is refused
    when the backend is built: those columns are the listed row's, which its own policy already
    restricts, not the rows the value counts.

    Attributes:
        build: ``allowed -> expression``: the value as the backend's expression, called at most
            once per dialect and distinct set of policies (the backends keep the result), and once
            when the backend is built, without policies.
        reads: The models ``build`` passes to ``allowed`` (mapped classes, tables or documents; an
            alias reads its model). Their policies are resolved with the listed model's, and the
            plugin refuses at start a model some resource scopes that has no row policy
            (``Resource.public_paths`` may name the computed value instead). ``allowed`` of any
            other model is a ``ConfigurationError``.
    """

    build: Callable[[Callable[..., Any]], ExpressionT_co]
    reads: tuple[ModelT_co, ...]

    def built(
        self,
        name: str,
        name_of: Callable[[Any], str],
        condition: Callable[[Any, Any, Policy | None], object],
        policies: Mapping[str, Policy],
    ) -> ExpressionT_co:
        """The expression for one list: ``build`` with ``allowed(model, alias) = condition(model, alias, its policy)``.

        Args:
            name: The computed alias, for the errors.
            name_of: A model's name in the ``ModelGraph`` (its class name), given what ``allowed``
                was passed (a backend may take an alias there); it raises ``ConfigurationError`` for
                what names no model.
            condition: The backend's condition of a policy (None for none) on the rows of a model
                that ``alias`` names (None: the backend's default). It raises
                ``ConfigurationError`` for rows it cannot police.
            policies: The list's policies by model name (``ListQuery.policies``).

        Raises:
            ConfigurationError: ``build`` asked for a model that is not in ``reads`` (its policy
                was not resolved, so the value could count rows the request may not see), or for
                rows the backend refuses; the message names the computed value.
        """
        reads = {name_of(model) for model in self.reads}

        def allowed(model: Any, alias: Any = None) -> object:
            try:
                read = name_of(model)
                if read in reads:
                    return condition(model, alias, policies.get(read))
            except ConfigurationError as error:
                msg = f"the computed value {name!r}: {error}"
                raise ConfigurationError(msg) from None
            msg = f"the computed value {name!r} reads {read}: name it in Computed(reads=...)"
            raise ConfigurationError(msg)

        return self.build(allowed)

    def read_names(self, name_of: Callable[[Any], str]) -> tuple[str, ...]:
        """The names of ``reads``, for ``FieldInfo.reads``."""
        return tuple(dict.fromkeys(name_of(model) for model in self.reads))


def read_models(computed: Iterable[object], name_of: Callable[[Any], str]) -> tuple[str, ...]:
    """The names of the models the ``Computed`` values among ``computed`` read, each once."""
    return tuple(
        dict.fromkeys(name for value in computed if isinstance(value, Computed) for name in value.read_names(name_of))
    )


ValueT = TypeVar("ValueT")


class CompilerCache(Generic[ValueT]):
    """A backend's compilers, kept per database and per set of the row policies its ``Computed`` values read.

    A tenant's second list reuses its statements; at most ``size`` sets are kept (then all are
    dropped and built again). Without ``Computed`` values, one value per dialect.

    Args:
        reads: The model names the ``Computed`` values read (``read_models``).
        size: The number of sets kept.
    """

    __slots__ = ("_kept", "reads", "size")

    def __init__(self, reads: Sequence[str], size: int = 256) -> None:
        self.reads = tuple(reads)
        self.size = size
        self._kept: dict[tuple[Hashable, tuple[Policy | None, ...]], ValueT] = {}

    def get(
        self, dialect: Hashable, query: ListQuery | None, build: Callable[[Mapping[str, Policy]], ValueT]
    ) -> ValueT:
        """The value for ``dialect`` (a name, or what else the value depends on) and ``query``'s policies.

        Kept, or ``build(policies by model name)``.
        """
        key = _policies_key(query, self.reads) if self.reads and query is not None else ()
        value = None if key is None else self._kept.get((dialect, key))
        if value is None:
            value = build({} if query is None else {policy.entity: policy for policy in query.policies})
            if key is not None:
                if len(self._kept) >= self.size:
                    self._kept.clear()
                self._kept[dialect, key] = value
        return value


def _policies_key(query: ListQuery, names: Sequence[str]) -> tuple[Policy | None, ...] | None:
    """The policies of ``names`` in ``query``; None when one cannot be a key (unhashable values).

    When one of them follows a relation (``Policy.through``), every policy of ``query`` too: the
    condition it puts on its rows reads the policies of the related models.
    """
    found = {policy.entity: policy for policy in query.policies if policy.entity in names}
    key: tuple[Policy | None, ...] = tuple(found.get(name) for name in names)
    if any(policy is not None and policy.through for policy in key):
        key = (*key, *query.policies)
    try:
        hash(key)
    except TypeError:
        return None
    return key


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can compile; conformance cases skip by these, never by backend name.

    Attributes:
        operators: The operator names it compiles (none for document stores; docs: query language,
            "Filters and operators").
        relation_paths: Filters, search and order through relations (docs: query language, "Relation paths").
        to_many_paths: Filters and search through to-many relations.
        computed_order: Ordering by a computed alias mapped to an expression (docs: computed).
        filter_syntax: How filter names are read: relation paths and operator suffixes
            (relational stores; docs: query language, "Relation paths") or the document-store rules
            (docs: query language, "Document-store resources").
        raw_filters: Compiles ``RawFilter``: allowlisted raw store keys (docs: query language,
            "Document-store resources").
        keyset: Continues after ``ListQuery.after`` and reports ``Page.last_key`` (keyset
            continuation, ``core.cursor``).
        total_modes: The ``TotalMode`` values it can answer; a backend without ``"estimated"``
            counts exactly when ``ListContext.total_mode`` asks for an estimate.
        row_policies: Applies ``ListQuery.policies`` wherever rows of a model are reached (the
            listed rows, relation paths, eager loading); an application may not give a policy to
            a model one of its resources reaches through a backend without it (checked at start).
        inherited_policies: Applies a policy that follows a relation (``Policy.through``) wherever
            it applies the others; an application may not give one to a model one of its resources
            reaches through a backend without it (checked at start).
        parts: The date parts it compiles (``core.parts.PARTS``): filters on ``<path>__<part>`` of
            every filterable date and datetime path (docs: query language, "Parts of dates").
        json_keys: Filters, ordering and search on the keys of JSON fields a resource declares
            (``Resource.json_keys``; docs: query language, "Keys of JSON documents").
        count_in_page: Reads the total in the page's own statement when ``ListContext.count_in_page``
            asks for it (docs: design, "Totals").
        facets: Counts facets (``FacetBackend.facet_counts``; docs: facets): a resource may declare
            ``facet_fields`` only on such a backend (checked at start).
    """

    operators: frozenset[str] = frozenset(OPERATORS)
    relation_paths: bool = True
    to_many_paths: bool = True
    computed_order: bool = True
    filter_syntax: FilterSyntax = FilterSyntax.RELATIONAL
    raw_filters: bool = False
    keyset: bool = False
    total_modes: frozenset[TotalMode] = frozenset({"exact"})
    row_policies: bool = False
    inherited_policies: bool = False
    parts: frozenset[str] = frozenset(PARTS)
    json_keys: bool = True
    count_in_page: bool = False
    facets: bool = False


@dataclass(frozen=True, slots=True)
class TrigramTable:
    """A trigram table whose candidates a text match on one field reads first.

    Docs: indexes, "Trigram indexes on SQLite". The plugin finds them in an application's SQLite
    database when it starts (``plugin.indexes.trigram_tables``).

    Attributes:
        entity: The model (a ``ModelGraph`` entity name).
        field: Its text field.
        table: The FTS5 table of the field's column, named by the model's integer primary key.
    """

    entity: str
    field: str
    table: str


@dataclass(frozen=True, slots=True)
class IndexedSearch:
    """The searched paths whose matches an index of the listed table finds, and the table's size.

    Docs: indexes, "Search from indexes". The plugin reads them from an application's database when
    it starts (``plugin.indexes.indexed_search``).

    Attributes:
        paths: The searchable paths (``FieldPath.name``) such an index serves.
        rows: The listed table's rows then (counted on SQLite, the planner's estimate elsewhere):
            how many candidates are few (``RelationalCompiler.candidate_limit``).
    """

    paths: frozenset[str]
    rows: int


@dataclass(frozen=True, slots=True)
class ListContext:
    """Per-call inputs of ``ListingBackend.fetch`` besides the query.

    Attributes:
        request: The Litestar request, when called from a route (backends may take their
            session or connection from it).
        session: An explicit session or connection; wins over the one from ``request``.
        load: Relations to eager-load with the page items (docs: eager loading), e.g. ``("airline",)``.
        deadline: When the call must end, on ``time.monotonic()``'s clock, or None. Backends whose
            store can stop its own work give it the time left (``remaining``) when a statement
            starts, so time spent waiting for a pooled connection counts; the caller cancels the
            call a little later in any case.
        keyset: Report the ordering values of the page's last item in ``Page.last_key``.
        total_mode: ``"exact"`` (docs: design, "Totals") or ``"estimated"``: a backend with ``"estimated"`` in its
            ``Capabilities.total_modes`` may answer with the planner's row estimate when it is at
            least ``exact_total_below``.
        exact_total_below: Estimates under this many rows are replaced by an exact count.
        primary: Read from the primary even where a backend has read replicas (read-your-writes after
            a commit, for example); a session that holds a transaction or pending writes reads there anyway.
        parallel: The database may spread the list's statements over several of its cores (PostgreSQL's
            parallel workers) and count beside the page on a second connection. False holds the list
            to one core of the server: the plugin sets it for the lists of the expensive lane (docs:
            admission, "One core per expensive list"). A store that runs each statement on one core
            already ignores it.
        count_in_page: Read an exact total in the page's own statement (a window count) where the
            backend can (``Capabilities.count_in_page``), instead of counting apart; the plugin sets it
            for a list whose page sorts and searches every matching row anyway
            (``core.cost.counts_with_page``; docs: design, "Totals"). A backend that cannot ignores it.
        by_key: The list reads its rows by key (a search read from its candidates; set by the
            relational execution): the database's settings for that apply (``Database.key_settings``).
        trigram_tables: The trigram tables a SQLite statement may read its text matches' candidates
            from (the application's, found when it started); a backend or database without them ignores them.
        indexed_search: The searchable paths whose matches an index of the listed table finds, and
            the table's size, found when the application started (``plugin.indexes.indexed_search``):
            a search over these alone reads its rows from the indexes when they hold few (docs:
            indexes, "Search from indexes"); None: none is. A backend without SQL tables ignores it.
    """

    request: Any = None
    session: Any = None
    load: tuple[str, ...] = ()
    deadline: float | None = None
    keyset: bool = False
    total_mode: TotalMode = "exact"
    exact_total_below: int = 10_000
    primary: bool = False
    parallel: bool = True
    count_in_page: bool = False
    by_key: bool = False
    trigram_tables: frozenset[TrigramTable] = frozenset()
    indexed_search: IndexedSearch | None = None

    def remaining(self) -> float | None:
        """Seconds left before ``deadline`` (at least a millisecond), or None without one.

        Raises:
            UnavailableError: The deadline has passed (``reason="timeout"``): no statement should start.
        """
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            msg = "the time for this list ran out before its statement could start"
            raise UnavailableError(msg, reason="timeout")
        return max(left, 0.001)


@dataclass(slots=True)
class Page:
    """One page of a list and the total across all pages (docs: query language, "The envelope and pagination").

    Attributes:
        items: The page's items as plain dicts of field name -> value (loaded relations nested).
        total: Items matching forced filters, filters and search, before the window.
        total_mode: ``"estimated"`` when ``total`` is the planner's estimate, not a count
            (``ListContext.total_mode``); ``"exact"`` otherwise.
        last_key: With ``ListContext.keyset``, the ordering values of the last item, one per term
            of ``ListQuery.order``; None for an empty page.
    """

    items: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    total_mode: TotalMode = "exact"
    last_key: tuple[object, ...] | None = None


@runtime_checkable
class ListingBackend(Protocol):
    """A store that lists one model: everything the plugin and the compilers need of it.

    Implementations: ``backends.memory.MemoryBackend`` (the reference),
    ``backends.sqlalchemy.SQLAlchemyBackend``, ``backends.piccolo.PiccoloBackend`` and
    ``backends.beanie.BeanieBackend``. The plugin checks every member when the application starts
    (``check_contract``; docs: backends, "Capability differences").

    ``capabilities`` says what it can compile; conformance cases skip by these.
    """

    capabilities: Capabilities

    @property
    def visitor(self) -> type[Any]:
        """The class whose ``op_<name>`` methods compile the declared operators.

        Its statement compiler, or the backend's own class where it compiles them itself; a
        backend that delegates to another names the other's.
        """
        ...

    @property
    def type_encoders(self) -> Mapping[Any, Callable[[Any], Any]]:
        """Encoders the plugin adds to the application for the values its items hold, by type.

        ``{ObjectId: str}`` on a document store; empty for most.
        """
        ...

    @property
    def narrows_rows(self) -> bool:
        """Whether its base list query may leave rows of the model out (soft-deleted ones, say).

        The start-up check then treats the model as scoped, and its lists count their totals
        exactly (docs: scoping, "The start-up check").
        """
        ...

    def model_graph(self) -> ModelGraph:
        """Describe the listed model and every model reachable from it."""
        ...

    def computed_fields(self) -> Mapping[str, FieldInfo]:
        """The computed aliases mapped to expressions, by name (docs: computed)."""
        ...

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        """Run ``query``: the page of items and the exact total.

        Raises:
            UnsupportedQueryError: The query uses something the backend cannot compile.
            UnavailableError: The store is unreachable, dropped the connection, has no free
                connection, or cancelled the statement.
        """
        ...

    def prepare(self) -> None:
        """Prepare once while the application is built, before any connection is opened."""
        ...

    def check_started(self, app: Any, *, routed: bool) -> None:
        """Check, once the application has started, that it gives the backend what its lists need.

        The plugin calls it from its start-up hook, which runs after the application's lifespan
        context managers and the start-up hooks registered before it: by then a session maker is in
        the application's state, a connection pool is open, a document class is bound (docs: in your
        app, "Start-up checks").

        Args:
            app: The started Litestar application (its ``state``).
            routed: Whether a route of the application lists the resource without a session of its
                own (the mounted route, ``listing_route``, ``provide_page``), so the backend must
                find one itself.

        Raises:
            ConfigurationError: What the application lacks, and how to give it.
        """
        ...

    def unavailable(self, error: BaseException) -> UnavailableError | None:
        """What an exception raised by the store's client amounts to: ``UnavailableError``, or None for a bug.

        The plugin maps with it what a list's other statements raise, those of an enrichment hook on
        the request's session or engine (docs: enrichment, "Errors"), as ``fetch`` maps its own: a
        statement out of time is ``reason="timeout"``, an unreachable store ``"connection"``.
        """
        ...


@runtime_checkable
class FacetBackend(Protocol):
    """A ``ListingBackend`` that counts facets (``Capabilities.facets``; docs: facets)."""

    async def facet_counts(self, query: FacetQuery, context: ListContext) -> FacetPage:
        """Count ``query``'s facets and its list's total.

        Each facet's counts obey ``query.counted(facet)`` (its own filters left out in disjunctive
        mode), with the row policies wherever rows are reached, as ``fetch`` obeys a list: a related
        row outside its policy, or missing, reads as no row, so its rows count under None. A row holding
        several values (``Facet.many``) counts once under each distinct one, and under None when it
        holds none. Values are ranked by ``core.facets.ranked``'s rule, at most ``query.limit`` each;
        ``distinct`` counts them all. The total is the list's, every filter applying, exact.
        ``context`` gives the session, the deadline and whether the database may use several cores;
        its ``load``, ``keyset`` and ``total_mode`` are not read.

        Raises:
            UnavailableError: As ``ListingBackend.fetch``.
        """
        ...


def dispatch(visitor: object, prefix: str, name: str, *, key: str = "") -> Callable[..., Any]:
    """Return ``visitor.<prefix>_<name>``, the compiler for one node or operator.

    Args:
        visitor: The compiler.
        prefix: The kind of node, e.g. ``op`` for operators.
        name: The node's name, e.g. ``ilike``.
        key: The query parameter being compiled, named by the error.

    Raises:
        UnsupportedQueryError: The visitor has no such method.
    """
    method = getattr(visitor, f"{prefix}_{name}", None)
    if method is None:
        msg = f"{type(visitor).__name__} cannot compile {prefix} {name!r}"
        raise UnsupportedQueryError(msg, key=key)
    return method  # type: ignore[no-any-return]


def offered_operators(backend: ListingBackend) -> Mapping[str, Operator]:
    """The operators of the registry that ``backend`` declares (``Capabilities.operators``), in registry order.

    What the parser accepts and OpenAPI lists for the backend's resources (docs: query language,
    "Filters and operators").
    """
    declared = backend.capabilities.operators
    return MappingProxyType({name: operator for name, operator in OPERATORS.items() if name in declared})


def check_contract(backend: object) -> None:
    """Check, at application start, that ``backend`` keeps the ``ListingBackend`` contract.

    It has every member of the protocol; every operator it declares is in the registry and
    compiled by its ``visitor`` (``op_<name>``); it declares ``eq`` (a filter name without an
    operator, forced filters) and the operator each declared one turns into when repeated
    (docs: query language, "Repeated parameters").

    Raises:
        ConfigurationError: Naming the backend and what it lacks.
    """
    name = type(backend).__name__
    if not isinstance(backend, ListingBackend):
        members = (
            "capabilities",
            "visitor",
            "type_encoders",
            "narrows_rows",
            "model_graph",
            "computed_fields",
            "fetch",
            "prepare",
            "check_started",
            "unavailable",
        )
        lacking = ", ".join(member for member in members if not hasattr(backend, member))
        msg = f"{name} is not a ListingBackend: it lacks {lacking}"
        raise ConfigurationError(msg)
    declared = backend.capabilities.operators
    unknown = sorted(declared - OPERATORS.keys())
    if unknown:
        msg = f"{name} declares operators the registry does not have: {', '.join(unknown)}"
        raise ConfigurationError(msg)
    unknown = sorted(backend.capabilities.parts - PARTS.keys())
    if unknown:
        msg = f"{name} declares date parts the registry does not have: {', '.join(unknown)}"
        raise ConfigurationError(msg)
    visitor = backend.visitor
    uncompiled = [
        operator for operator in offered_operators(backend) if not callable(getattr(visitor, f"op_{operator}", None))
    ]
    if uncompiled:
        msg = (
            f"{name} declares operators it does not compile: {', '.join(uncompiled)}; give "
            f"{visitor.__name__} an op_<operator> method for each, or leave them out of Capabilities.operators"
        )
        raise ConfigurationError(msg)
    needed = {"eq": "a filter name without an operator"} | {
        operator.repeated_as: f"a repeated {operator.name!r}"
        for operator in offered_operators(backend).values()
        if operator.repeated_as is not None
    }
    for operator, reason in needed.items():
        if operator not in declared:
            msg = f"{name} does not declare the operator {operator!r}, which {reason} needs"
            raise ConfigurationError(msg)


def field_filter(item: Filter | RawFilter) -> Filter:
    """``item`` as a field ``Filter``, for backends without raw store filters.

    Raises:
        UnsupportedQueryError: ``item`` is a ``RawFilter`` (only document stores compile them).
    """
    if isinstance(item, RawFilter):
        msg = f"raw store filter {item.key!r} reached a backend that has no raw filters"
        raise UnsupportedQueryError(msg)
    return item


Condition = TypeVar("Condition")


def where(
    query: ListQuery,
    compile_filter: Callable[[Filter | RawFilter], Condition],
    compile_search: Callable[[Search], Condition] | None,
    all_of: Callable[[Sequence[Condition]], Condition],
    any_of: Callable[[Sequence[Condition]], Condition],
) -> Condition | None:
    """The condition of ``query``: forced filters AND (client filters, combined) AND search.

    Every backend states its condition through this one function: the forced filters are ANDed
    outside the client's filters, whether those combine with AND or OR (docs: query language,
    "Forced filters"; design, "Forced filters").

    Args:
        query: The query.
        compile_filter: One filter (forced or the client's) as a condition of the store.
        compile_search: The search as a condition, or None to leave the search out (a store that
            matches it in a stage of its own).
        all_of: Conditions combined with AND; given one condition, that condition.
        any_of: Conditions combined with OR; given one condition, that condition.

    Returns:
        The condition, or None when the query has none.
    """
    parts = [compile_filter(item) for item in query.forced_filters]
    if query.filters:
        client = [compile_filter(item) for item in query.filters]
        parts.append(all_of(client) if query.combine is Combine.AND else any_of(client))
    if query.search is not None and compile_search is not None:
        parts.append(compile_search(query.search))
    return all_of(parts) if parts else None


# SQLSTATE classes of a server that cannot answer now: connection exception, insufficient resources,
# operator intervention (57014: statement cancelled by statement_timeout or a cancel request).
_UNAVAILABLE_STATES = ("08", "53", "57")
# SQLite's OperationalError also means "no such table" (a bug, a 500); these mean "not now".
_SQLITE_UNAVAILABLE = ("database is locked", "interrupted", "unable to open database", "disk i/o error")
# MariaDB's error numbers (the first argument of the driver's exception): a statement out of time
# (``max_statement_time``), and a server that cannot answer now (too many connections, shutting down,
# the connection killed, unreachable, gone or lost).
_MARIADB_TIMEOUT = 1969
_MARIADB_UNAVAILABLE = frozenset({1040, 1053, 1927, 2002, 2003, 2006, 2013, 2055})


def driver_unavailable(error: BaseException) -> UnavailableError | None:
    """The ``UnavailableError`` a database driver's exception amounts to, or None for other errors.

    Duck-typed, so no driver is imported: a statement out of time (``reason="timeout"``), OS-level
    connection errors, a SQLSTATE of class 08, 53 or 57 (asyncpg's ``sqlstate``, psycopg's
    ``pgcode``), MariaDB's error numbers of the same meaning (asyncmy's first argument), asyncpg's
    errors about a closed connection, and SQLite's locked or unopenable database.
    """
    message = str(error).lower()
    state = str(getattr(error, "sqlstate", None) or getattr(error, "pgcode", None) or "")
    number = error.args[0] if error.args and type(error.args[0]) is int else None
    # asyncpg's per-statement timeout (TimeoutError, an OSError), PostgreSQL's statement_timeout
    # (57014), MariaDB's max_statement_time and the SQLite guard ("interrupted") all mean: the
    # statement ran out of time.
    if isinstance(error, TimeoutError) or state == "57014" or number == _MARIADB_TIMEOUT or message == "interrupted":
        return UnavailableError("the statement ran out of time", reason="timeout")
    if isinstance(error, (OSError, ConnectionError)):
        return UnavailableError(f"the database is unreachable ({type(error).__name__})")
    if (
        number in _MARIADB_UNAVAILABLE
        or state[:2] in _UNAVAILABLE_STATES
        or any(text in message for text in _SQLITE_UNAVAILABLE)
        or (type(error).__name__ in {"InterfaceError", "ConnectionDoesNotExistError"} and "connection" in message)
    ):
        return UnavailableError(f"the database connection failed ({type(error).__name__})")
    return None
