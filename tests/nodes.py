"""PostgreSQL nodes of the tests' own: a primary, a hot standby streaming from it, and pgbouncer.

Made from the Debian binaries (``pg_config --bindir``: ``initdb``, ``pg_ctl``, ``pg_basebackup -R``) in
a temporary folder, run as the ``postgres`` user when the tests run as root, and torn down by
``stop``. The machine's own server (5432) is not touched. Ports (issue "When one database is not
enough"): the primary on 127.0.0.1:5434 with replication allowed from loopback, the standby on
127.0.0.1:5433, pgbouncer in transaction pooling mode on 127.0.0.1:6432 in front of the primary.
Standard library only (asyncpg inside ``caught_up``): the scaling load benchmark imports this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ("POOL_SIZE", "NodeError", "Nodes", "caught_up", "missing", "pause", "start", "stop")

PRIMARY_PORT = 5434
STANDBY_PORT = 5433
PGBOUNCER_PORT = 6432
HOST = "127.0.0.1"
USER = "postgres"
POOL_SIZE = 8
"""pgbouncer's server connections per database and user: fewer than the clients the tests run at once."""


class NodeError(RuntimeError):
    """A node could not be made or started; the message says which and why."""


@dataclass(frozen=True)
class Nodes:
    """Where the nodes listen, as ``postgresql://`` URLs of database ``postgres``.

    Attributes:
        folder: The temporary folder holding the clusters, their logs and pgbouncer's files.
        primary: The primary (read-write).
        standby: The hot standby (read-only, streaming from the primary).
        pgbouncer: pgbouncer in transaction mode; database ``<name>`` is ``<name>`` on the primary.
    """

    folder: Path
    primary: str
    standby: str
    pgbouncer: str

    def url(self, node: str, database: str) -> str:
        """The URL of ``database`` on ``node`` (``primary``, ``standby`` or ``pgbouncer``)."""
        base: str = getattr(self, node)
        return base.rsplit("/", 1)[0] + "/" + database


_NO_PGBOUNCER = "pgbouncer is not installed: it is the Debian package pgbouncer (apt-get install -y pgbouncer)"
_NO_PG_CONFIG = (
    "pg_config is not on PATH: the PostgreSQL server binaries are the Debian package postgresql"
    " (apt-get install -y postgresql)"
)


def missing() -> str | None:
    """What this machine lacks to make the nodes, with the command that installs it; None: nothing.

    A look at ``PATH`` only: ``start`` may still fail (a port taken, a binary that does not run).
    """
    if shutil.which("pgbouncer") is None:
        return _NO_PGBOUNCER
    return _NO_PG_CONFIG if shutil.which("pg_config") is None else None


def _binaries() -> Path:
    pg_config = shutil.which("pg_config")
    if pg_config is None:
        raise NodeError(_NO_PG_CONFIG)
    found = subprocess.run([pg_config, "--bindir"], check=True, capture_output=True, text=True)  # noqa: S603 - a path from which()
    return Path(found.stdout.strip())


