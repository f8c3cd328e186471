"""Computed values through aliases of a policed class on every document store (docs/guide/computed.md).

The same two values and hand-made expectations as the SQL backends' (``tests/backends/test_computed_aliases.py``,
``tests/conformance/aliases.py``): ``$filter`` and ``$map`` name the documents they read with
``as``, and ``allowed(User, "<as>")`` polices those. A variable that is not a user variable's
name (``ROOT`` is the listed document) is refused when the backend is built.
"""

from __future__ import annotations

from typing import Any

import pytest

from litestar_listing import Computed
from litestar_listing.backends.beanie import BeanieBackend
from litestar_listing.core.errors import ConfigurationError
from tests.conformance import beanie_documents
from tests.conformance.aliases import (
    VIEWERS,
    beanie_backends,
    by_value,
    expected_owner_reports,
    expected_reports,
    listed,
)
from tests.conformance.targets import Target, target_fixture
from tests.matrix import Store, selected

DATABASE = "litestar_listing_aliases"


target = target_fixture(selected(store=Store.DOCUMENT), DATABASE)


@pytest.mark.parametrize("viewer", VIEWERS, ids=str)
async def test_a_self_reference_counts_the_visible_children(target: Target, viewer: int | str | None) -> None:
    users = beanie_backends().users
    expected = expected_reports(viewer)
    assert await listed(target, users, "reports", [("order_by", "id"), ("count", "100")], viewer) == sorted(
        expected.items()
    )
    ordered = [("order_by", "-reports"), ("count", "100")]
    assert await listed(target, users, "reports", ordered, viewer) == by_value(expected)


@pytest.mark.parametrize("viewer", VIEWERS, ids=str)
async def test_the_same_model_twice_counts_under_both_policies(target: Target, viewer: int | str | None) -> None:
    things = beanie_backends().things
    expected = expected_owner_reports(viewer)
    page = [("order_by", "id"), ("count", "100")]
    assert await listed(target, things, "owner_reports", page, viewer) == sorted(expected.items())
    ordered = [("order_by", "-owner_reports"), ("count", "5")]
    assert await listed(target, things, "owner_reports", ordered, viewer) == by_value(expected)[:5]


@pytest.mark.parametrize("variable", ["ROOT", "CURRENT", "$this", "this.manager", "", 3])
def test_a_variable_that_is_no_user_variable_is_refused(variable: Any) -> None:
    user = beanie_documents.User
    counted = Computed(
        lambda allowed: {"$size": {"$filter": {"input": "$report_docs", "cond": allowed(user, variable)}}},
        reads=(user,),
    )
    with pytest.raises(ConfigurationError, match=r"the computed value 'reports': allowed\(User, .*\): the alias is"):
        BeanieBackend(user, computed={"reports": (counted, int)})
