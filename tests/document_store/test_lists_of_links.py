"""Lists of links reached through another link, on every document store: search through them, and load them.

The conformance fixture's only list of links (``Thing.tags``) hangs off the listed class; here a person
has labels too, so ``owner__labels`` is a list of links one link away (the backend gathers its
identifiers with ``$reduce`` over the looked-up owners). Expectations are by hand from ``LABELS``,
``PEOPLE`` and ``ITEMS`` below.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from beanie import Link
from pydantic import Field

from litestar_listing import ListContext, Resource
from litestar_listing.backends.beanie import BeanieBackend
from litestar_listing.core.query import Policy
from litestar_listing.plugin.policies import resolved_policy
from litestar_listing.plugin.prepared import prepare
from tests.conftest import document_store
from tests.document_store.numbered import NumberedDocument
from tests.matrix import Store, selected


class Label(NumberedDocument):
    name: str

    class Settings:
        name = "links_labels"


class Person(NumberedDocument):
    name: str
    labels: list[Link[Label]] = Field(default_factory=list)

    class Settings:
        name = "links_people"


class Item(NumberedDocument):
    name: str
    owner: Link[Person] | None = None
    labels: list[Link[Label]] = Field(default_factory=list)

    class Settings:
        name = "links_items"


LABELS = ((1, "red"), (2, "blue"), (3, "green"))
PEOPLE = ((10, "Ann", (2, 1)), (11, "Bob", (3,)), (12, "Cy", ()))
MISSING = 9
"""No label has this id: item 102 links it, and it is no label of 102."""
ITEMS = ((100, "cup", 10, (2,)), (101, "pen", 11, (3, 1)), (102, "mug", None, (MISSING,)), (103, "box", 12, (3, 1)))


@pytest.fixture(scope="module", params=selected(store=Store.DOCUMENT), ids=str)
async def items(request: pytest.FixtureRequest) -> AsyncIterator[Resource]:
    async with document_store(request.param.database, "litestar_listing_links", (Label, Person, Item)):
        await Label.insert_many([Label(id=key, name=name) for key, name in LABELS])
        await Person.insert_many(
            [
                Person(id=key, name=name, labels=[Label.link_from_id(label) for label in labels])
                for key, name, labels in PEOPLE
            ]
        )
        await Item.insert_many(
            [
                Item(
                    id=key,
                    name=name,
                    owner=None if owner is None else Person.link_from_id(owner),
                    labels=[Label.link_from_id(label) for label in labels],
                )
                for key, name, owner, labels in ITEMS
            ]
        )
        yield Resource(
            "items",
            BeanieBackend(Item),
            filter_fields=("*",),
            order_fields=("*",),
            search_fields=("name", "labels__name", "owner__labels__name"),
            default_order=("id",),
        )


GRAPH = BeanieBackend(Item).model_graph()


def labels_only(ids: tuple[int, ...]) -> tuple[Policy, ...]:
    """The request's policies when only the labels ``ids`` are visible."""
    return (resolved_policy(GRAPH.entities["Label"], {"id": ids}),)


async def listed(resource: Resource, params: list[tuple[str, str]], **options: Any) -> list[dict[str, Any]]:
    policies = options.pop("policies", ())
    query = dataclasses.replace(prepare(resource).parser.parse(params, []), policies=policies)
    page = await resource.backend.fetch(query, ListContext(**options))
    return page.items


@pytest.mark.parametrize(
    ("text", "expected"),
    [("red", [100, 101, 103]), ("green", [101, 103]), ("blue", [100]), ("cup", [100])],
)
async def test_search_through_a_list_of_links_one_link_away(items: Resource, text: str, expected: list[int]) -> None:
    # red: Ann's label (item 100's owner), and items 101 and 103's own; blue: only Ann's and 100's own.
    assert [item["id"] for item in await listed(items, [("search", text)])] == expected


async def test_search_under_the_label_policy(items: Resource) -> None:
    # Only red and green visible: blue is on nobody's list, item 100 has only Ann's red.
    assert [item["id"] for item in await listed(items, [("search", "blue")], policies=labels_only((1, 3)))] == []
    assert [item["id"] for item in await listed(items, [("search", "red")], policies=labels_only((1, 3)))] == [
        100,
        101,
        103,
    ]


def shape(item: dict[str, Any]) -> tuple[object, ...]:
    owner = item["owner"]
    owned = None if owner is None else (owner["id"], [label["id"] for label in owner["labels"]])
    return item["id"], [label["id"] for label in item["labels"]], owned


async def test_lists_of_links_load_at_both_depths(items: Resource) -> None:
    loaded = await listed(items, [("order_by", "id")], load=("labels", "owner__labels"))
    # Labels in id order; the missing label is no label of 102, which has no owner.
    assert [shape(item) for item in loaded] == [
        (100, [2], (10, [1, 2])),
        (101, [1, 3], (11, [3])),
        (102, [], None),
        (103, [1, 3], (12, [])),
    ]
    assert loaded[0]["labels"] == [{"id": 2, "name": "blue"}]


async def test_lists_of_links_load_under_the_label_policy(items: Resource) -> None:
    loaded = await listed(
        items,
        [("order_by", "-id"), ("count", "2"), ("page", "2")],
        load=("labels", "owner__labels"),
        policies=labels_only((2,)),
    )
    assert [shape(item) for item in loaded] == [(101, [], (11, [])), (100, [2], (10, [2]))]
