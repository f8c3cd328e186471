"""``SQLAlchemyBackend``: runs compiled list statements on an async session from advanced-alchemy."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ColumnElement,
    Engine,
    Join,
    Row,
    Select,
    TableClause,
    create_engine,
    event,
    exc,
    inspect,
    literal_column,
    select,
    text,
    true,
)
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session, joinedload, selectinload
from sqlalchemy.orm.util import AliasedClass
from sqlalchemy.pool import QueuePool

try:
    from sqlalchemy.util.concurrency import await_
except ImportError:  # SQLAlchemy 2.0
    from sqlalchemy.util.concurrency import await_only as await_  # type: ignore[attr-defined,no-redef,unused-ignore]

from litestar_listing.backends._sqlite import (
    CHECK_EVERY,
    DEFAULT_STATEMENT_TIMEOUT,
    FOLD_FUNCTION,
    StatementGuard,
    fold_value,
)
from litestar_listing.backends.base import (
    TOTAL_MODES,
    Capabilities,
    Computed,
    ListContext,
    Page,
    PerPolicies,
    driver_unavailable,
    read_models,
)
from litestar_listing.backends.relational.compiler import with_followed
from litestar_listing.backends.relational.replicas import LAG_QUERY, Replica, ReplicaSet
from litestar_listing.backends.relational.shapes import OFFSET, Shapes, Slot, shape_of
from litestar_listing.backends.relational.totals import count_beside, may_count_apart, planner_rows, total_of
from litestar_listing.backends.sqlalchemy.compiler import StatementCompiler
from litestar_listing.backends.sqlalchemy.introspection import field_info, model_graph, public_columns
from litestar_listing.backends.sqlalchemy.rows import BY_POSITION, RowPlan, row_plan
from litestar_listing.core.errors import ConfigurationError, UnavailableError
from litestar_listing.core.query import LOOKUP_SEP, ListQuery, Policy, load_tree
from litestar_listing.core.schema import FieldInfo, ModelGraph

if TYPE_CHECKING:
    from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig
    from sqlalchemy.orm.strategy_options import _AbstractLoad

__all__ = ("SQLAlchemyBackend", "policy_condition", "prepare_engine", "read_engine")


class _SQLitePreparer:
    """The ``connect`` listener of one engine: the fold function and the statement guard."""

    def __init__(self, statement_timeout: float | None) -> None:
        self.statement_timeout = statement_timeout

    def __call__(self, dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.create_function(FOLD_FUNCTION, 1, fold_value, deterministic=True)
        if self.statement_timeout is None:
            return
        # aiosqlite runs these in the thread that owns the sqlite3 connection.
        guard = StatementGuard(self.statement_timeout)
        driver = dbapi_connection.driver_connection
        await_(driver.set_trace_callback(guard.statement_started))
        await_(driver.set_progress_handler(guard.over_time, CHECK_EVERY))


_PREPARERS: weakref.WeakKeyDictionary[Engine, _SQLitePreparer] = weakref.WeakKeyDictionary()

# Transaction-local, so it ends with the request's transaction (and is undone by a rollback to the
# list's savepoint); the reset keeps a caller's own session as it was for statements after the list.
_SET_TIMEOUT = text(
    "SELECT current_setting('statement_timeout') AS previous, set_config('statement_timeout', :limit, true)"
)
_RESET_TIMEOUT = text("SELECT set_config('statement_timeout', :limit, true)")


def unavailable(error: BaseException) -> UnavailableError | None:
    """The ``UnavailableError`` that ``error`` amounts to, or None for any other error.

    A pool checkout that timed out, a connection SQLAlchemy invalidated, and whatever the driver's
    own exception amounts to (``driver_unavailable``).
    """
    if isinstance(error, exc.TimeoutError):
        return UnavailableError("no database connection became free in time", reason="busy")
    if not isinstance(error, exc.DBAPIError) or error.orig is None:
        return driver_unavailable(error)
    mapped = driver_unavailable(error.orig)
    if mapped is None and error.connection_invalidated:
        mapped = UnavailableError(f"the database connection failed ({type(error.orig).__name__})")
    return mapped


def prepare_engine(engine: AsyncEngine, *, statement_timeout: float | None = DEFAULT_STATEMENT_TIMEOUT) -> None:
    """Make ``engine`` ready for listing: on SQLite, the case-folding function and a statement limit.

    SQLite has no statement timeout, and a cancelled request cannot stop a statement running in
    aiosqlite's thread: each connection gets a ``StatementGuard`` that aborts any statement running
    longer than ``statement_timeout`` seconds (None: no limit), answered with a 503. Idempotent:
    the first call's limit stays. Call it before the engine opens its first connection (the plugin
    does, when the application is built); connections opened earlier lack both.
    """
    sync_engine = engine.sync_engine
    if sync_engine.dialect.name == "sqlite" and sync_engine not in _PREPARERS:
        preparer = _PREPARERS[sync_engine] = _SQLitePreparer(statement_timeout)
        event.listen(sync_engine, "connect", preparer)


class SQLAlchemyBackend:
    """Lists one SQLAlchemy model (spec §4; DESIGN.md decisions).

    Args:
        model: The listed mapped class.
        config: advanced-alchemy's ``SQLAlchemyAsyncConfig``; the request's session comes from it.
            Optional when every call passes ``ListContext(session=...)``.
        statement: The base list query: a ``Select`` of ``model`` (optionally with extra labelled
            columns), or a callable that refines ``select(model)``, e.g. to exclude soft-deleted
            rows (spec §4.4.11). Its extra labelled columns appear in each item.
        computed: Computed aliases mapped to SQL expressions; they are orderable and appear in
            each item (spec §4.3.2). A ``Computed`` is built for each list from the request's row
            policies of the models it reads (``allowed(entity)`` is ``policy_condition``'s over that
            mapped class or ``aliased(...)`` of one, or ``true()``), e.g. a count of the flights the
            signed-in tenant may see. Rows of a table the listed rows are read from (the model
            itself: a self-reference) are counted through an alias, ``allowed(aliased(Model))``.
        to_item: Turns ``(instance, extra columns)`` into the item dict; by default every
            non-private column, the computed values, and the eager-loaded relations.
        replicas: Read replicas (PostgreSQL hot standbys): ``AsyncEngine``s or advanced-alchemy configs.
            A list runs on one of them, in turn, unless the request's session holds a transaction or
            pending writes, or ``ListContext.primary`` is set; a replica that is down or lags more than
            ``max_replica_lag`` seconds is skipped, and a list it fails (unreachable, or cancelled by a
            recovery conflict) runs again on the primary (docs: "Scaling out").
        max_replica_lag: Seconds of replay lag beyond which a replica is skipped.

    Raises:
        ConfigurationError: A ``Computed`` value passes ``allowed`` a model it does not name in
            ``reads``, a second argument, or an unaliased mapped class whose table the listed rows
            are read from: its condition would restrict the listed row, not the rows the value
            counts (docs: "Computed values", docs/guide/computed.md).
    """

    capabilities = Capabilities(
        keyset=True, total_modes=frozenset(TOTAL_MODES), row_policies=True, inherited_policies=True
    )
    visitor = StatementCompiler
    """The class whose ``op_<name>`` methods compile the declared operators (``check_contract``)."""

    def __init__(
        self,
        model: type[Any],
        *,
        config: SQLAlchemyAsyncConfig | None = None,
        statement: Select[Any] | Callable[[Select[Any]], Select[Any]] | None = None,
        computed: Mapping[str, ColumnElement[Any] | Computed[type[Any], ColumnElement[Any]]] | None = None,
        to_item: Callable[[Any, Mapping[str, Any]], dict[str, Any]] | None = None,
        replicas: Sequence[AsyncEngine | SQLAlchemyAsyncConfig] = (),
        max_replica_lag: float = 5.0,
    ) -> None:
        self.model = model
        self.config = config
        engines = [replica if isinstance(replica, AsyncEngine) else replica.get_engine() for replica in replicas]
        self.replicas: ReplicaSet[async_sessionmaker[AsyncSession]] = ReplicaSet(
            [Replica(async_sessionmaker(engine, expire_on_commit=False), str(engine.url)) for engine in engines],
            max_lag=max_replica_lag,
        )
        self._statement = statement
        self._computed = dict(computed or {})
        self._listed_tables = _from_tables(self._base_statement({}))
        # Each value as built for a request without policies: its type, and a Computed value that
        # asks for rows it cannot police is refused here, before any request.
        unrestricted = self._expressions({})
        self._custom_base = statement is not None or bool(self._computed)
        self._narrows = statement is not None
        self._graph = model_graph(model).including(
            model_graph(read)
            for value in self._computed.values()
            if isinstance(value, Computed)
            for read in value.reads
        )
        self._computed_fields = {
            name: field_info(name, expression, computed=True, reads=_reads(self._computed[name]))
            for name, expression in unrestricted.items()
        }
        self._to_item = to_item
        self._compilers: PerPolicies[StatementCompiler] = PerPolicies(read_models(self._computed.values(), _name))
        self._shapes: Shapes[_Statements] = Shapes()

    @property
    def narrows_rows(self) -> bool:
        """Whether a base list query may leave rows of the model out (e.g. soft-deleted ones, spec §4.4.11).

        The plugin's start-up check treats such a model as scoped: a relation path reaching it
        from another resource needs a row policy (DESIGN.md, "Row policies").
        """
        return self._narrows

    def model_graph(self) -> ModelGraph:
        """The model and its relations, introspected once."""
        return self._graph

    def computed_fields(self) -> Mapping[str, FieldInfo]:
        """The computed aliases and their types."""
        return self._computed_fields

    def prepare(self) -> None:
        """Register the SQLite functions on the configured engine (see ``prepare_engine``)."""
        if self.config is not None:
            prepare_engine(self.config.get_engine())

    def _expressions(
        self, policies: Mapping[str, Policy], dialect: str = "postgresql"
    ) -> dict[str, ColumnElement[Any]]:
        """The computed expressions of a list with ``policies`` (``Computed`` values built for them).

        Raises:
            ConfigurationError: A ``Computed`` value asks for rows it cannot police (``_check_entity``).
        """

        def condition(entity: Any, alias: object, policy: Policy | None) -> ColumnElement[bool]:
            self._check_entity(entity, alias)
            allowed = policy_condition(entity, policy, dialect, policies=policies)
            return true() if allowed is None else allowed

        return {
            name: value.built(name, _name, condition, policies) if isinstance(value, Computed) else value
            for name, value in self._computed.items()
        }

    def _check_entity(self, entity: Any, alias: object) -> None:
        """Refuse ``allowed(entity, alias)`` when its condition would not be over the rows a value counts.

        An unaliased mapped class whose table the listed rows are read from (the listed model
        itself, a table of its inheritance, one the base statement joins) has its columns
        correlated to the listed row: its policy's condition would hold or fail for the listed
        row, which that policy already restricts, and the counted rows would go unpoliced.

        Raises:
            ConfigurationError: Saying to count through an alias, or that SQLAlchemy takes the
                alias in place of the model.
        """
        name = _name(entity)
        if alias is not None:
            msg = (
                f"allowed({name}, {alias!r}): SQLAlchemy takes the rows' entity alone; pass the "
                f"aliased entity itself, allowed(child) with child = aliased({name})"
            )
            raise ConfigurationError(msg)
        if isinstance(entity, AliasedClass):
            return
        shared = [table for table in inspect(entity).tables if table in self._listed_tables]
        if shared:
            msg = (
                f"allowed({name}) is over the table {shared[0].name!r}, which the listed rows are read "
                f"from: in the value's subquery its columns are the listed row's, so the condition would "
                f"be about that row (which its own policy restricts already), not about the rows the value "
                f"counts. Count them through an alias and pass it: child = aliased({name}), allowed(child)"
            )
            raise ConfigurationError(msg)

    def _base_statement(self, computed: Mapping[str, ColumnElement[Any]]) -> Select[Any]:
        base = select(self.model)
        if computed:
            base = base.add_columns(*(expression.label(name) for name, expression in computed.items()))
        if callable(self._statement):
            return self._statement(base)
        return base if self._statement is None else self._statement

    def compiler(self, dialect: str, query: ListQuery | None = None) -> StatementCompiler:
        """The statement compiler for ``dialect`` and the policies of ``query`` that ``Computed`` values read.

        Kept per dialect, and per distinct set of such policies (``PerPolicies``).
        """

        def build(policies: Mapping[str, Policy]) -> StatementCompiler:
            computed = self._expressions(policies, dialect)
            base = self._base_statement(computed)
            return StatementCompiler(self.model, base, computed, dialect, custom_base=self._custom_base)

        return self._compilers.get(dialect, query, build)

    def session(self, context: ListContext) -> AsyncSession:
        """The session of a call: ``context.session``, else the request's from ``config``.

        Raises:
            ConfigurationError: Neither is available.
        """
        if context.session is not None:
            return context.session  # type: ignore[no-any-return]
        if self.config is None or context.request is None:
            msg = "SQLAlchemyBackend needs config= (with a request) or ListContext(session=...)"
            raise ConfigurationError(msg)
        return self.config.provide_session(context.request.app.state, context.request.scope)

    def _loader_options(
        self, load: Sequence[str], compiler: StatementCompiler, query: ListQuery
    ) -> list[_AbstractLoad]:
        """Eager-loading options; a loaded relation only loads the rows inside its model's row policy."""
        policies = compiler.policies(query)
        options: list[_AbstractLoad] = []
        for name in load:
            entity: Any = self.model
            option: Any = None
            for step in name.split(LOOKUP_SEP):
                relationship = inspect(entity).mapper.relationships.get(step)
                if relationship is None:
                    msg = f"cannot eager-load {name!r}: {entity.__name__} has no relation {step!r}"
                    raise ConfigurationError(msg)
                # select-in for to-many (one query per relation for the whole page), joined for to-one.
                strategy = selectinload if relationship.uselist else joinedload
                attribute = getattr(entity, step)
                target = relationship.mapper.class_
                allowed = compiler.policy_condition((target, ()), target.__name__, policies)
                if allowed is not None:  # a to-one row outside it loads as null
                    attribute = attribute.and_(allowed)
                option = strategy(attribute) if option is None else getattr(option, strategy.__name__)(attribute)
                entity = relationship.mapper.class_
            options.append(option)
        return options

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        """Run the page statement and, when the page does not tell it, the total.

        A list never breaks the caller's transaction: when the session already has one, the list
        runs in a SAVEPOINT (``session.begin_nested()``) that a timeout or a store error rolls back
        to; otherwise a failed list rolls back the transaction it began.

        Raises:
            ConfigurationError: No session can be had, or ``context.load`` names no relation.
            UnavailableError: The database failed to answer (see ``unavailable``).
        """
        try:
            return await self._fetch(query, context)
        except Exception as error:
            mapped = unavailable(error)
            if mapped is None:
                raise
            raise mapped from error

    async def _fetch(self, query: ListQuery, context: ListContext) -> Page:
        session = self.session(context)
        if self.replicas and not (context.primary or session.in_transaction() or _has_writes(session)):

            async def on_replica(sessions: async_sessionmaker[AsyncSession]) -> Page:
                async with sessions() as replica_session:
                    return await self._timed(replica_session, query, context, apart=True)

            page = await self.replicas.serve(_replica_lag, on_replica)
            if page is not None:
                return page
        if not (session.in_transaction() or _has_writes(session)):
            bind = session.get_bind()
            reads = read_engine(bind) if isinstance(bind, Engine) else None
            if reads is not None:
                return await self._read(reads, query, context)
        if not session.in_transaction():
            try:
                return await self._timed(session, query, context, apart=not _has_writes(session))
            except BaseException:
                # The transaction is the list's own: end it, so the caller's next statement starts
                # afresh instead of meeting an aborted transaction. The list's error is the one to
                # report, whatever the rollback of a broken connection raises.
                with suppress(Exception):
                    await session.rollback()
                raise
        # The caller's transaction (its writes are flushed first): the list runs in a SAVEPOINT, so a
        # timeout or a store error rolls back to it and leaves the transaction, and its
        # statement_timeout, as they were.
        async with session.begin_nested():
            return await self._timed(session, query, context)

    async def _timed(
        self, session: AsyncSession, query: ListQuery, context: ListContext, *, apart: bool = False
    ) -> Page:
        """List on ``session``, within the deadline on PostgreSQL.

        ``apart``: the session held nothing before the list (no transaction, no writes), so the
        count may run on another connection at the same time as the page (``_count_apart``). It
        starts first: on a large table it is the longer of the two.
        """
        dialect = session.get_bind().dialect.name
        statements, values = self._statements(dialect, query, context)
        if dialect != "postgresql":
            return await self._list(session, dialect, query, context, statements, values, None)
        beside = await _count_apart(session, statements.total, values, context) if apart else None
        async with count_beside(beside) as counting:
            if counting is not None:
                await asyncio.sleep(0)  # the count sends its first statement before the page's
            # The time left is measured once the pooled connection is ours: waiting for it counts.
            connection = await session.connection()
            limit = _limit(context)
            if limit is None:
                return await self._list(session, dialect, query, context, statements, values, counting)
            previous = (await connection.execute(_SET_TIMEOUT, {"limit": limit})).scalar_one()
            page = await self._list(session, dialect, query, context, statements, values, counting)
            await connection.execute(_RESET_TIMEOUT, {"limit": previous})
            return page

    def _statements(
        self, dialect: str, query: ListQuery, context: ListContext
    ) -> tuple[_Statements, dict[str, object]]:
        """The statements of ``query``'s shape (built once per shape, ``Shapes``), and its values to bind.

        The statements are kept per compiler (dialect, and the policies ``Computed`` values read)
        and per shape (``shapes.shape_of``: the query without its field values and page offset, its
        row policies whole), keyset and eager loads.
        """
        compiler = self.compiler(dialect, query)
        shape, values = shape_of(query)
        key = (compiler, shape, context.keyset, context.load)
        return self._shapes.get(key, lambda: self._build(compiler, shape, context)), values

    def _build(self, compiler: StatementCompiler, query: ListQuery, context: ListContext) -> _Statements:
        """The page statement of the shape ``query``, the total's statement, and how the page's rows become items.

        Items are built from plain rows (``RowPlan``) unless they need ORM instances: a ``to_item``,
        a to-many eager load, an inheriting model, or a base statement of another shape.
        """
        page_statement, total_statement = compiler.compile(query, keys=context.keyset, offset=Slot(OFFSET, int))
        total_statement = total_statement.execution_options(**BY_POSITION)
        key_count = len(query.order) if context.keyset else 0
        descriptions = page_statement.column_descriptions
        labelled = [description["name"] for description in descriptions[1:]]
        labels = tuple(labelled[: len(labelled) - key_count])
        plan = None if self._to_item is not None else row_plan(self.model, context.load)
        if plan is not None:
            policies = compiler.policies(query)

            def policy_on(entity: Any, model: type[Any]) -> ColumnElement[bool] | None:
                allowed: ColumnElement[bool] | None = compiler.policy_condition((entity, ()), _name(model), policies)
                return allowed

            rows_statement = plan.statement(page_statement, descriptions, policy_on)
            if rows_statement is not None:
                return _Statements(rows_statement, total_statement, labels, key_count, plan)
        if context.load:
            page_statement = page_statement.options(*self._loader_options(context.load, compiler, query))
        # Loaded relations follow this request's policies, not what the session holds already: the
        # instances are loaded into an identity map of their own (``_load_apart``).
        apart = bool(context.load and query.policies)
        return _Statements(page_statement, total_statement, labels, key_count, None, apart=apart)

    async def _list(
        self,
        session: AsyncSession,
        dialect: str,
        query: ListQuery,
        context: ListContext,
        statements: _Statements,
        values: Mapping[str, object],
        counting: asyncio.Task[int] | None,
    ) -> Page:
        """The page on ``session``, and the total from ``counting`` (the count beside it) or counted after it.

        ``values``: the query's values, bound to its shape's statements (``shapes.shape_of``).
        """
        execute: Any = session.execute
        outside = statements.plan is not None or statements.apart
        if outside and session.sync_session.autoflush and _has_writes(session):
            # Not through the session: its pending writes go first, as its autoflush would have sent them.
            await session.flush()
        if statements.apart:
            rows = await session.run_sync(_load_apart, statements.page, values)
        else:
            if statements.plan is not None:  # plain SQL on the session's connection
                execute = (await session.connection()).execute
            result = await execute(statements.page, values)
            rows = result.unique().all() if context.load and statements.plan is None else result.all()

        async def count() -> int:
            if counting is not None:
                return await counting
            return int((await execute(statements.total, values)).scalar_one())

        async def estimate() -> int | None:
            return await _estimate(session, statements.total, values)

        total, estimated = await total_of(
            query, len(rows), context, count=count, estimate=estimate if dialect == "postgresql" else None
        )
        return self._page(query, context, statements, rows, total, estimated=estimated)

    async def _read(self, reads: Engine, query: ListQuery, context: ListContext) -> Page:
        """List on ``reads`` (``read_engine``): the statements, the items' rows and the count in one worker call."""
        statements, values = self._statements("sqlite", query, context)
        plain = statements.plan is not None

        def run() -> tuple[list[Row[Any]], int | None]:
            with reads.connect() if plain else Session(reads) as runner:
                result = runner.execute(statements.page, values)
                rows = list(result.unique().all() if context.load and not plain else result.all())
                counted = None
                if query.total_from_page(len(rows)) is None:
                    counted = int(runner.execute(statements.total, values).scalar_one())
            return rows, counted

        rows, counted = await asyncio.get_running_loop().run_in_executor(None, run)

        async def count() -> int:
            assert counted is not None  # noqa: S101 - counted above whenever the page does not tell it
            return counted

        total, _ = await total_of(query, len(rows), context, count=count, estimate=None)
        return self._page(query, context, statements, rows, total, estimated=False)

    def _page(
        self,
        query: ListQuery,
        context: ListContext,
        statements: _Statements,
        rows: Sequence[Row[Any]],
        total: int,
        *,
        estimated: bool,
    ) -> Page:
        key_count, plan = statements.key_count, statements.plan
        last_key = None
        if key_count and rows:
            last = rows[-1]
            last_key = plan.key_values(last, key_count) if plan is not None else tuple(last[len(last) - key_count :])
        if plan is not None:
            items = plan.items(rows, statements.labels)
        else:
            tree = load_tree(context.load)
            items = [self._item(row, statements.labels, tree) for row in rows]
        return Page(items=items, total=total, total_mode="estimated" if estimated else "exact", last_key=last_key)

    def _item(self, row: Any, labels: tuple[str, ...], tree: Mapping[str, Any]) -> dict[str, Any]:
        instance = row[0]
        extras = dict(zip(labels, row[1 : 1 + len(labels)], strict=True))
        if self._to_item is not None:
            return self._to_item(instance, extras)
        item = _as_dict(instance, tree)
        item.update(extras)
        return item


