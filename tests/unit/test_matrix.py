"""The registry of test targets (``tests/matrix.py``) and the capability names cases skip by."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from litestar_listing.backends.base import Capabilities
from litestar_listing.core.query import FilterSyntax
from tests.conformance.targets import OPENERS, capability_names
from tests.matrix import TARGETS, Store

ROOT = Path(__file__).resolve().parent.parent.parent


def test_targets_are_unique_and_each_backend_has_an_opener() -> None:
    assert len({target.id for target in TARGETS}) == len(TARGETS)
    assert {target.backend for target in TARGETS} == set(OPENERS)


# A value other than the default for each field of Capabilities.
CHANGED: dict[str, Any] = {
    "operators": frozenset({"eq"}),
    "relation_paths": False,
    "to_many_paths": False,
    "computed_order": False,
    "filter_syntax": FilterSyntax.DOCUMENT,
    "raw_filters": True,
    "keyset": True,
    "total_modes": frozenset({"exact", "estimated"}),
    "row_policies": True,
    "inherited_policies": True,
    "parts": frozenset({"year"}),
    "json_keys": False,
    "count_in_page": True,
    "facets": True,
}


@pytest.mark.parametrize("field", [item.name for item in dataclasses.fields(Capabilities)])
def test_every_capability_field_can_be_needed(field: str) -> None:
    assert field in CHANGED, f"give Capabilities.{field} a changed value here"
    default = Capabilities()
    assert capability_names(dataclasses.replace(default, **{field: CHANGED[field]})) != capability_names(default)


def test_capability_names_of_a_document_store() -> None:
    names = capability_names(
        Capabilities(
            operators=frozenset(),
            filter_syntax=FilterSyntax.DOCUMENT,
            raw_filters=True,
            parts=frozenset(),
            json_keys=False,
        )
    )
    assert names == {
        "relation_paths",
        "to_many_paths",
        "computed_order",
        "syntax:document",
        "raw_filters",
        "total_modes:exact",
    }


def test_loading_collects_only_relational_targets_by_default() -> None:
    env = {key: value for key, value in os.environ.items() if key not in {"LISTING_BACKENDS", "LISTING_DATABASES"}}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/backends/test_loading.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ids = {line.split("[", 1)[1].rstrip("]").split("-", 1)[0] for line in done.stdout.splitlines() if "[" in line}
    expected = {target.id for target in TARGETS if target.store is Store.SQL}
    assert ids == expected, done.stdout


def test_sessions_of_one_server_are_marked_so_ci_never_overlaps_them() -> None:
    servers = {target.id: target.server for target in TARGETS}
    assert servers == {
        "memory": "",
        "sqlalchemy:sqlite": "",
        "piccolo:sqlite": "",
        "sqlalchemy:postgresql": "postgresql",
        "piccolo:postgresql": "postgresql",
        "sqlalchemy:mariadb": "mariadb",
        "sqlalchemy:pgbouncer": "nodes",
        "piccolo:pgbouncer": "nodes",
        "sqlalchemy:standby": "nodes",
        "piccolo:standby": "nodes",
        "beanie:mongomock": "",
        "beanie:mongodb": "",
    }
