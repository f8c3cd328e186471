"""The pure parts of ``benchmarks/load_hostile.py``: percentiles, summaries, targets, the report.

Also the premise of its many-client cells: behind uvicorn's proxy headers middleware (on in
``litestar-listing demo``, trusting 127.0.0.1), a request's ``X-Forwarded-For`` becomes Litestar's
``request.client.host``. The script checks the same on the real demo, in its access log, before it
measures.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from litestar import Litestar, Request, get

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def hostile() -> ModuleType:
    # The benchmarks import their siblings by name (``from load import ...``), as ``python benchmarks/x.py`` allows.
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module("load_hostile")


def test_percentile_is_the_nearest_rank(hostile: ModuleType) -> None:
    hundred = [float(value) for value in range(100, 0, -1)]  # 100..1, unordered on purpose
    assert hostile.percentile(hundred, 50) == 50.0
    assert hostile.percentile(hundred, 99) == 99.0
    assert hostile.percentile(hundred, 100) == 100.0
    assert hostile.percentile([7.0, 1.0, 4.0], 50) == 4.0  # rank ceil(1.5) = 2
    assert hostile.percentile([7.0, 1.0, 4.0], 99) == 7.0
    assert hostile.percentile([3.0], 1) == 3.0
    assert hostile.percentile([], 50) is None


def test_heavy_summary_counts_how_refusals_were_made(hostile: ModuleType) -> None:
    sample = hostile.Sample
    samples = [
        sample("heavy", 200, 1.0),
        sample("heavy", 503, 2.0, retry_after=True),
        sample("heavy", 503, 3.0),  # no Retry-After
        sample("heavy", 429, 4.0, retry_after=True),
        sample("heavy", 500, 5.0),
        sample("heavy", 0, 60.0),  # unanswered
    ]
    summary = hostile.heavy_summary(samples)
    assert summary["count"] == 6
    assert summary["statuses"] == {"0": 1, "200": 1, "429": 1, "500": 1, "503": 2}
    assert summary["5xx_without_retry_after"] == 2  # the bare 503 and the 500
    assert summary["503_429_with_retry_after"] == 2
    assert summary["unanswered"] == 1
    assert summary["p50_ms"] == 3000.0  # ranks: 1, 2, 3, 4, 5, 60 s; ceil(3) = 3rd
    assert summary["p99_ms"] == summary["max_ms"] == 60000.0
    refused = [s.status for s in samples if hostile.refused_without_retry(s)]
    assert refused == [503, 500, 0]


def test_a_cell_meets_the_targets_only_within_every_bound(hostile: ModuleType) -> None:
    sample = hostile.Sample

    def cell(cheap_s: float, typical_s: float, heavy: list[Any]) -> dict[str, Any]:
        well = [sample("cheap", 200, cheap_s), sample("typical", 200, typical_s)]
        figures: dict[str, Any] = hostile.cell_figures([*well, *heavy], 200.0)  # idle typical p99: 200 ms
        return figures

    refused_well = [sample("heavy", 503, 9.0, retry_after=True), sample("heavy", 429, 1.0, retry_after=True)]
    met = cell(0.1, 0.6, refused_well)  # 100 ms and 3 x 200 ms: on the bounds
    assert met["checks"] == {"cheap_p99": True, "typical_p99": True, "no_other_5xx": True, "well_behaved_served": True}
    assert met["passed"]
    assert met["typical_p99_x_idle"] == 3.0
    slow = cell(0.1004, 0.61, refused_well)
    assert slow["checks"] == {
        "cheap_p99": False,
        "typical_p99": False,
        "no_other_5xx": True,
        "well_behaved_served": True,
    }
    bare = cell(0.01, 0.2, [sample("heavy", 503, 9.0)])
    assert bare["checks"]["no_other_5xx"] is False
    assert bare["refused_without_retry"] == 1
    none_typical: dict[str, Any] = hostile.cell_figures([sample("cheap", 200, 0.01)], 200.0)
    assert none_typical["typical"]["count"] == 0
    assert none_typical["checks"]["typical_p99"] is False  # nothing measured is no pass
    # A 429 of the well-behaved client's own budget is fast, and no pass.
    spent = hostile.cell_figures([sample("cheap", 429, 0.001, retry_after=True), sample("typical", 200, 0.2)], 200.0)
    assert spent["checks"]["cheap_p99"] is True
    assert spent["checks"]["well_behaved_served"] is False
    assert not spent["passed"]


def test_addresses_seen_reads_uvicorn_access_lines(hostile: ModuleType) -> None:
    log = "\n".join(
        [
            "INFO:     Started server process [1]",
            'INFO:     10.9.1.3:0 - "GET /api/v1/flights/?search=n HTTP/1.1" 503 Service Unavailable',
            'INFO:     10.9.1.3:0 - "GET /api/v1/flights/?search=n HTTP/1.1" 200 OK',
            'INFO:     127.0.0.1:51234 - "GET /api/v1/airlines/?count=1 HTTP/1.1" 200 OK',
        ]
    )
    assert hostile.addresses_seen(log) == {"10.9.1.3": 2, "127.0.0.1": 1}
    assert [hostile.heavy_address(n, 16) for n in (0, 15, 16, 63)] == ["10.9.1.1", "10.9.1.16", "10.9.1.1", "10.9.1.16"]
    assert {hostile.heavy_address(n, 1) for n in range(64)} == {"10.9.1.1"}


def test_server_log_figures_tell_503_from_other_5xx(hostile: ModuleType) -> None:
    log = "\n".join(
        [
            'INFO:     10.9.1.3:0 - "GET /api/v1/flights/?search=n HTTP/1.1" 503 Service Unavailable',
            'INFO:     10.9.1.3:0 - "GET /api/v1/flights/?search=n HTTP/1.1" 503 Service Unavailable',
            'INFO:     10.9.2.1:0 - "GET /api/v1/airlines/?count=1 HTTP/1.1" 500 Internal Server Error',
            'INFO:     10.9.2.1:0 - "GET /api/v1/airlines/?count=1 HTTP/1.1" 200 OK',
            "ERROR:    Exception in ASGI application",
            "Traceback (most recent call last):",
            '  File "x.py", line 1, in <module>',
            "INFO:     Shutting down",
        ]
    )
    assert hostile.server_log_figures(log) == {
        "tracebacks": 1,
        "error_lines": 1,
        "responses_503": 2,
        "responses_other_5xx": 1,
    }


def _run(commit: str, cheap_p99_ms: float, *, passed: bool) -> dict[str, Any]:
    """A run as the script stores it, with one backend-database and one cell; figures made up by hand."""
    cell = {
        "concurrency": 16,
        "clients": 1,
        "seconds": 41.0,
        "cheap": {"count": 3, "statuses": {"200": 3}, "p50_ms": 20.0, "p99_ms": cheap_p99_ms, "max_ms": cheap_p99_ms},
        "typical": {"count": 3, "statuses": {"200": 3}, "p50_ms": 300.0, "p99_ms": 10000.0, "max_ms": 10000.0},
        "heavy": {
            "count": 50,
            "statuses": {"200": 10, "500": 1, "503": 39},
            "p50_ms": 10000.0,
            "p99_ms": 11000.0,
            "max_ms": 11500.0,
            "5xx_without_retry_after": 1,
            "503_429_with_retry_after": 39,
            "unanswered": 0,
        },
        "refused_without_retry": 1,
        "typical_p99_x_idle": 50.0,
        "checks": {"cheap_p99": passed, "typical_p99": passed, "no_other_5xx": passed},
        "passed": passed,
        "heavy_addresses_logged": 1,
        "load_average_before": [1.5, 1.0, 0.5],
        "load_average_after": [2.5, 1.2, 0.6],
    }
    alone = {"statuses": [200, 200, 200], "seconds": [3.4, 3.5, 3.9], "median_s": 3.5, "page": None}
    return {
        "generated_at": "2026-11-27T08:00:00+00:00",
        "git": {"commit": commit, "modified": []},
        "settings": {"mode": "full", "duration_s": 30.0},
        "run_seconds": 1200,
        "load_average_start": [1.0, 2.0, 3.0],
        "load_average_end": [4.0, 5.0, 6.0],
        "combinations": {
            "sqlalchemy-sqlite": {
                "alone": {"heavy": alone, "heavier": {**alone, "statuses": [503], "median_s": 5.05}},
                "idle": {
                    "cheap": {"count": 10, "p50_ms": 30.0, "p99_ms": 50.0},
                    "typical": {"count": 10, "p50_ms": 150.0, "p99_ms": 200.0},
                },
                "cells": {"heavy 16x1": cell},
                "server_log": {"tracebacks": 1, "error_lines": 2, "responses_503": 39, "responses_other_5xx": 1},
                "shutdown": {"graceful": False, "exit_code": -9},
            }
        },
    }


def test_the_report_shows_before_and_after_side_by_side(hostile: ModuleType) -> None:
    before_only = hostile.merged(None, "before", _run("a" * 40, 9500.0, passed=False))
    assert list(before_only["runs"]) == ["before"]
    text = hostile.markdown(before_only)
    begin, end = hostile.MARKS
    assert text.startswith(begin + "\n")
    assert text.endswith(end + "\n")
    lines = text.splitlines()
    assert "| after | not run yet | | | |" in lines
    assert (
        "| sqlalchemy-sqlite | heavy 16x1 | 9,500 / - | 10,000 / - | 50 / - | 10 + 39 + 1 / - | **no** / - |" in lines
    )
    assert (
        "| sqlalchemy-sqlite | 30 / - | 50 / - | 150 / - | 200 / - | 3.5 (200) / - | 5.05 (503) / - | - / - |" in lines
    )
    assert (
        "- sqlalchemy-sqlite: 39 answers 503 and 1 other 5xx in the server log, 1 tracebacks, 2 ERROR lines; "
        "the server did **not stop within 30 s of Ctrl+C** (killed, exit status -9)." in lines
    )

    both = hostile.merged(before_only, "after", _run("b" * 40, 80.0, passed=True))
    assert list(both["runs"]) == ["before", "after"]
    assert both["runs"]["before"]["git"]["commit"] == "a" * 40  # kept from the previous document
    lines = hostile.markdown(both).splitlines()
    assert (
        "| sqlalchemy-sqlite | heavy 16x1 | 9,500 / 80 | 10,000 / 10,000 | 50 / 50 | 10 + 39 + 1 / 10 + 39 + 1 "
        "| **no** / yes |" in lines
    )
    assert any(line.startswith("| before | 2026-11-27T08:00:00+00:00 | `aaaaaaaaaaaa` |") for line in lines)
    assert any(line.startswith("| after | 2026-11-27T08:00:00+00:00 | `bbbbbbbbbbbb` |") for line in lines)
    assert lines.count("All figures of the before run:") == 1
    assert lines.count("All figures of the after run:") == 1


async def test_x_forwarded_for_from_loopback_is_the_client_address() -> None:
    proxy_headers = pytest.importorskip("uvicorn.middleware.proxy_headers")

    @get("/who", sync_to_thread=False)
    def who(request: Request[Any, Any, Any]) -> str:
        assert request.client is not None
        return request.client.host

    # uvicorn's defaults, as ``litestar-listing demo`` runs it: proxy headers on, 127.0.0.1 trusted.
    app = proxy_headers.ProxyHeadersMiddleware(Litestar([who]), trusted_hosts="127.0.0.1")
    for peer, expected in ((("127.0.0.1", 50000), "10.9.1.7"), (("192.0.2.8", 50000), "192.0.2.8")):
        transport = httpx.ASGITransport(app=app, client=peer)
        async with httpx.AsyncClient(transport=transport, base_url="http://demo") as client:
            response = await client.get("/who", headers={"X-Forwarded-For": "10.9.1.7"})
        assert response.text == expected, peer


def test_a_cell_of_refused_requests_is_shown_but_not_held_to_the_targets(hostile: ModuleType) -> None:
    assert frozenset({"allowed"}) == hostile.TARGETED
    failed = {"passed": False, "targeted": False}
    assert hostile._passed_text(failed) == "**no** (not held: refused)"
    assert hostile._passed_text({"passed": True, "targeted": True}) == "yes"
    assert hostile._passed_text({"passed": False}) == "**no**"  # a run from before the ceiling: all held


def test_the_short_profile_runs_each_database_and_each_backend_once(hostile: ModuleType, tmp_path: Path) -> None:
    logs = ["--log-dir", str(tmp_path)]  # parsing makes the folder of the run's logs
    short = hostile.parse(["--short", *logs])
    assert short.combinations == (("sqlite", "sqlalchemy"), ("postgresql", "piccolo"))
    assert short.databases == ("sqlite", "postgresql")
    assert {cell.request for cell in short.cells} == hostile.TARGETED  # only the cells a run is held to
    full = hostile.parse(logs)
    assert len(full.combinations) == 4
    assert hostile.parse(["--short", "--database", "postgresql", *logs]).combinations == (
        ("postgresql", "sqlalchemy"),
        ("postgresql", "piccolo"),
    )