@dataclass(frozen=True, slots=True)
class _Statements:
    """The statements of one list (``SQLAlchemyBackend._statements``)."""

    page: Select[Any]
    total: Select[Any]
    labels: tuple[str, ...]
    """The names of the page's labelled columns that go into each item (the keyset's values do not)."""
    key_count: int
    """How many ordering values the page selects last for the keyset (``ListContext.keyset``)."""
    plan: RowPlan | None
    """How plain rows of ``page`` become items; None: ``page`` loads ORM instances."""
    apart: bool = False
    """Load ``page``'s instances into an identity map of their own, not the request's session's (``_load_apart``)."""


def _load_apart(session: Session, statement: Select[Any], values: Mapping[str, object]) -> list[Row[Any]]:
    """The rows of ``statement``, its instances loaded by a session of their own on ``session``'s connection.

    An eager load under row policies must not meet the instances the request's session holds: a
    relation loaded there earlier (unrestricted, or under other policies) would be kept as it is,
    and the restricted one loaded here would stay on the session's instances after the list. Nor
    can ``populate_existing`` make the loads overwrite them: a select-in load is a statement of its
    own, and with that option it would populate again the instances the page statement loaded,
    resetting the relations it does not load itself to their lazy loader (``lazy="raise"`` raises).
    Within one list every model has one policy, so a row loaded along two paths loads alike.

    The session joins the connection's transaction (the request's, or its SAVEPOINT) and never ends
    it (``join_transaction_mode="rollback_only"``); its instances are detached when it closes, their
    loaded attributes kept.
    """
    with Session(bind=session.connection(), join_transaction_mode="rollback_only") as own:
        return list(own.execute(statement, values).unique().all())


