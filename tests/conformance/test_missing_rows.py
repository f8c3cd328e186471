"""Related rows that are missing, eager-loaded on every backend x database: they load like hidden ones.

The fixture holds rows that refer to ``fixture.MISSING`` (no tag, no company has that id): thing 2
links red and a missing tag, thing 3 only a missing tag, and thing 7's part 8 names a missing
supplier. The conformance table pins how paths read them (the ``missing:*`` cases); loads follow the
same rule (docs: scoping, "Row policies"; eager loading): a missing to-one row loads as null, and a
link to a missing row is no element of its to-many list. Expected items are built from the fixture
tuples (``tests/backends/test_loading.py``), not from any backend.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from litestar_listing.core.query import Policy
from litestar_listing.plugin.prepared import prepare
from tests.backends.test_loading import LOAD_POLICIES, expected_thing, expected_under_policies
from tests.conformance.fixture import MISSING, PARTS, THING_TAGS
from tests.conformance.targets import Target
from tests.conformance.test_conformance import target

__all__ = ("target",)

IDS = (2, 3, 7)


def test_the_fixture_holds_the_missing_references() -> None:
    assert [thing for thing, tag in THING_TAGS if tag == MISSING] == [2, 3]
    assert [(part, thing) for part, thing, _, _, supplier in PARTS if supplier == MISSING] == [(8, 7)]


@pytest.mark.parametrize("policies", [(), LOAD_POLICIES], ids=["unrestricted", "under-policies"])
async def test_a_missing_related_row_loads_like_a_hidden_one(target: Target, policies: tuple[Policy, ...]) -> None:
    resource = target.resources["things"]
    load = ("parts__supplier", "tags")
    params = [*(("id", str(thing_id)) for thing_id in IDS), ("order_by", "id")]
    query = dataclasses.replace(prepare(resource).parser.parse(params, []), policies=policies)
    async with target.context() as context:
        page = await resource.backend.fetch(query, dataclasses.replace(context, load=load))
    expect = expected_under_policies if policies else expected_thing
    expected: list[dict[str, Any]] = []
    for thing_id in IDS:
        thing = expect(thing_id)
        expected.append({key: value for key, value in thing.items() if key not in {"owner", "reviewer", "company"}})
    assert page.items == expected
    # Hand-checked: the missing tag is no tag of 2 or 3; part 8 is listed, without a supplier (the
    # Part policy admits Acme's and Umbrella's parts only, so under it thing 7 has none).
    by_id = {item["id"]: item for item in page.items}
    assert ([tag["id"] for tag in by_id[2]["tags"]], by_id[3]["tags"]) == ([1], [])
    assert [(part["id"], part["supplier"]) for part in by_id[7]["parts"]] == ([] if policies else [(8, None)])