def _as_owner(command: list[str]) -> list[str]:
    """``command`` run as the ``postgres`` user when we are root (PostgreSQL refuses to run as root)."""
    return ["runuser", "-u", USER, "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(_as_owner(command), capture_output=True, text=True, check=False)  # noqa: S603 - our own argv
    if done.returncode != 0:
        msg = f"{what} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-800:]}"
        raise NodeError(msg)


def _free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((HOST, port)) != 0


def _wait_for(port: int, what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while _free(port):
        if time.monotonic() > deadline:
            msg = f"{what} is not listening on {HOST}:{port} after {seconds:.0f} s"
            raise NodeError(msg)
        time.sleep(0.05)


_SERVER_SETTINGS = """
listen_addresses = '{host}'
port = {port}
unix_socket_directories = '{folder}'
wal_level = replica
max_wal_senders = 4
hot_standby = on
hot_standby_feedback = on
max_connections = 100
fsync = off
synchronous_commit = off
full_page_writes = off
"""


def start(folder: Path | None = None) -> Nodes:
    """Make and start the primary, the standby and pgbouncer; about 4 s.

    Raises:
        NodeError: a port is taken, a binary is missing, or a node did not start; whatever was
            started is stopped again first.
    """
    # What is missing first: it is the same whoever else runs, and it names the fix.
    lacking = missing()
    if lacking is not None:
        raise NodeError(lacking)
    for port, what in ((PRIMARY_PORT, "primary"), (STANDBY_PORT, "standby"), (PGBOUNCER_PORT, "pgbouncer")):
        if not _free(port):
            msg = f"{HOST}:{port} (the {what}'s port) is taken: another run's nodes, or another server"
            raise NodeError(msg)
    bindir = _binaries()
    folder = folder or Path(tempfile.mkdtemp(prefix="litestar-listing-nodes-"))
    if os.geteuid() == 0:
        shutil.chown(folder, USER)
    primary, standby = folder / "primary", folder / "standby"
    try:
        _run(
            [str(bindir / "initdb"), "-D", str(primary), "-A", "trust", "-U", USER, "-E", "UTF8", "--no-sync"],
            "initdb of the primary",
        )
        settings = _SERVER_SETTINGS.format(host=HOST, port=PRIMARY_PORT, folder=folder)
        with (primary / "postgresql.conf").open("a") as conf:
            conf.write(settings)
        with (primary / "pg_hba.conf").open("a") as hba:
            hba.write(f"host replication all {HOST}/32 trust\n")
        _run([str(bindir / "pg_ctl"), "-D", str(primary), "-l", str(folder / "primary.log"), "-w", "start"], "primary")
        _run(
            [
                str(bindir / "pg_basebackup"),
                *("-h", HOST, "-p", str(PRIMARY_PORT), "-U", USER, "-D", str(standby), "-R", "-X", "stream"),
            ],
            "pg_basebackup of the standby",
        )
        with (standby / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {STANDBY_PORT}\n")
        _run([str(bindir / "pg_ctl"), "-D", str(standby), "-l", str(folder / "standby.log"), "-w", "start"], "standby")
        (folder / "userlist.txt").write_text(f'"{USER}" ""\n')
        (folder / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={HOST} port={PRIMARY_PORT}\n"
            "[pgbouncer]\n"
            f"listen_addr = {HOST}\nlisten_port = {PGBOUNCER_PORT}\nunix_socket_dir = {folder}\n"
            f"auth_type = trust\nauth_file = {folder / 'userlist.txt'}\n"
            "pool_mode = transaction\nmax_client_conn = 400\n"
            f"default_pool_size = {POOL_SIZE}\n"
            f"pidfile = {folder / 'pgbouncer.pid'}\nlogfile = {folder / 'pgbouncer.log'}\n"
        )
        if os.geteuid() == 0:
            for path in folder.iterdir():
                if path.is_file():
                    shutil.chown(path, USER)
        _run(["pgbouncer", "-d", str(folder / "pgbouncer.ini")], "pgbouncer")
        _wait_for(PGBOUNCER_PORT, "pgbouncer")
    except BaseException:
        stop(folder)
        raise
    return Nodes(
        folder=folder,
        primary=f"postgresql://{USER}@{HOST}:{PRIMARY_PORT}/postgres",
        standby=f"postgresql://{USER}@{HOST}:{STANDBY_PORT}/postgres",
        pgbouncer=f"postgresql://{USER}@{HOST}:{PGBOUNCER_PORT}/postgres",
    )


def stop(folder: Path) -> None:
    """Stop pgbouncer, the standby and the primary made in ``folder``, and remove it. Never raises."""
    pid_file = folder / "pgbouncer.pid"
    if pid_file.exists():
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
    try:
        bindir = _binaries()
    except (NodeError, OSError, subprocess.CalledProcessError):
        bindir = None
    for cluster in ("standby", "primary"):
        if bindir is not None and (folder / cluster / "postmaster.pid").exists():
            subprocess.run(  # noqa: S603 - our own argv
                _as_owner([str(bindir / "pg_ctl"), "-D", str(folder / cluster), "-m", "immediate", "-w", "stop"]),
                capture_output=True,
                check=False,
            )
    for port in (PGBOUNCER_PORT,):
        deadline = time.monotonic() + 5
        while not _free(port) and time.monotonic() < deadline:
            time.sleep(0.05)
    shutil.rmtree(folder, ignore_errors=True)


def pause(nodes: Nodes, cluster: str, *, stopped: bool) -> None:
    """Stop (``stopped=True``) or start again the ``primary`` or ``standby`` of ``nodes``.

    Raises:
        NodeError: pg_ctl failed.
    """
    bindir = _binaries()
    folder = nodes.folder / cluster
    if stopped:
        _run([str(bindir / "pg_ctl"), "-D", str(folder), "-m", "fast", "-w", "stop"], f"stopping the {cluster}")
    else:
        log = str(nodes.folder / f"{cluster}.log")
        _run([str(bindir / "pg_ctl"), "-D", str(folder), "-l", log, "-w", "start"], f"starting the {cluster}")


# Received too, not only replayed: a standby that has just restarted replays the WAL it has on disk,
# and its received position stays behind until new WAL streams in (about 11 s measured on an idle
# primary); until then the backends count it as late (replicas.LAG_QUERY) and skip it.
_CAUGHT_UP = "SELECT pg_last_wal_receive_lsn() >= $1::pg_lsn AND pg_last_wal_replay_lsn() >= $1::pg_lsn"


async def caught_up(primary: str, standby: str, seconds: float = 30.0) -> None:
    """Wait until ``standby`` streams from ``primary`` and has replayed everything it has written so far.

    Raises:
        TimeoutError: Not within ``seconds``.
    """
    import asyncpg

    source = await asyncpg.connect(primary, statement_cache_size=0)
    try:
        # A transaction with an id writes a commit record: new WAL to stream, even on an idle primary.
        await source.execute("SELECT pg_current_xact_id()")
        # The insert position, not pg_current_wal_lsn(): with synchronous_commit = off (above) a commit
        # that has returned may not be written yet, and a standby at the write position lacks it.
        position = await source.fetchval("SELECT pg_current_wal_insert_lsn()")
    finally:
        await source.close()
    # Its maintenance database: the one written may not have reached the standby yet.
    replica = await asyncpg.connect(standby.rsplit("/", 1)[0] + "/postgres", statement_cache_size=0)
    try:
        deadline = asyncio.get_running_loop().time() + seconds
        while not await replica.fetchval(_CAUGHT_UP, position):
            if asyncio.get_running_loop().time() > deadline:
                msg = f"the standby did not replay up to {position} in {seconds:.0f} s"
                raise TimeoutError(msg)
            await asyncio.sleep(0.02)
    finally:
        await replica.close()
