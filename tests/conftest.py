"""Test-wide settings: which backends and databases run, and PostgreSQL databases for them.

``LISTING_DATABASES`` (default ``sqlite,postgresql``) and ``LISTING_BACKENDS`` (default
``memory,sqlalchemy,piccolo``) select the matrix; nox sets them per session. PostgreSQL comes from
``LISTING_POSTGRES_URL``; when it is unreachable the tests that need it are skipped, except in CI
(``CI=true``), where they fail.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from urllib.parse import urlsplit, urlunsplit

import pytest

POSTGRES_URL = os.environ.get("LISTING_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
DATABASES = tuple(filter(None, os.environ.get("LISTING_DATABASES", "sqlite,postgresql").split(",")))
BACKENDS = tuple(filter(None, os.environ.get("LISTING_BACKENDS", "memory,sqlalchemy,piccolo").split(",")))
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

_created: dict[str, str] = {}


def postgres_database_url(database: str) -> str:
    """A plain ``postgresql://`` URL of ``database`` on the test server, created if missing.

    Skips the calling test when the server is unreachable, or fails it in CI.
    """
    if database in _created:
        return _created[database]
    import asyncpg

    async def create() -> None:
        connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
        try:
            exists = await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database)
            if not exists:
                # Code-point collation, UTF-8 character classes: text order is the same as SQLite's
                # BINARY and Python's, so one table of expectations holds on every server.
                await connection.execute(
                    f"CREATE DATABASE \"{database}\" TEMPLATE template0 ENCODING 'UTF8' "
                    "LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'"
                )
        finally:
            await connection.close()

    try:
        # A fresh thread: callers may be inside a running event loop (async fixtures).
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as executor:
            executor.submit(asyncio.run, create()).result()
    except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as error:
        message = f"PostgreSQL at {POSTGRES_URL} is not usable: {error!r}"
        if IN_CI:
            pytest.fail(message + " (CI=true: a missing database is a failure)", pytrace=False)
        pytest.skip(message)
    parts = urlsplit(POSTGRES_URL)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, parts.fragment))
    _created[database] = url
    return url


def async_url(url: str) -> str:
    """``postgresql://`` -> ``postgresql+asyncpg://`` for SQLAlchemy."""
    return url.replace("postgresql://", "postgresql+asyncpg://", 1)
