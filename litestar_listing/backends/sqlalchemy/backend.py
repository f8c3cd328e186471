"""``SQLAlchemyBackend``: lists one SQLAlchemy model on an async session from advanced-alchemy.

What runs where (the route, totals, replicas) is the shared execution's (``relational.execution``);
this module holds what is SQLAlchemy's own: the base statement, computed values, eager loading and
how rows become items. The readers are in ``readers``, SQLite's read engine in ``sqlite``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext, suppress
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import ColumnElement, Engine, Join, Row, Select, TableClause, inspect, select, true
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm.util import AliasedClass
from sqlalchemy.pool import NullPool

from litestar_listing.backends.base import (
    CompilerCache,
    Computed,
    IndexedSearch,
    ListContext,
    TrigramTable,
    read_models,
)
from litestar_listing.backends.relational.compiler import SearchForm, trigram_lookup
from litestar_listing.backends.relational.execution import Held, Reader, RelationalBackend, Run
from litestar_listing.backends.relational.indexes import Catalog
from litestar_listing.backends.relational.replicas import Replica, ReplicaSet
from litestar_listing.backends.relational.shapes import OFFSET, Slot
from litestar_listing.backends.sqlalchemy.compiler import STATEMENT_COMPILERS, StatementCompiler
from litestar_listing.backends.sqlalchemy.introspection import MappedStorage, field_info, model_graph
from litestar_listing.backends.sqlalchemy.loading import as_dict, loader_options
from litestar_listing.backends.sqlalchemy.policies import mapped_name, policy_condition
from litestar_listing.backends.sqlalchemy.readers import (
    EngineReader,
    SessionReader,
    Statements,
    dialect_database,
    has_writes,
    replica_lag,
    unavailable,
)
from litestar_listing.backends.sqlalchemy.rows import BY_POSITION, row_plan
from litestar_listing.backends.sqlalchemy.sqlite import prepare_engine, read_engine
from litestar_listing.core.errors import ConfigurationError, UnavailableError
from litestar_listing.core.query import ListQuery, Policy, load_tree

if TYPE_CHECKING:
    from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig

    from litestar_listing.backends.relational.databases import Database

__all__ = ("SQLAlchemyBackend",)

Sessions = async_sessionmaker[AsyncSession]
ResultT = TypeVar("ResultT")


class SQLAlchemyBackend(RelationalBackend[AsyncSession, Sessions, StatementCompiler, Statements]):
    """Lists one SQLAlchemy model (docs: backends, "SQLAlchemy"; design).

    Args:
        model: The listed mapped class.
        config: advanced-alchemy's ``SQLAlchemyAsyncConfig``; the request's session comes from it.
            Optional when every call passes ``ListContext(session=...)``.
        statement: The base list query: a ``Select`` of ``model`` (optionally with extra labelled
            columns), or a callable that refines ``select(model)``, e.g. to exclude soft-deleted
            rows (docs: soft delete). Its extra labelled columns appear in each item.
        computed: Computed aliases mapped to SQL expressions; they are orderable and appear in
            each item (docs: computed). A ``Computed`` is built for each list from the request's row
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
            recovery conflict) runs again on the primary (docs: scaling, "Read replicas").
        max_replica_lag: Seconds of replay lag beyond which a replica is skipped.
        local_reads: On a SQLite file, list whatever the session holds nothing of on connections of
            the backend's own (``read_engine``), with the JSON codecs of ``config``'s engine settings.
            False where the engine has listeners those lists need (a function registered on
            connect, statement hooks): SQLAlchemy has no public API to list them, so the read
            connections cannot repeat them (docs: backends, "Lists on SQLite run on
            connections of their own").

    Raises:
        ConfigurationError: A ``Computed`` value passes ``allowed`` a model it does not name in
            ``reads``, a second argument, or an unaliased mapped class whose table the listed rows
            are read from: its condition would restrict the listed row, not the rows the value
            counts (docs: computed, "Counting rows of the listed model itself").
    """

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
        local_reads: bool = True,
    ) -> None:
        super().__init__()
        self.model = model
        self.config = config
        self.local_reads = local_reads
        engines = [replica if isinstance(replica, AsyncEngine) else replica.get_engine() for replica in replicas]
        self.replicas: ReplicaSet[Sessions] = ReplicaSet(
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
        self._compilers: CompilerCache[StatementCompiler] = CompilerCache(
            read_models(self._computed.values(), mapped_name)
        )

    def prepare(self) -> None:
        """Register the SQLite functions on the configured engine (see ``prepare_engine``)."""
        if self.config is not None:
            prepare_engine(self.config.get_engine())

    def check_started(self, app: Any, *, routed: bool) -> None:
        """Check that the started application gives the lists a session (docs: in your app, "Start-up checks").

        With ``config``, a request's session comes from the session maker that advanced-alchemy's
        plugin keeps in the application's state (its lifespan puts it there): without it every list
        would fail. Without ``config``, only a call passing ``session=`` has one, so no route may
        list the resource by itself.

        Raises:
            ConfigurationError: The state lacks the config's session maker (the message names the
                plugin to add, or the config to pass), or a route lists the resource without a config.
        """
        if self.config is None:
            if routed:
                name = self.model.__name__
                msg = (
                    f"SQLAlchemyBackend({name}) has no config, so the routes that list it (its mounted route, "
                    f"listing_route, provide_page) have no session: pass SQLAlchemyBackend({name}, config=config) "
                    "with the config given to advanced-alchemy's SQLAlchemyPlugin, or list it only from handlers "
                    "of your own that pass list_resource(..., session=...), with ListingPlugin(unmounted=[...])"
                )
                raise ConfigurationError(msg)
            return
        if self.config.session_maker_app_state_key not in app.state:
            raise self._no_session_maker(app.state)

    def index_storage(self) -> MappedStorage:
        """The tables and columns of the model and the models it reaches (docs: indexes)."""
        return MappedStorage(self.model)

    def index_catalog(self, *, pooled: bool = True) -> Catalog | None:
        """The catalog of ``config``'s engine, where the index advisor finds the indexes there are; None without one.

        ``pooled=False`` reads a SQLite database on a connection of its own, which ``Catalog.release``
        closes, and leaves the application's pool as it was (the plugin's start-up read of the trigram
        tables: a connection opened then would outlive an application that never lists).
        """
        if self.config is None:
            return None
        engine = self.config.get_engine()
        if not pooled and engine.dialect.name == "sqlite":
            engine = create_async_engine(engine.url, poolclass=NullPool)

        async def rows(sql: str) -> Sequence[Sequence[object]]:
            async with engine.connect() as connection:
                return (await connection.exec_driver_sql(sql)).all()

        place = engine.url.render_as_string(hide_password=True)
        return Catalog(dialect_database(engine.dialect), place, rows, engine.dispose)

    def _no_session_maker(self, state: Mapping[str, Any]) -> ConfigurationError:
        """The error of an application whose state lacks ``config``'s session maker, saying what to add."""
        assert self.config is not None  # noqa: S101 - only asked with a config
        key = self.config.session_maker_app_state_key
        others = sorted(name for name, value in state.items() if isinstance(value, async_sessionmaker))
        fix = (
            f"the application's SQLAlchemyPlugin was given another config (its session makers are {others}): pass "
            "SQLAlchemyBackend the config object given to the plugin"
            if others
            else "give the application advanced-alchemy's plugin with that config: Litestar(plugins=["
            "SQLAlchemyPlugin(config=config), ListingPlugin(...)]), from advanced_alchemy.extensions.litestar"
        )
        msg = (
            f"SQLAlchemyBackend({self.model.__name__}) takes each request's session from its advanced-alchemy "
            f"config, but the application's state has no session maker under {key!r}, which advanced-alchemy's "
            f"plugin puts there when the application starts: {fix}"
        )
        return ConfigurationError(msg)

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
            name: value.built(name, mapped_name, condition, policies) if isinstance(value, Computed) else value
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
        name = mapped_name(entity)
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

    def compiler(
        self,
        database: Database,
        query: ListQuery | None = None,
        trigram_tables: frozenset[TrigramTable] = frozenset(),
        indexed_search: IndexedSearch | None = None,
    ) -> StatementCompiler:
        """The statement compiler for ``database``, ``query``'s policies that ``Computed`` values read, indexes.

        ``trigram_tables`` and ``indexed_search``: ``RelationalCompiler``'s. Kept per database and
        indexes, and per distinct set of such row policies (``CompilerCache``).
        """

        def build(policies: Mapping[str, Policy]) -> StatementCompiler:
            computed = self._expressions(policies, database.name)
            base = self._base_statement(computed)
            compiler = STATEMENT_COMPILERS[database.name](self.model, base, computed, custom_base=self._custom_base)
            compiler.trigram_tables = trigram_lookup(trigram_tables)
            compiler.indexed_search = indexed_search
            return compiler

        return self._compilers.get((database.name, trigram_tables, indexed_search), query, build)

    def session(self, context: ListContext) -> AsyncSession:
        """The session of a call: ``context.session``, else the request's from ``config``.

        Raises:
            ConfigurationError: Neither is available, or the application's state has no session maker
                for ``config`` (advanced-alchemy's plugin is missing, or the application never started).
        """
        if context.session is not None:
            return context.session  # type: ignore[no-any-return]
        if self.config is None or context.request is None:
            msg = "SQLAlchemyBackend needs config= (with a request) or ListContext(session=...)"
            raise ConfigurationError(msg)
        state = context.request.app.state
        try:
            return self.config.provide_session(state, context.request.scope)
        except KeyError as error:
            # An application that never started, or started without advanced-alchemy's plugin.
            if error.args != (self.config.session_maker_app_state_key,):
                raise
            raise self._no_session_maker(state) from None

    # -- the shared execution's hooks (``RelationalBackend``) ---------------------------------

    def handle(self, context: ListContext) -> AsyncSession:  # noqa: D102
        return self.session(context)

    def held(self, handle: AsyncSession) -> Held:  # noqa: D102
        if handle.in_transaction():
            return Held.TRANSACTION
        return Held.WRITES if has_writes(handle) else Held.NOTHING

    async def in_transaction(
        self, handle: AsyncSession, context: ListContext, run: Run[Statements, ResultT]
    ) -> ResultT:
        """The list in a SAVEPOINT of the caller's transaction (its writes flushed first).

        A timeout or a store error rolls back to it and leaves the transaction, and its
        ``statement_timeout``, as they were.
        """
        async with handle.begin_nested():
            return await run(SessionReader(handle, context, apart=False))

    async def own(
        self, handle: AsyncSession, held: Held, context: ListContext, run: Run[Statements, ResultT]
    ) -> ResultT:
        """The list in a transaction of its own on the session, rolled back if the list fails.

        The caller's next statement then starts afresh instead of meeting an aborted transaction.
        The list's error is the one to report, whatever the rollback of a broken connection raises.
        """
        try:
            return await run(SessionReader(handle, context, apart=held is Held.NOTHING))
        except BaseException:
            with suppress(Exception):
                await handle.rollback()
            raise

    def replica_set(self, handle: AsyncSession) -> ReplicaSet[Sessions] | None:  # noqa: D102
        return self.replicas or None

    async def replica_lag(self, node: Sessions) -> float | None:  # noqa: D102
        return await replica_lag(node)

    async def on_replica(self, node: Sessions, context: ListContext, run: Run[Statements, ResultT]) -> ResultT:  # noqa: D102
        async with node() as session:
            return await run(SessionReader(session, context, apart=True))

    def local(
        self, handle: AsyncSession, context: ListContext
    ) -> AbstractAsyncContextManager[Reader[Statements]] | None:
        """The read engine of a SQLite file (``read_engine``), for a session that holds nothing."""
        bind = handle.get_bind()
        if not self.local_reads or not isinstance(bind, Engine):
            return None
        codecs = self.config.engine_config if self.config is not None else None
        reads = read_engine(
            bind,
            json_serializer=None if codecs is None else codecs.json_serializer,
            json_deserializer=None if codecs is None else codecs.json_deserializer,
        )
        return None if reads is None else nullcontext(EngineReader(reads, context))

    def unavailable(self, error: BaseException) -> UnavailableError | None:  # noqa: D102
        return unavailable(error)

    def build(
        self,
        compiler: StatementCompiler,
        query: ListQuery,
        context: ListContext,
        search_form: SearchForm = SearchForm.SCAN,
    ) -> Statements:
        """The page statement of the shape ``query``, the total's statement, and how the page's rows become items.

        Items are built from plain rows (``RowPlan``) unless they need ORM instances: a ``to_item``,
        a to-many eager load, an inheriting model, or a base statement of another shape.
        """
        counted = context.count_in_page
        page_statement, total_statement = compiler.compile(
            query, keys=context.keyset, offset=Slot(OFFSET, int), total=counted, search_form=search_form
        )
        total_statement = total_statement.execution_options(**BY_POSITION)
        # The page's labelled columns: the base statement's own, the total, the keyset's values.
        key_count = len(query.order) if context.keyset else 0
        descriptions = page_statement.column_descriptions
        labelled = [description["name"] for description in descriptions[1:]]
        labels = tuple(labelled[: len(labelled) - key_count - int(counted)])
        plan = None if self._to_item is not None else row_plan(self.model, context.load)
        if plan is not None:
            policies = compiler.policies(query)

            def policy_on(entity: Any, model: type[Any]) -> ColumnElement[bool] | None:
                allowed: ColumnElement[bool] | None = compiler.policy_condition(
                    (entity, ()), mapped_name(model), policies
                )
                return allowed

            rows_statement = plan.statement(page_statement, descriptions, policy_on)
            if rows_statement is not None:
                total_at = len(plan.columns) + len(labels) if counted else None
                return Statements(rows_statement, total_statement, labels, plan, total_at=total_at)
        if context.load:
            page_statement = page_statement.options(*loader_options(self.model, context.load, compiler, query))
        # Loaded relations follow this request's policies, not what the session holds already: the
        # instances are loaded into an identity map of their own (``_load_apart``).
        apart = bool(context.load and query.policies)
        return Statements(
            page_statement,
            total_statement,
            labels,
            None,
            apart=apart,
            unique=bool(context.load),
            total_at=1 + len(labels) if counted else None,
        )

    def executable(self, compiler: StatementCompiler, statement: Select[Any]) -> Select[Any]:
        """``statement`` read by position (``BY_POSITION``): its rows become tuples."""
        return statement.execution_options(**BY_POSITION)

    async def items(  # noqa: D102
        self, reader: Reader[Statements], statements: Statements, rows: Sequence[Row[Any]], context: ListContext
    ) -> list[dict[str, Any]]:
        if statements.plan is not None:
            return statements.plan.items(rows, statements.labels)
        tree = load_tree(context.load)
        return [self._item(row, statements.labels, tree) for row in rows]

    def _item(self, row: Any, labels: tuple[str, ...], tree: Mapping[str, Any]) -> dict[str, Any]:
        instance = row[0]
        extras = dict(zip(labels, row[1 : 1 + len(labels)], strict=True))
        if self._to_item is not None:
            return self._to_item(instance, extras)
        item = as_dict(instance, tree)
        item.update(extras)
        return item


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
    return value.read_names(mapped_name) if isinstance(value, Computed) else ()
