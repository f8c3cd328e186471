"""How a relational list runs, written once for the SQLAlchemy and Piccolo backends.

``RelationalBackend.fetch`` chooses where the list runs (the route), takes the statements of the
query's shape, runs the page, gets its total (told by the page, counted beside it on a second
connection, estimated by the planner, or counted after it), and maps the driver's errors.
``RelationalBackend.facet_counts`` runs a facet request the same way: on the same route, under the
same limits, one statement per facet then the list's count (docs: facets). The two backends supply
small hooks: how they hold a connection (a ``Reader``), how the caller's own transaction is
entered, which replicas they have, how statements are built for a shape, and how rows become items
(docs: design, "Execution").

The routes, first that applies:

1. The caller holds a transaction: the list runs inside it, in a SAVEPOINT that a timeout or a
   store error rolls back to, so the transaction stays usable.
2. A read replica, when the backend has some, the call does not ask for the primary
   (``ListContext.primary``) and the caller holds nothing (no transaction, no pending writes).
3. A local read path, when the database offers one and the caller holds nothing (SQLite: a
   pooled connection that runs the page and its count in one call of a worker thread).
4. The backend's own connection (pooled).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from litestar_listing.backends.base import TOTAL_MODES, Capabilities, IndexedSearch, ListContext, Page, TrigramTable
from litestar_listing.backends.relational.compiler import SearchForm
from litestar_listing.backends.relational.databases import SQLITE
from litestar_listing.backends.relational.facets import facet_counts, summed_total, value_reader
from litestar_listing.backends.relational.shapes import Shapes, shape_of
from litestar_listing.backends.relational.totals import count_beside, total_of
from litestar_listing.core.facets import FacetPage

if TYPE_CHECKING:
    from litestar_listing.backends.relational.compiler import RelationalCompiler
    from litestar_listing.backends.relational.databases import Database
    from litestar_listing.backends.relational.replicas import ReplicaSet
    from litestar_listing.core.errors import UnavailableError
    from litestar_listing.core.facets import FacetQuery
    from litestar_listing.core.query import ListQuery
    from litestar_listing.core.schema import FieldInfo, ModelGraph

__all__ = ("Held", "Reader", "RelationalBackend", "Run", "Statements")


def _search_form(candidates: int, limit: int) -> SearchForm:
    """The form of a search whose probe counted ``candidates`` (``limit + 1`` at most: ``candidate_limit``)."""
    return SearchForm.CANDIDATES if candidates <= limit else SearchForm.SCAN


Row = Any
"""A row as the ORM's driver returns it (SQLAlchemy's ``Row``, a dict of Piccolo's)."""

Values = tuple[Any, ...]
"""A row of a facet statement: its values in the order selected."""


class Held(enum.Enum):
    """What the caller's session or engine holds when a list starts: it decides the route."""

    NOTHING = enum.auto()
    """No transaction, no pending writes: any connection sees what the caller's would."""
    WRITES = enum.auto()
    """Pending writes outside a transaction (SQLAlchemy's unit of work): they go first, on its connection."""
    TRANSACTION = enum.auto()
    """A transaction: the list runs inside it, in a SAVEPOINT."""


class Statements(Protocol):
    """The statements of one query shape, as a backend builds them (kept per shape, ``Shapes``)."""

    def last_key(self, row: Row, key_count: int) -> tuple[object, ...]:
        """The ordering values of ``row``, the page's last (``Page.last_key``): the last ``key_count`` it selects."""
        ...

    def total_in(self, row: Row) -> int:
        """The total a page statement built to count its rows selects in each of them (``compiler.TOTAL_LABEL``)."""
        ...


StatementsT = TypeVar("StatementsT", bound=Statements)
CompilerT = TypeVar("CompilerT", bound="RelationalCompiler[Any, Any]")
HandleT = TypeVar("HandleT")
NodeT = TypeVar("NodeT")
ResultT = TypeVar("ResultT")


