"""Fixtures of ``tests/hostile``: each selected target, loaded once per module on an event loop of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conformance.targets import target_ids
from tests.hostile import Opened, opened_on_own_loop


@pytest.fixture(scope="module", params=target_ids())
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    """A target of ``target_ids()`` (``LISTING_BACKENDS`` x ``LISTING_DATABASES``) and its event loop."""
    with opened_on_own_loop(request.param) as loaded:
        yield loaded
