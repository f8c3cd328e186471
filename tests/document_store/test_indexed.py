"""Beanie introspection: which fields lead an index the document class declares (``FieldInfo.indexed``).

Each expectation is read by hand off the declarations of the conformance, demo and local documents
(comments say where from); no database is needed.
"""

from __future__ import annotations

from typing import Annotated

import pytest
from beanie import Document, Indexed, Link
from pydantic import Field
from pymongo import ASCENDING, DESCENDING, HASHED, TEXT, IndexModel

from litestar_listing.backends.beanie.introspection import Documents
from litestar_listing.core.schema import ModelGraph
from litestar_listing.demo import documents as demo_documents
from tests.conformance import beanie_documents
from tests.matrix import selected

pytestmark = pytest.mark.skipif(not selected(backend="beanie"), reason="the Beanie backend is not selected")


def indexed(graph: ModelGraph) -> dict[str, set[str]]:
    """Entity name -> the names of its indexed fields."""
    return {name: {f.name for f in entity.fields.values() if f.indexed} for name, entity in graph.entities.items()}


class Holder(Document):
    name: str

    class Settings:
        name = "indexed_holders"


class Box(Document):
    """Every way a Beanie document declares an index, and indexes that serve no plain lookup."""

    by_type: Indexed(str)  # type: ignore[valid-type]
    by_annotation: Annotated[int, Indexed(unique=True)]
    by_text: Indexed(str, index_type=TEXT)  # type: ignore[valid-type]
    optional: Indexed(str) | None = None  # type: ignore[valid-type]  # Beanie sees no index through the Optional
    replaced: Indexed(int)  # type: ignore[valid-type]  # replaced by a sparse index on the same key below
    named: str
    first: int
    second: int
    given: str = Field(alias="stored_as")
    partial: int
    sparse: int
    hashed: str
    plain: str
    holder: Link[Holder]

    class Settings:
        name = "indexed_boxes"
        indexes = [
            "named",
            [("first", DESCENDING), ("second", ASCENDING)],
            IndexModel([("stored_as", ASCENDING)]),
            IndexModel([("partial", ASCENDING)], partialFilterExpression={"partial": {"$gt": 0}}),
            IndexModel([("sparse", ASCENDING)], sparse=True),
            IndexModel([("replaced", ASCENDING)], sparse=True),
            IndexModel([("hashed", HASHED)]),
            IndexModel([("holder.$id", ASCENDING)]),
        ]


class Parent(Document):
    inherited: int
    own: int

    class Settings:
        name = "indexed_parents"
        indexes = ["inherited"]


class MergingChild(Parent):
    class Settings(Parent.Settings):
        name = "indexed_merging"
        merge_indexes = True
        indexes = ["own"]


class OverridingChild(Parent):
    class Settings(Parent.Settings):
        name = "indexed_overriding"
        indexes = ["own"]


def test_conformance_documents_index_their_ids_only() -> None:
    graph = Documents(beanie_documents.Part).graph()
    # Whether Thing.parts (a BackLink to a class declared after it) reaches Part depends on whether
    # init_beanie has resolved it yet: the hand list is checked entity by entity.
    expected = {name: {"id"} for name in ("Part", "Thing", "User", "Company", "Role", "Tag")}
    assert {name: indexed(graph)[name] for name in expected} == expected


def test_demo_documents() -> None:
    assert indexed(Documents(demo_documents.WatchedFlight).graph()) == {
        "WatchedFlight": {"id"},  # no index: user_id is not indexed on MongoDB
        "DemoUser": {"id"},
        # Settings.indexes lead with carrier (then tailnum), origin, dest, tailnum and time_hour (then _id).
        "Flight": {"id", "carrier", "tailnum", "origin", "dest", "time_hour"},
        "Airline": {"id"},
        "Airport": {"id"},
        "Plane": {"id"},
    }


def test_declarations() -> None:
    # Indexed(...) in either spelling, Settings.indexes as a string, a list of pairs (its first key)
    # and an IndexModel, on the stored key (an alias, a link's $id); not a text, hashed, partial or
    # sparse index, nor an Indexed(...) inside an Optional.
    assert indexed(Documents(Box).graph()) == {
        "Box": {"id", "by_type", "by_annotation", "named", "first", "given", "holder_id"},
        "Holder": {"id"},
    }


def test_settings_of_a_parent_class() -> None:
    # merge_indexes adds the parent's Settings.indexes; without it the child's own replace them.
    assert indexed(Documents(MergingChild).graph()) == {"MergingChild": {"id", "inherited", "own"}}
    assert indexed(Documents(OverridingChild).graph()) == {"OverridingChild": {"id", "own"}}