def _limit(context: ListContext) -> str | None:
    """The statement limit of a list on PostgreSQL: the milliseconds left until its deadline, None for none.

    PostgreSQL stops a statement past it itself (SQLSTATE 57014, a 503): cancelling from asyncio
    instead would make SQLAlchemy discard the connection as if it had broken.
    """
    remaining = context.remaining()
    return None if remaining is None else str(max(1, int(remaining * 1000)))


async def _count_apart(
    session: AsyncSession, statement: Select[Any], values: Mapping[str, object], context: ListContext
) -> Coroutine[Any, Any, int] | None:
    """The count ``statement`` on a second pooled connection, to run beside ``session``'s page (``count_beside``).

    PostgreSQL, for a session that held nothing before the list: at READ COMMITTED each statement
    sees a snapshot of its own, so the count sees what it would have seen on the session's
    connection. Called before the session takes its own connection, and only while the pool is
    mostly idle (``may_count_apart``: with both connections taken, at most half of its
    ``pool_size`` lent), so both come from within its size and a list never waits for one
    connection while it holds another; under load, lists count on their own connection, after the
    page. The count runs under the list's statement limit (``_limit``). None: count on the session.
    """
    engine = session.bind
    if context.total_mode != "exact" or not isinstance(engine, AsyncEngine):
        return None
    pool = engine.sync_engine.pool
    if not isinstance(pool, QueuePool) or not may_count_apart(pool.checkedout(), pool.size()):
        return None
    # The checkout claims its connection before anything can yield to another task.
    connection = await engine.connect().start()

    async def count() -> int:
        try:
            limit = _limit(context)
            if limit is not None:
                await connection.execute(_SET_TIMEOUT, {"limit": limit})
            return int((await connection.execute(statement, values)).scalar_one())
        finally:
            await connection.close()

    return count()


