"""The case table again with deferred joins from the first skipped row, on every backend x database.

Backends fetch deep pages by a deferred join (the page's keys first, then its rows); the fixture is far
too small to reach ``DEFERRED_OFFSET``, so the threshold is lowered to 1 here and every case past the
first page goes through that path.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from tests.conformance import test_conformance
from tests.conformance.cases import CASES, Case
from tests.conformance.targets import Target
from tests.conformance.test_conformance import target

__all__ = ("target",)

PAGED = [case for case in CASES if not case.errors and int(dict(parse_qsl(case.query)).get("page", "1") or 1) > 1]


def test_enough_cases_skip_rows() -> None:
    assert len(PAGED) >= 20
    assert any(case.policies for case in PAGED)
    assert any(case.load == "tags" and case.policies for case in PAGED)  # loads after a deferred join


@pytest.mark.parametrize("case", PAGED, ids=lambda case: case.id)
async def test_case_through_a_deferred_join(target: Target, case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    from litestar_listing.backends.relational import compiler

    monkeypatch.setattr(compiler, "DEFERRED_OFFSET", 1)
    await test_conformance.test_case(target, case)