class Reader(ABC, Generic[StatementsT]):
    """One list's hold on a database: runs the statements of its shape on one connection.

    Attributes:
        database: The database it reads.
        context: The list's call (its deadline: each statement gets the time left when it starts).
    """

    database: Database
    context: ListContext

    async def count_apart(
        self, statements: StatementsT, values: Mapping[str, object]
    ) -> Coroutine[Any, Any, int] | None:
        """The count on a second connection, to run beside the page (``count_beside``), or None to count here.

        Only where the database ``counts_apart``, for a caller that held nothing, and while the
        pool is mostly idle (``totals.may_count_apart``). Called before the page's connection is
        taken, so a list never waits for one connection while it holds another.
        """
        return None

    def limited(self) -> AbstractAsyncContextManager[object]:
        """The block the list's statements run in: where its settings are set and reset, if anywhere.

        Its time limit, and its hold to one core (``ListContext.parallel``, ``Database.parallel_setting``).
        """
        return nullcontext()

    @abstractmethod
    async def page(
        self, statements: StatementsT, values: Mapping[str, object], *, count_too: Callable[[int], bool]
    ) -> tuple[Sequence[Row], int | None]:
        """The page's rows and, where the reader runs both at once, the count.

        Args:
            statements: The shape's statements.
            values: The query's values, bound to them (``shapes.shape_of``).
            count_too: Whether a page of that many rows needs a count (it does not tell its total).

        Returns:
            ``(rows, count)``: the count None unless the reader counted beside the page in the
            same call (a SQLite worker thread).
        """

    @abstractmethod
    async def count(self, statements: StatementsT, values: Mapping[str, object]) -> int:
        """The rows the query matches, counted on this connection after the page."""

    async def estimate(self, statements: StatementsT, values: Mapping[str, object], query: ListQuery) -> int | None:
        """The planner's estimate of the rows the query matches, or None when it cannot be had."""
        return None

    @abstractmethod
    async def rows(self, statement: Any, values: Mapping[str, object]) -> list[Values]:
        """The rows of one statement of the backend's (``RelationalBackend.executable``), each as a tuple."""

    async def facet_rows(
        self, statements: Sequence[Any], values: Mapping[str, object], counted: StatementsT | None
    ) -> tuple[list[list[Values]], int | None]:
        """The rows of each facet statement in turn, then ``counted``'s count: on this connection.

        No statement starts once the list's time has run out (``ListContext.remaining``). A reader
        that runs them all at once (a SQLite worker thread) overrides it.

        Returns:
            ``(rows of each statement, count)``: the count None without ``counted``.
        """
        found = []
        for statement in statements:
            self.context.remaining()
            found.append(await self.rows(statement, values))
        if counted is None:
            return found, None
        self.context.remaining()
        return found, await self.count(counted, values)


Run = Callable[[Reader[StatementsT]], Awaitable[ResultT]]
"""Runs a list or a facet request on a reader (``RelationalBackend._list``, ``RelationalBackend._facets``)."""


