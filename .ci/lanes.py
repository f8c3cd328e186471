"""Run nox sessions two at a time, one per core: ``python3 .ci/lanes.py SESSION...``.

A name nox parametrizes (``tests``, ``pythons``) stands for all its sessions, as with ``nox -s``. The
sessions start in the order given, each as soon as a lane is free, except that two sessions of one
database server (``TestTarget.server`` in tests/matrix.py) never run at once: the next session that
may run goes first. Each session's output is printed whole when it ends; the exit status is 1 when
any session failed, and every session runs either way.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.matrix import TARGETS

LANES = 2
NOX = (sys.executable, "-m", "nox")


def expand(names: list[str]) -> list[str]:
    """The nox sessions ``names`` select, in their order (``nox --list --json``)."""
    command = [*NOX, "--list", "--json", "--sessions", *names]
    listed = subprocess.run(command, capture_output=True, text=True, check=True)
    sessions = [entry["session"] for entry in json.loads(listed.stdout)]
    return sorted(sessions, key=lambda session: next(i for i, name in enumerate(names) if session.startswith(name)))


def server(session: str) -> str:
    """The database server ``session`` uses (``tests(<target>)`` only); empty for none."""
    return next((target.server for target in TARGETS if session == f"tests({target.session})"), "")


def main(names: list[str]) -> int:
    """Run the sessions ``names`` select in ``LANES`` lanes; 0 when all passed, else 1."""
    pending = expand(names)
    busy: set[str] = set()
    failed: list[str] = []
    times: dict[str, float] = {}
    turn = threading.Condition()

    def lane() -> None:
        while True:
            with turn:
                while True:
                    if not pending:
                        return
                    ready = [session for session in pending if not server(session) or server(session) not in busy]
                    if ready:
                        break
                    turn.wait()
                session = ready[0]
                pending.remove(session)
                busy.add(server(session))
            started = time.monotonic()
            with tempfile.TemporaryFile(mode="w+") as log:
                command = [*NOX, "--sessions", session]
                status = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
                log.seek(0)
                with turn:
                    times[session] = time.monotonic() - started
                    outcome = "passed" if status.returncode == 0 else "FAILED"
                    print(f"\n===== {session}: {outcome} in {times[session]:.0f} s")
                    print(log.read(), flush=True)
                    if status.returncode != 0:
                        failed.append(session)
                    busy.discard(server(session))
                    turn.notify_all()

    lanes = [threading.Thread(target=lane) for _ in range(LANES)]
    for thread in lanes:
        thread.start()
    for thread in lanes:
        thread.join()
    for session, seconds in times.items():
        print(f"{seconds:7.0f} s  {'FAILED' if session in failed else 'passed'}  {session}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