async def _estimate(session: AsyncSession, total_statement: Select[Any], values: Mapping[str, object]) -> int | None:
    """PostgreSQL's estimate of the rows ``total_statement`` counts (``values`` bound), or None if it cannot be had.

    ``EXPLAIN`` plans without running: ``SELECT 1`` over the count's FROM and WHERE, its values
    rendered by the dialect's own literal processors (which escape text as the server's
    ``standard_conforming_strings`` requires). A value without a literal form gives None, and the
    caller counts exactly.
    """
    rows_statement: Select[Any] = total_statement.with_only_columns(
        literal_column("1"), maintain_column_froms=False
    ).params(values)
    dialect = session.get_bind().dialect
    try:
        sql = str(rows_statement.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
    except (exc.CompileError, NotImplementedError, TypeError, ValueError):
        return None
    connection = await session.connection()

    async def explain(statement: str) -> object:
        return (await connection.exec_driver_sql(statement)).scalar_one()

    return await planner_rows(explain, sql)


def _as_dict(instance: Any, load_tree: Mapping[str, Any]) -> dict[str, Any]:
    item = {key: getattr(instance, key) for key in public_columns(type(instance))}
    for name, subtree in load_tree.items():
        value = getattr(instance, name)
        if value is None:
            item[name] = None
        elif isinstance(value, (list, tuple, set)):
            item[name] = [_as_dict(child, subtree) for child in value]
        else:
            item[name] = _as_dict(value, subtree)
    return item


def _mapped_class(entity: Any) -> type[Any]:
    """The mapped class of ``entity``: itself, or the class an ``aliased(...)`` is of.

    Raises:
        ConfigurationError: ``entity`` is neither (a table, a column, an unmapped class).
    """
    mapper = getattr(inspect(entity, raiseerr=False), "mapper", None)
    if mapper is None:
        msg = f"allowed() takes a mapped class or an aliased(...) of one, not a {type(entity).__name__}"
        raise ConfigurationError(msg)
    return mapper.class_  # type: ignore[no-any-return]


def _name(entity: Any) -> str:
    """The model name of a mapped class or of an alias of one (its ``ModelGraph`` entity).

    Raises:
        ConfigurationError: ``entity`` is neither.
    """
    return _mapped_class(entity).__name__


def _from_tables(statement: Select[Any]) -> frozenset[TableClause]:
    """The tables ``statement`` reads unaliased: what a subquery's unaliased columns of them correlate to."""
    tables: set[TableClause] = set()
    pending: list[Any] = list(statement.get_final_froms())
    while pending:
        clause = pending.pop()
        if isinstance(clause, Join):
            pending += [clause.left, clause.right]
        elif isinstance(clause, TableClause):
            tables.add(clause)
    return frozenset(tables)


def _reads(value: object) -> tuple[str, ...]:
    return value.read_names(_name) if isinstance(value, Computed) else ()


_MODEL_COMPILERS: dict[tuple[type[Any], str], StatementCompiler] = {}


def _model_compiler(model: type[Any], dialect: str) -> StatementCompiler:
    compiler = _MODEL_COMPILERS.get((model, dialect))
    if compiler is None:
        compiler = _MODEL_COMPILERS[model, dialect] = StatementCompiler(
            model, select(model), {}, dialect, custom_base=False
        )
    return compiler


def policy_condition(
    model: Any,
    policy: Policy | None,
    dialect: str = "postgresql",
    *,
    policies: Mapping[str, Policy] | None = None,
) -> ColumnElement[bool] | None:
    """The condition ``policy`` puts on rows of ``model``, for statements of one's own (docs: scoping, "Row policies").

    For enrichment and computed values that count rows of a model with a policy, e.g.
    ``select(...).where(policy_condition(Flight, policies.get("Flight"), policies=policies))`` with
    ``policies`` from ``request_policies(context)``. For rows the statement reads through an alias
    (a self-reference, the same model twice), pass the alias: ``policy_condition(child, ...)`` with
    ``child = aliased(Project)``.

    Args:
        model: The mapped class the statement reads, or an ``aliased(...)`` of one: the condition
            is over that entity's columns.
        policy: Its policy for the request, or None for none.
        dialect: The session's dialect name.
        policies: Every policy of the request by model name, which a policy that follows a relation
            (``RowPolicy(through=...)``) reads for the related model.

    Returns:
        The condition (compiled by the shared compiler, as for listed rows), or None when ``policy``
        restricts nothing.

    Raises:
        ConfigurationError: ``policy`` follows a relation and ``policies`` was not given.
    """
    if policy is None:
        return None
    compiler = _model_compiler(_mapped_class(model), dialect)
    condition: ColumnElement[bool] | None = compiler.policy_condition(
        (model, ()), policy.entity, with_followed(policy, policies)
    )
    return condition


_READ_ENGINES: weakref.WeakKeyDictionary[Engine, Engine | None] = weakref.WeakKeyDictionary()

_OWN_CONNECTIONS = frozenset({"mode", "uri", "check_same_thread"})
"""URL parameters under which a database may be private to a connection, or a connection to its thread."""


def read_engine(bind: Engine) -> Engine | None:
    """A synchronous engine over the SQLite file of ``bind``, for lists that need nothing of a request's session.

    aiosqlite sends every cursor call to its connection's thread (a cursor, the statement, its rows,
    the cursor's close: four hops a statement, and a rollback or two when the session ends), and
    each hop waits for the event loop and the GIL. A list whose session holds no transaction and no
    pending writes sees exactly what another connection to the file sees, so it runs whole (its
    statements, the entity loading, the count) in one call of the loop's default executor, on this
    engine's pooled ``sqlite3`` connections, which carry the same fold function and statement guard
    (``prepare_engine``'s limit) and the same JSON codecs.

    Made once per ``bind``, and disposed with it. None, and lists keep to the request's session, when ``bind`` is not an
    aiosqlite engine over a file (an in-memory database is private to its connection), or when it
    has listeners SQLAlchemy did not add itself (connect-time set-up, statement hooks,
    instrumentation): the read engine would not have them.
    """
    if bind in _READ_ENGINES:
        return _READ_ENGINES[bind]
    engine = _make_read_engine(bind)
    _READ_ENGINES[bind] = engine
    return engine


def _make_read_engine(bind: Engine) -> Engine | None:
    url = bind.url
    database = url.database or ""
    if bind.dialect.driver != "aiosqlite" or database in {"", ":memory:"} or set(url.query) & _OWN_CONNECTIONS:
        return None
    engine_events: Any = bind.dispatch
    pool_events: Any = bind.pool.dispatch
    engine_listeners = [fn for name in engine_events._event_names for fn in getattr(engine_events, name)]  # noqa: SLF001
    pool_listeners = [fn for name in pool_events._event_names for fn in getattr(pool_events, name)]  # noqa: SLF001
    if not all(_ours(fn) for fn in engine_listeners) or not all(
        _ours(fn) or getattr(fn, "__module__", "").startswith("sqlalchemy.") for fn in pool_listeners
    ):
        return None
    preparer = _PREPARERS.get(bind)
    limit = DEFAULT_STATEMENT_TIMEOUT if preparer is None else preparer.statement_timeout
    dialect: Any = bind.dialect
    engine = create_engine(
        url.set(drivername="sqlite+pysqlite"),
        json_serializer=dialect._json_serializer,  # noqa: SLF001 - the async engine's codecs
        json_deserializer=dialect._json_deserializer,  # noqa: SLF001
    )

    def prepare(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.create_function(FOLD_FUNCTION, 1, fold_value, deterministic=True)
        StatementGuard(limit).install(dbapi_connection)

    event.listen(engine, "connect", prepare)

    def dispose(_bind: Engine) -> None:
        engine.dispose()  # its connections close with the async engine's (e.g. at the app's shutdown)

    event.listen(bind, "engine_disposed", dispose)
    return engine


def _ours(listener: object) -> bool:
    """Whether ``listener`` is this module's own (the SQLite preparer, the read engine's disposal)."""
    return isinstance(listener, _SQLitePreparer) or getattr(listener, "__module__", "") == __name__


def _has_writes(session: AsyncSession) -> bool:
    """Whether ``session`` holds changes not yet flushed (a flush would begin a transaction)."""
    return bool(session.new or session.dirty or session.deleted)


async def _replica_lag(sessions: async_sessionmaker[AsyncSession]) -> float | None:
    """The replay lag of the replica behind ``sessions`` in seconds (``LAG_QUERY``)."""
    async with sessions() as session:
        lag = (await session.execute(text(LAG_QUERY))).scalar_one()
    return None if lag is None else float(lag)
