"""Settings for PostgreSQL behind a pooler in transaction mode (pgbouncer ``pool_mode = transaction``).

A transaction pooler hands each transaction whichever server connection is free, so nothing may
outlive a transaction on the server: asyncpg's named prepared statements (``__asyncpg_stmt_1__``...)
would collide between clients or be missing on the next connection. These settings make every
statement unnamed (prepared and run within its own transaction) and turn the client-side caches
off. The statement timeout of a list is ``set_config(..., true)``, local to its transaction, so it
needs nothing here. Standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ("piccolo_pool_options", "sqlalchemy_connect_args")


def _unnamed() -> str:
    return ""


def sqlalchemy_connect_args() -> dict[str, Any]:
    """``connect_args`` for ``create_async_engine("postgresql+asyncpg://...", connect_args=...)``.

    Returns:
        A new dict: asyncpg's statement cache off (``statement_cache_size=0``), SQLAlchemy's
        prepared-statement cache off, and unnamed prepared statements.
    """
    return {"statement_cache_size": 0, "prepared_statement_cache_size": 0, "prepared_statement_name_func": _unnamed}


def piccolo_pool_options() -> dict[str, Any]:
    """Options for ``PostgresEngine(config={"dsn": ..., **piccolo_pool_options()})`` (asyncpg's pool).

    Returns:
        A new dict: asyncpg's statement cache off, so its statements are unnamed.
    """
    return {"statement_cache_size": 0}
