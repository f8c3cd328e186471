"""What the relational backends need to know of each database, in one place per database.

A ``Database`` says how a list runs there, whatever the ORM: whether the planner gives an estimate
of the rows (estimated totals), whether a count may run on a second connection beside the page,
whether a statement gets its time limit from the server or from the SQLite guard, whether the
database can be a read replica, and how a list is held to one of its cores. The backends look a
database up by the name their ORM gives it (``database``); a database not listed is refused when the
application starts, with a message that says which are supported (docs: design, "Execution").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.fields import ValueType

__all__ = (
    "DATABASES",
    "MARIADB",
    "PLACEHOLDER",
    "POSTGRESQL",
    "SQLITE",
    "Database",
    "database",
    "local_settings_sql",
)


PLACEHOLDER = re.compile(r"\{([0-9])\}")
"""Where an SQL template of a ``Database`` takes an expression, ``{0}``, ``{1}``...: split on it, the
odd pieces are the expressions' numbers."""


@dataclass(frozen=True, slots=True)
class Database:
    """One database as the relational execution sees it.

    Attributes:
        name: Its name in this project (``"sqlite"``, ``"postgresql"``): the compilers' dialect.
        estimates: The planner estimates the rows of a statement without running it (``EXPLAIN``),
            so a list may answer with an estimated total (docs: design, "Estimated totals").
        counts_apart: A list that holds nothing may count on a second pooled connection beside its
            page and see what its own connection would have seen: each statement sees a snapshot of
            its own (PostgreSQL's READ COMMITTED), or a transaction from its first read (MariaDB's
            REPEATABLE READ), so a count begun with the page reads the data of the same moment.
        search_candidates: The condition by which a search whose paths indexes serve reads its
            candidates (``compiler.SearchForm``; docs: indexes, "Search from indexes"): ``{0}`` the
            listed table's primary key, ``{1}`` the candidates' statement in parentheses; None where
            no search does. PostgreSQL's planner, told ``{0} IN {1}``, joins the candidates to the
            table by scanning it (measured: 88 ms for 1,467 candidates on the demo's flights, against
            a 50 ms scan); from an array it reads them by key, and its estimate of an array's length
            (10) keeps it so.
        candidate_share: The share of the listed table's rows up to which a search reads its
            candidates rather than scan (``RelationalCompiler.candidate_limit``): a candidate read by
            key costs about what ``1 / candidate_share`` rows cost scanned (measured on the demo's
            flights: SQLite reads 6,392 candidates in 10 ms and scans 336,776 rows in 73 ms;
            PostgreSQL scans with parallel workers, and its candidates' statements start some too).
        timeout_setting: The setting by which the server stops a statement past its time limit
            itself (PostgreSQL's ``statement_timeout``, SQLSTATE 57014; MariaDB's
            ``max_statement_time``, error 1969); None: the ``StatementGuard`` of each connection
            aborts it (SQLite).
        timeout_unit: The seconds of one unit of ``timeout_setting`` (PostgreSQL counts
            milliseconds, MariaDB seconds).
        local_settings: A setting made for a list ends with its transaction (PostgreSQL's
            ``set_config(..., true)``: ``local_settings_sql``); otherwise it holds for the session and
            is put back after the list, whether it failed or not (MariaDB's ``SET SESSION``).
        replicas: The database can serve lists as a hot standby whose lag ``LAG_QUERY`` reads.
        local_reads: The database is a file that a list may read on a pooled connection of its
            own in a worker thread, its page and count in one call (the local read path of
            ``execution``), when the caller holds nothing.
        parallel_setting: The setting that caps the parallel workers of each statement
            (PostgreSQL's ``max_parallel_workers_per_gather``), set to 0 for the transaction of a
            list held to one core (``ListContext.parallel``); None where a statement runs on one
            core anyway (SQLite).
        key_settings: Settings for the transaction of a list that reads its rows by key
            (``ListContext.by_key``: a search read from its candidates). PostgreSQL's ``jit`` off:
            its planner prices the candidates' statements for the worst case (an airport's name
            matched: millions of flights), and compiled them for half a second to read 6,698 rows
            of 10M in 47 ms (docs: indexes, "Search from indexes").
        parts: The SQL of each date part computed per row (``core.parts.PARTS``), from the date or
            datetime ``{0}``, as ``Part.extract`` defines it: an integer, a date for ``date`` (docs:
            query language, "Parts of dates"). A filter compares the ranged parts (``date``,
            ``year``) as ranges of the column instead; a facet reads every part per row (docs: facets).
        text_year: The SQL of the year of a JSON key's ``YYYY-MM-DD`` text ``{0}``: the year it
            writes, whether or not it names a day (``Part.extract``).
        utc: The SQL that reads a datetime column carrying an offset, ``{0}``, as a UTC datetime
            before its part is taken (``{0}`` where the parts SQL does that already).
        json_path: The SQL texts that name a key in a JSON document, by the tokens the JSON templates
            hold (``{path}``...), from the key's names (checked plain names: never a client's text).
        json_value: By a key's type, the SQL of its value in the document ``{0}``: NULL where the
            key is missing, JSON null or of another type (``JsonKey.values``; docs: query
            language, "Keys of JSON documents").
        json_element: By a list key's type, the SQL of one element of the list, NULL when of another type.
        json_some: The SQL that some element ``{1}`` of the list in ``{0}``, not NULL, meets ``{2}``.
        json_list: The SQL that is NULL unless ``{0}`` holds a list at the key.
        json_elements: The SQL of a FROM item that reads each element of the list at the key in
            ``{0}`` as ``listing_element`` (what ``json_element`` reads), for a LEFT JOIN that may
            read ``{0}`` from the tables before it; no element, or any, where ``{0}`` holds no list
            there (the join's condition checks ``json_list``). A facet of a list key counts each
            element (docs: facets).
    """

    name: str
    estimates: bool
    counts_apart: bool
    replicas: bool
    local_reads: bool
    search_candidates: str | None = None
    candidate_share: float = 0.0
    timeout_setting: str | None = None
    timeout_unit: float = 1.0
    local_settings: bool = True
    parallel_setting: str | None = None
    key_settings: Mapping[str, str] = field(default_factory=dict)
    parts: Mapping[str, str] = field(default_factory=dict)
    text_year: str = ""
    utc: str = "{0}"
    json_path: Callable[[Sequence[str]], Mapping[str, str]] = lambda _keys: {}
    json_value: Mapping[ValueType, str] = field(default_factory=dict)
    json_element: Mapping[ValueType, str] = field(default_factory=dict)
    json_some: str = ""
    json_list: str = ""
    json_elements: str = ""

    @property
    def server_timeout(self) -> bool:
        """The server stops a statement past its time limit itself (``timeout_setting``)."""
        return self.timeout_setting is not None

    def timeout_value(self, seconds: float) -> str:
        """``timeout_setting``'s value for a limit of ``seconds``: at least one millisecond, whole ones."""
        milliseconds = max(1, int(seconds * 1000))
        return f"{milliseconds / (self.timeout_unit * 1000):.3f}".rstrip("0").rstrip(".")

    def json_template(self, template: str, keys: Sequence[str]) -> str:
        """``template`` naming the key ``keys`` (``json_path``'s texts in place of their tokens)."""
        for token, text in self.json_path(keys).items():
            template = template.replace(token, text)
        return template