class RelationalBackend(ABC, Generic[HandleT, NodeT, CompilerT, StatementsT]):
    """The execution of a relational list; subclasses supply the ORM's hooks.

    Type parameters: ``HandleT`` the caller's session or engine, ``NodeT`` a read replica's handle,
    ``CompilerT`` the statement compiler, ``StatementsT`` what a shape compiles to.
    """

    capabilities = Capabilities(
        keyset=True,
        total_modes=frozenset(TOTAL_MODES),
        row_policies=True,
        inherited_policies=True,
        count_in_page=True,
        facets=True,
    )
    type_encoders: Mapping[Any, Callable[[Any], Any]] = MappingProxyType({})
    """The items hold values the application encodes already."""

    _graph: ModelGraph
    _computed_fields: Mapping[str, FieldInfo]
    _narrows: bool

    def __init__(self) -> None:
        self._shapes: Shapes[StatementsT] = Shapes()
        self._facet_shapes: Shapes[tuple[Any, ...]] = Shapes()

    @property
    def narrows_rows(self) -> bool:
        """Whether the base list query may leave rows of the model out (e.g. soft-deleted ones; docs: soft delete).

        The plugin's start-up check treats such a model as scoped: a relation path reaching it
        from another resource needs a row policy (docs: design, "Row policies").
        """
        return self._narrows

    def model_graph(self) -> ModelGraph:
        """The listed model and the models reachable from it, introspected once."""
        return self._graph

    def computed_fields(self) -> Mapping[str, FieldInfo]:
        """The computed aliases and their types."""
        return self._computed_fields

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        """Run the page statement and, when the page does not tell it, the total (the routes above).

        A list never breaks the caller's transaction: inside one it runs in a SAVEPOINT that a
        timeout or a store error rolls back to.

        Raises:
            ConfigurationError: No session or engine can be had, or ``context.load`` names no relation.
            UnavailableError: The database failed to answer (``unavailable``).
        """

        async def run(reader: Reader[StatementsT]) -> Page:
            return await self._list(reader, query, context)

        return await self._mapped(context, run)

    async def facet_counts(self, query: FacetQuery, context: ListContext) -> FacetPage:
        """Count the facets of ``query`` and its list's total where the list would run (the routes above; docs: facets).

        One statement per facet (``RelationalCompiler.facet_statement``), one after the other on the
        list's connection under its limits, and the list's own count unless a facet's counts add
        up to it (``sums_total``): beside the facets on a second connection where a list's count
        would run there (``ListContext.parallel``), else after them.

        Raises:
            ConfigurationError: No session or engine can be had.
            UnavailableError: The database failed to answer (``unavailable``).
        """

        async def run(reader: Reader[StatementsT]) -> FacetPage:
            return await self._facets(reader, query, context)

        return await self._mapped(context, run)

    async def _mapped(self, context: ListContext, run: Run[StatementsT, ResultT]) -> ResultT:
        """``run`` on the route of ``context`` (``_route``), the driver's errors mapped (``unavailable``)."""
        try:
            return await self._route(context, run)
        except Exception as error:
            mapped = self.unavailable(error)
            if mapped is None:
                raise
            raise mapped from error

    async def _route(self, context: ListContext, run: Run[StatementsT, ResultT]) -> ResultT:
        handle = self.handle(context)
        held = self.held(handle)
        if held is Held.TRANSACTION:
            return await self.in_transaction(handle, context, run)
        replicas = None if context.primary or held is not Held.NOTHING else self.replica_set(handle)
        if replicas:
            served = await replicas.serve(self.replica_lag, lambda node: self.on_replica(node, context, run))
            if served is not None:
                return served
        local = self.local(handle, context) if held is Held.NOTHING else None
        if local is not None:
            async with local as reader:
                return await run(reader)
        return await self.own(handle, held, context, run)

    async def _list(self, reader: Reader[StatementsT], query: ListQuery, context: ListContext) -> Page:
        """The page on ``reader``, its total, and the last key of a keyset page."""
        # Only SQLite's statements name a trigram table (PostgreSQL's planner finds its trigram indexes itself).
        trigram_tables = context.trigram_tables if reader.database is SQLITE else frozenset()
        compiler = self.compiler(reader.database, query, trigram_tables, context.indexed_search)
        shape, values = shape_of(query)
        exact = context.total_mode == "exact"
        countable = exact and compiler.counts_in_page(shape)

        def in_page(form: SearchForm) -> bool:
            # The total read with the page, by the page's statement: a non-empty page tells it. A
            # search read from its candidates sorts every one of them anyway (docs: design, "Totals").
            return countable and (context.count_in_page or form is SearchForm.CANDIDATES)

        def statements_of(form: SearchForm) -> StatementsT:
            counted = in_page(form)
            return self._shapes.get(
                (compiler, shape, context.keyset, context.load, counted, form),
                lambda: self.build(compiler, shape, replace(context, count_in_page=counted), form),
            )

        # A list held to one core (``ListContext.parallel``) counts after its page, on the page's connection.
        parallel = exact and context.parallel
        form = SearchForm.SCAN
        if compiler.narrows_search(shape):
            # A search its fields' indexes serve reads their candidates when they are few: a probe
            # counts them first, on a connection of its own where the count may run apart, else on
            # the page's, under the list's limits.
            probe = statements_of(SearchForm.PROBE)
            probing = await reader.count_apart(probe, values) if parallel else None
            if probing is None:
                parallel = False  # the count follows the page on its connection, as the probe did
                async with reader.limited():
                    form = _search_form(await reader.count(probe, values), compiler.candidate_limit)
            else:
                form = _search_form(await probing, compiler.candidate_limit)
            if form is SearchForm.CANDIDATES:
                # Read by key: parallel workers and compiled expressions would cost more to start
                # than they save (the planner's estimate of the candidates is a guess).
                reader.context = replace(reader.context, parallel=False, by_key=True)
        statements = statements_of(form)
        beside = await reader.count_apart(statements, values) if parallel and not in_page(form) else None
        async with count_beside(beside) as counting, reader.limited():
            read, counted_in_page = statements, in_page(form)
            rows, counted = await reader.page(
                statements,
                values,
                count_too=lambda found: query.total_from_page(found) is None and not (counted_in_page and found),
            )

            async def count() -> int:
                if counted_in_page and rows:
                    return read.total_in(rows[0])
                if counting is not None:
                    return await counting
                return counted if counted is not None else await reader.count(read, values)

            async def estimate() -> int | None:
                return await reader.estimate(read, values, query)

            total, estimated = await total_of(
                query, len(rows), context, count=count, estimate=estimate if reader.database.estimates else None
            )
            items = await self.items(reader, statements, rows, context)
        last_key = statements.last_key(rows[-1], len(query.order)) if context.keyset and rows else None
        return Page(items=items, total=total, total_mode="estimated" if estimated else "exact", last_key=last_key)

    async def _facets(self, reader: Reader[StatementsT], query: FacetQuery, context: ListContext) -> FacetPage:
        """The facets of ``query`` on ``reader``, and the list's total (``facet_counts``)."""
        trigram_tables = context.trigram_tables if reader.database is SQLITE else frozenset()
        compiler = self.compiler(reader.database, query.query, trigram_tables, context.indexed_search)
        shape, values = shape_of(query.query)
        asked = replace(query, query=shape)
        statements = self._facet_shapes.get(
            (compiler, asked),
            lambda: tuple(self.executable(compiler, compiler.facet_statement(asked, facet)) for facet in asked.facets),
        )
        summed = next((index for index, facet in enumerate(asked.facets) if compiler.sums_total(asked, facet)), None)
        counted = None
        if summed is None:
            # The list's own count, from the statements a list of this shape runs (and keeps).
            plain = replace(context, keyset=False, load=(), count_in_page=False)
            counted = self._shapes.get(
                (compiler, shape, False, (), False, SearchForm.SCAN), lambda: self.build(compiler, shape, plain)
            )
        beside = await reader.count_apart(counted, values) if counted is not None and context.parallel else None
        async with count_beside(beside) as counting, reader.limited():
            found, total = await reader.facet_rows(statements, values, None if counting is not None else counted)
            if counting is not None:
                total = await counting
        answered = tuple(
            facet_counts(facet, rows, value_reader(compiler.graph, facet))
            for facet, rows in zip(query.facets, found, strict=True)
        )
        if summed is not None:
            total = summed_total(found[summed])
        assert total is not None  # noqa: S101 - counted, or read from a facet's statement
        return FacetPage(total, answered)

    # -- hooks --------------------------------------------------------------------------------

    @abstractmethod
    def handle(self, context: ListContext) -> HandleT:
        """The caller's session or engine for this call.

        Raises:
            ConfigurationError: None can be had.
        """

    @abstractmethod
    def held(self, handle: HandleT) -> Held:
        """What ``handle`` holds now."""

    @abstractmethod
    async def in_transaction(self, handle: HandleT, context: ListContext, run: Run[StatementsT, ResultT]) -> ResultT:
        """Run the list inside the caller's transaction, in a SAVEPOINT rolled back to on any error."""

    @abstractmethod
    async def own(self, handle: HandleT, held: Held, context: ListContext, run: Run[StatementsT, ResultT]) -> ResultT:
        """Run the list on the backend's own connection of ``handle`` (``held`` is not a transaction)."""

    def replica_set(self, handle: HandleT) -> ReplicaSet[NodeT] | None:
        """The read replicas that may serve a list of ``handle``; None for none.

        Raises:
            ConfigurationError: A configured replica is not there.
        """
        return None

    async def replica_lag(self, node: NodeT) -> float | None:
        """The replay lag of the replica ``node`` in seconds (``replicas.LAG_QUERY``)."""
        raise NotImplementedError

    async def on_replica(self, node: NodeT, context: ListContext, run: Run[StatementsT, ResultT]) -> ResultT:
        """Run the list on the replica ``node``."""
        raise NotImplementedError

    def local(self, handle: HandleT, context: ListContext) -> AbstractAsyncContextManager[Reader[StatementsT]] | None:
        """The local read path of ``handle``'s database, or None where it has none."""
        return None

    @abstractmethod
    def compiler(
        self,
        database: Database,
        query: ListQuery | None = None,
        trigram_tables: frozenset[TrigramTable] = frozenset(),
        indexed_search: IndexedSearch | None = None,
    ) -> CompilerT:
        """The statement compiler for ``database``, ``query``'s policies that ``Computed`` values read, indexes.

        ``trigram_tables``: those its text matches read first (``RelationalCompiler.trigram_tables``);
        ``indexed_search``: the searched paths an index serves (``RelationalCompiler.indexed_search``).
        """

    @abstractmethod
    def build(
        self, compiler: CompilerT, query: ListQuery, context: ListContext, search_form: SearchForm = SearchForm.SCAN
    ) -> StatementsT:
        """The statements of the query shape ``query``, its page offset bound as ``Slot(shapes.OFFSET, int)``.

        With ``context.count_in_page`` (set only where ``compiler.counts_in_page(query)``), the page
        statement selects the total too (``compile(total=True)``), which ``Statements.total_in`` reads.
        ``search_form`` goes to ``compile``: with ``SearchForm.PROBE`` the total statement is the probe.
        """

    @abstractmethod
    def executable(self, compiler: CompilerT, statement: Any) -> Any:
        """A statement of ``compiler`` (a facet's) as its ``Reader.rows`` runs it, kept per query shape."""

    @abstractmethod
    async def items(
        self, reader: Reader[StatementsT], statements: StatementsT, rows: Sequence[Row], context: ListContext
    ) -> list[dict[str, Any]]:
        """The items of the page's ``rows`` (eager loads that need statements of their own run on ``reader``)."""

    @abstractmethod
    def unavailable(self, error: BaseException) -> UnavailableError | None:
        """The ``UnavailableError`` that ``error`` amounts to, or None for any other error."""
