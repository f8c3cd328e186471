"""Row policies on a document store's eager loading (docs: eager loading), against the same
hand-written expectation as the SQL backends' (``tests/backends/test_loading.py``): every relation of
``LOAD``, the list of links ``tags`` among them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from litestar_listing.plugin.prepared import prepare
from tests.backends.test_loading import LOAD, LOAD_POLICIES, expected_under_policies
from tests.conformance.targets import open_target
from tests.matrix import Store, selected


@pytest.mark.parametrize("store", selected(store=Store.DOCUMENT), ids=str)
async def test_a_document_store_loads_under_the_row_policies_alike(store: Any) -> None:
    ids = (1, 4, 12, 13, 17, 21, 25)
    async with open_target(store) as loaded:
        resource = loaded.resources["things"]
        params = [*(("id", str(thing_id)) for thing_id in ids), ("order_by", "id"), ("count", "20")]
        query = dataclasses.replace(prepare(resource).parser.parse(params, []), policies=LOAD_POLICIES)
        async with loaded.context() as context:
            page = await resource.backend.fetch(query, dataclasses.replace(context, load=LOAD))
    assert page.items == [expected_under_policies(thing_id) for thing_id in ids]
