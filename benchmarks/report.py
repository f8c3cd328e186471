"""What the reports of ``load.py`` and ``bench.py`` share: the provenance of a run and writing the report.

The versions of the packages measured, the commit, the PostgreSQL and MariaDB servers' settings,
and the generated part of a Markdown page between two marks.
"""

from __future__ import annotations

import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
from typing import Any
from urllib.parse import urlsplit

import asyncpg

# tests/harness.py lives outside the package: the repository root goes first on the path to import it.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from tests.harness import postgres_url

ROOT = pathlib.Path(__file__).resolve().parent.parent


def package_version(name: str) -> str | None:
    """The installed version of a distribution, None when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def git_state() -> dict[str, Any]:
    """The commit measured, and the files that differed from it."""
    git = shutil.which("git")
    if git is None:
        return {"commit": None, "modified": []}

    def run(*arguments: str) -> str:
        done = subprocess.run([git, *arguments], cwd=ROOT, capture_output=True, text=True, check=False)  # noqa: S603
        return done.stdout.rstrip("\n") if done.returncode == 0 else ""

    status = run("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": run("rev-parse", "HEAD") or None,
        "modified": [line[3:] for line in status.splitlines() if line.strip()],
    }


async def database_server(url: str) -> dict[str, Any]:
    """The version of the PostgreSQL server of ``url`` and the settings that shape query costs."""
    connection = await asyncpg.connect(postgres_url(urlsplit(url).path.lstrip("/"), url))
    try:
        server = await connection.fetchval("SELECT version()")
        settings = {
            name: await connection.fetchval(f"SHOW {name}")
            for name in ("max_connections", "shared_buffers", "work_mem", "max_parallel_workers_per_gather", "jit")
        }
    finally:
        await connection.close()
    return {"postgresql": server, "postgresql_settings": settings}


async def mariadb_server(url: str) -> dict[str, Any]:
    """The version of the MariaDB server of ``url`` (``mysql+asyncmy://``) and the settings that shape query costs.

    ``innodb_buffer_pool_size`` (bytes) says whether a table's pages stay in memory between
    statements; the others bound a count's or a sort's work in memory.
    """
    import asyncmy

    parts = urlsplit(url)
    connection = await asyncmy.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=parts.username or "root",
        password=parts.password or "",
    )
    names = ("max_connections", "innodb_buffer_pool_size", "sort_buffer_size", "tmp_table_size", "optimizer_switch")
    try:
        async with connection.cursor() as cursor:
            await cursor.execute("SELECT version()")
            server = str((await cursor.fetchone())[0])
            settings: dict[str, Any] = {}
            for name in names:
                await cursor.execute(f"SELECT @@{name}")
                settings[name] = (await cursor.fetchone())[0]
    finally:
        connection.close()
    return {"mariadb": server, "mariadb_settings": settings}


def write_markdown(path: pathlib.Path, generated: str, *, title: str, marks: tuple[str, str]) -> None:
    """Replace the generated part of ``path`` (between ``marks``), keeping the text around it.

    ``generated`` starts with the begin mark and ends with the end mark. A page without both marks
    gets ``generated`` appended, and a missing page is written anew: ``# <title>`` and ``generated``.
    """
    begin, end = marks
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if begin in text and end in text:
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(end)
        text = head + generated.rstrip("\n") + tail
    elif text:
        text = text.rstrip("\n") + "\n\n" + generated.rstrip("\n") + "\n"
    else:
        text = f"# {title}\n\n" + generated
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