def _extracted(template: str, fields: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType({part: template.format(field, "{0}") for part, field in fields.items()})


def _dotted_json_path(keys: Sequence[str]) -> Mapping[str, str]:
    return {"{path}": "'$." + ".".join(keys) + "'"}


def _sqlite_typed(kind: str, value: str) -> Mapping[ValueType, str]:
    """SQLite's typed value of a JSON value: ``kind`` its ``json_type``, ``value`` its SQL value."""
    date = f"{value} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'"
    return MappingProxyType(
        {
            ValueType.TEXT: f"CASE WHEN {kind} = 'text' THEN {value} END",
            ValueType.INTEGER: f"CASE WHEN {kind} = 'integer' THEN {value} END",
            ValueType.FLOAT: f"CASE WHEN {kind} IN ('integer', 'real') THEN CAST({value} AS REAL) END",
            ValueType.BOOLEAN: f"CASE {kind} WHEN 'true' THEN 1 WHEN 'false' THEN 0 END",
            ValueType.DATE: f"CASE WHEN {kind} = 'text' AND {date} THEN {value} END",
        }
    )


def _postgres_json_path(keys: Sequence[str]) -> Mapping[str, str]:
    # ``->`` steps rather than a ``#>`` path: a path is written in braces, which the templates keep for
    # their placeholders.
    steps = "".join(f" -> '{key}'" for key in keys[:-1])
    return {
        "{j}": f"(CAST({{0}} AS jsonb){steps} -> '{keys[-1]}')",
        "{t}": f"(CAST({{0}} AS jsonb){steps} ->> '{keys[-1]}')",
    }


def _postgres_typed(json: str, text: str) -> Mapping[ValueType, str]:
    """PostgreSQL's typed value of a JSON value: ``json`` it as ``jsonb``, ``text`` it as text."""
    date = f"{text} ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$'"
    return MappingProxyType(
        {
            ValueType.TEXT: f"CASE WHEN jsonb_typeof({json}) = 'string' THEN {text} END",
            ValueType.INTEGER: (
                f"CASE WHEN jsonb_typeof({json}) = 'number' AND {text} ~ '^-?[0-9]+$' THEN CAST({text} AS numeric) END"
            ),
            ValueType.FLOAT: f"CASE WHEN jsonb_typeof({json}) = 'number' THEN CAST({text} AS double precision) END",
            ValueType.BOOLEAN: f"CASE WHEN jsonb_typeof({json}) = 'boolean' THEN CAST({text} AS boolean) END",
            ValueType.DATE: f"CASE WHEN jsonb_typeof({json}) = 'string' AND {date} THEN {text} END",
        }
    )


# SQLite's date functions read its text forms of a date or datetime, an offset included (the
# result is in UTC); ``%w`` counts the week from Sunday = 0.
_SQLITE_MONTH = "CAST(strftime('%m', {0}) AS INTEGER)"
SQLITE = Database(
    "sqlite",
    estimates=False,
    counts_apart=False,
    replicas=False,
    local_reads=True,
    search_candidates="{0} IN {1}",
    candidate_share=1 / 30,
    parts=MappingProxyType(
        {
            "date": "date({0})",
            "year": "CAST(strftime('%Y', {0}) AS INTEGER)",
            "quarter": f"(({_SQLITE_MONTH} + 2) / 3)",
            "month": _SQLITE_MONTH,
            "day": "CAST(strftime('%d', {0}) AS INTEGER)",
            "week_day": "((CAST(strftime('%w', {0}) AS INTEGER) + 6) % 7 + 1)",
            "hour": "CAST(strftime('%H', {0}) AS INTEGER)",
        }
    ),
    json_path=_dotted_json_path,
    json_value=_sqlite_typed("json_type({0}, {path})", "json_extract({0}, {path})"),
    json_element=_sqlite_typed("listing_element.type", "listing_element.value"),
    # ``json_each`` of a value that is not a list reads it as one element: the type is checked first.
    json_some=(
        "(json_type({0}, {path}) = 'array' AND EXISTS (SELECT 1 FROM json_each({0}, {path}) AS listing_element"
        " WHERE {1} IS NOT NULL AND {2}))"
    ),
    json_list="CASE WHEN json_type({0}, {path}) = 'array' THEN 1 END",
    json_elements="json_each({0}, {path}) AS listing_element",
    text_year="CAST(substr({0}, 1, 4) AS INTEGER)",
)
POSTGRESQL = Database(
    "postgresql",
    estimates=True,
    counts_apart=True,
    replicas=True,
    local_reads=False,
    search_candidates="{0} IN (SELECT unnest(ARRAY{1}))",
    candidate_share=1 / 100,
    timeout_setting="statement_timeout",
    timeout_unit=0.001,
    parallel_setting="max_parallel_workers_per_gather",
    key_settings=MappingProxyType({"jit": "off"}),
    parts=MappingProxyType(
        {
            "date": "CAST({0} AS date)",
            # ``date_part`` (a float) rather than ``EXTRACT`` (a numeric since PostgreSQL 14): the
            # month facet over 1M flights took 250 ms against 290 ms on one core (docs: benchmarks).
            **_extracted(
                "CAST(date_part('{0}', {1}) AS INTEGER)",
                {
                    "year": "year",
                    "quarter": "quarter",
                    "month": "month",
                    "day": "day",
                    "week_day": "isodow",
                    "hour": "hour",
                },
            ),
        }
    ),
    # A ``timestamptz`` in the session's time zone would give that zone's parts.
    utc="({0} AT TIME ZONE 'UTC')",
    json_path=_postgres_json_path,
    json_value=_postgres_typed("{j}", "{t}"),
    json_element=_postgres_typed("listing_element.value", "(listing_element.value #>> CAST(ARRAY[] AS text[]))"),
    # ``jsonb_array_elements`` of a value that is not a list is an error: it gets NULL, no element.
    json_some=(
        "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof({j}) = 'array' THEN {j} END)"
        " AS listing_element(value) WHERE {1} IS NOT NULL AND {2})"
    ),
    json_list="CASE WHEN jsonb_typeof({j}) = 'array' THEN 1 END",
    json_elements=(
        "jsonb_array_elements(CASE WHEN jsonb_typeof({j}) = 'array' THEN {j} END) AS listing_element(value)"
    ),
    text_year="CAST(substr({0}, 1, 4) AS INTEGER)",
)


def _mariadb_typed(json: str) -> Mapping[ValueType, str]:
    """MariaDB's typed value of a JSON value, ``json`` its JSON text (``JSON_EXTRACT``'s)."""
    kind = f"JSON_TYPE({json})"
    text = f"JSON_UNQUOTE({json})"
    date = f"{text} REGEXP '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$'"
    return MappingProxyType(
        {
            ValueType.TEXT: f"CASE WHEN {kind} = 'STRING' THEN {text} END",
            ValueType.INTEGER: f"CASE WHEN {kind} = 'INTEGER' THEN CAST({json} AS SIGNED) END",
            ValueType.FLOAT: f"CASE WHEN {kind} IN ('INTEGER', 'DOUBLE') THEN CAST({json} AS DOUBLE) END",
            ValueType.BOOLEAN: f"CASE WHEN {kind} = 'BOOLEAN' THEN {json} = 'true' END",
            ValueType.DATE: f"CASE WHEN {kind} = 'STRING' AND {date} THEN {text} END",
        }
    )


_MARIADB_FOUND = "JSON_EXTRACT({0}, {path})"
# MariaDB 10.6 and later: JSON_TABLE, and its JSON columns. A DATETIME holds no offset: an aware
# datetime is stored in UTC (advanced-alchemy's ``DateTimeUTC``), so its parts need no conversion.
MARIADB = Database(
    "mariadb",
    estimates=False,
    counts_apart=True,
    replicas=False,
    local_reads=False,
    timeout_setting="max_statement_time",
    local_settings=False,
    parts=MappingProxyType(
        {
            "date": "DATE({0})",
            "year": "YEAR({0})",
            "quarter": "QUARTER({0})",
            "month": "MONTH({0})",
            "day": "DAYOFMONTH({0})",
            "week_day": "(WEEKDAY({0}) + 1)",
            "hour": "HOUR({0})",
        }
    ),
    json_path=_dotted_json_path,
    json_value=_mariadb_typed(_MARIADB_FOUND),
    json_element=_mariadb_typed("listing_element.value"),
    # ``JSON_TABLE`` over a value that is not a list finds no element at ``$[*]``: checked first all the same.
    json_some=(
        f"(JSON_TYPE({_MARIADB_FOUND}) = 'ARRAY' AND EXISTS (SELECT 1 FROM JSON_TABLE({_MARIADB_FOUND}, '$[*]'"  # noqa: S608
        " COLUMNS (value JSON PATH '$')) AS listing_element WHERE {1} IS NOT NULL AND {2}))"
    ),
    json_list=f"CASE WHEN JSON_TYPE({_MARIADB_FOUND}) = 'ARRAY' THEN 1 END",
    json_elements=f"JSON_TABLE({_MARIADB_FOUND}, '$[*]' COLUMNS (value JSON PATH '$')) AS listing_element",
    text_year="CAST(SUBSTR({0}, 1, 4) AS SIGNED)",
)

DATABASES: Mapping[str, Database] = MappingProxyType(
    {"sqlite": SQLITE, "postgresql": POSTGRESQL, "postgres": POSTGRESQL, "mariadb": MARIADB, "mysql": MARIADB}
)
"""The supported databases by the names the ORMs give them (SQLAlchemy's dialect name, Piccolo's engine type)."""


def database(name: str, backend: str, among: Collection[str]) -> Database:
    """The supported database an ORM calls ``name``.

    Args:
        name: The ORM's name of it (SQLAlchemy's dialect name, Piccolo's engine type).
        backend: The backend's name, for the message.
        among: The names (``Database.name``) of the databases ``backend`` runs on: its compilers'.

    Raises:
        ConfigurationError: ``name`` is not one of them; the message names ``backend`` and them.
    """
    found = DATABASES.get(name)
    if found is None or found.name not in among:
        supported = ", ".join(sorted(among))
        msg = f"{backend} runs on {supported}, not {name!r}"
        raise ConfigurationError(msg)
    return found


def local_settings_sql(names: str, values: str) -> str:
    """PostgreSQL's statement that sets settings for the current transaction, one row per setting.

    Each row is ``(name, value before, value now)``; ``set_config(..., true)`` is local to the
    transaction, so a setting ends with it, a rollback to a savepoint undoes it, and nothing outlives
    a transaction behind a pooler in transaction mode (``pooling``). ``names`` and ``values`` are the
    driver's placeholders of two text arrays (``$1``/``$2`` for asyncpg, ``:names``/``:values`` for
    SQLAlchemy).
    """
    return (
        "SELECT s.name, current_setting(s.name), set_config(s.name, s.value, true)"  # noqa: S608 - placeholders only
        f" FROM unnest(CAST({names} AS text[]), CAST({values} AS text[])) AS s(name, value)"
    )
