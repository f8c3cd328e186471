"""Row policies on Piccolo statements of one's own: ``policy_condition`` (docs: scoping, "Row policies")."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from piccolo.querystring import QueryString

from litestar_listing.backends.piccolo.compiler import QUERY_COMPILERS, QueryCompiler, TableAlias, engine_database
from litestar_listing.backends.piccolo.introspection import Tables
from litestar_listing.backends.relational.compiler import with_followed
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.query import Policy

if TYPE_CHECKING:
    from piccolo.table import Table

__all__ = ("policy_condition", "table_compiler")

_ALIAS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A table alias ``policy_condition`` renders (quoted): an SQL identifier, never one of Piccolo's join aliases."""


@functools.lru_cache(maxsize=64)
def table_compiler(table: type[Table], engine_type: str) -> QueryCompiler:
    """The compiler of ``table`` alone on the database of Piccolo's ``engine_type``.

    Raises:
        ConfigurationError: The database is not supported.
    """
    return QUERY_COMPILERS[engine_database(engine_type).name](Tables(table), {}, None)


def policy_condition(
    table: type[Table],
    policy: Policy | None,
    engine_type: str = "postgres",
    *,
    alias: str | None = None,
    policies: Mapping[str, Policy] | None = None,
) -> QueryString | None:
    """The condition ``policy`` puts on rows of ``table``, for statements of one's own (docs: scoping, "Row policies").

    For enrichment and computed values that count rows of a table with a policy; ``policies`` come
    from ``request_policies(context)``.

    Args:
        table: The table the statement reads.
        policy: Its policy for the request, or None for none.
        engine_type: The engine's ``engine_type`` (``"sqlite"`` or ``"postgres"``).
        alias: The name the statement reads the rows as, ``FROM <table> AS "<alias>"``: the columns
            are ``"<alias>"."<column>"``. None: those of ``table`` itself, ``"<table>"."<column>"``
            (``FROM <table>`` without an alias).
        policies: Every policy of the request by model name, which a policy that follows a relation
            (``RowPolicy(through=...)``) reads for the related table.

    Returns:
        The condition (compiled by the shared compiler, as for listed rows), or None when ``policy``
        restricts nothing.

    Raises:
        ConfigurationError: ``engine_type`` is neither SQLite nor PostgreSQL, ``alias`` is not an SQL
            identifier (letters, digits and underscores, not starting with a digit), or ``policy``
            follows a relation and ``policies`` was not given.
    """
    if alias is not None and not _ALIAS.fullmatch(alias):
        msg = f"the alias {alias!r} of {table.__name__} is not an SQL identifier (letters, digits, underscores)"
        raise ConfigurationError(msg)
    if policy is None:
        return None
    compiler = table_compiler(table, engine_type)
    anchor = table if alias is None else TableAlias(table, alias)
    condition: QueryString | None = compiler.policy_condition(
        (table, anchor), policy.entity, with_followed(policy, policies)
    )
    return condition
