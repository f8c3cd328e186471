"""Fixtures of ``tests/hostile``: each selected target, loaded once per module on an event loop of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hostile import Opened, opened_on_own_loop
from tests.matrix import SELECTED


@pytest.fixture(scope="module", params=SELECTED, ids=str)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    """A selected target of ``tests/matrix.py`` loaded with the conformance data, and its event loop."""
    with opened_on_own_loop(request.param) as loaded:
        yield loaded
