"""The mongomock adapter: Beanie 2.2 runs on it, and it answers as MongoDB does where the listing backend relies on it.

Each test starts from a fresh in-memory client holding the small data set below; expected results are what MongoDB
returns for the same documents and commands.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any, TypeVar

import bson
import pytest
from beanie import DecimalAnnotation, Document, Link, SortDirection, init_beanie
from bson import DBRef, Decimal128
from bson.errors import InvalidDocument
from mongomock import aggregate as mongomock_aggregate
from mongomock import collection as mongomock_collection
from mongomock import filtering as mongomock_filtering
from pydantic import Field
from pymongo.errors import OperationFailure

from tests.document_store.mongomock_adapter import ADAPTED_VERSIONS, check_versions, mongomock_client
from tests.document_store.numbered import NumberedDocument


class Role(NumberedDocument):
    name: str

    class Settings:
        name = "roles"


class User(NumberedDocument):
    name: str
    role: Link[Role] | None = None

    class Settings:
        name = "users"


class Tag(NumberedDocument):
    label: str

    class Settings:
        name = "tags"


class Thing(NumberedDocument):
    name: str
    # On MongoDB too, a plain ``Decimal`` field cannot read back the Decimal128 that pymongo decodes.
    price: DecimalAnnotation
    owner: Link[User]
    tags: list[Link[Tag]] = Field(default_factory=list)
    parts: list[str] = Field(default_factory=list)
    note: str | None = None

    class Settings:
        name = "things"


DocumentT = TypeVar("DocumentT", bound=Document)


def link(model: type[DocumentT], id_: int) -> Link[DocumentT]:
    return Link(DBRef(model.get_collection_name(), id_), model)


@pytest.fixture
async def database() -> Any:
    # Without the check of MongoDB's documented rules: these tests pin how the adapter reads paths such as
    # "owner.$id", which servers take but the manual does not state (mongodb_rules.py).
    database = mongomock_client(rules=False)["adapter_tests"]
    await init_beanie(database=database, document_models=[Role, User, Tag, Thing])
    await Role.insert_many([Role(id=1, name="admin"), Role(id=2, name="staff"), Role(id=3, name="guest")])
    await User.insert_many(
        [
            User(id=5, name="Albert", role=link(Role, 1)),
            User(id=6, name="alba", role=link(Role, 2)),
            User(id=7, name="Zoë"),
        ]
    )
    await User(id=8, name="bob", role=link(Role, 1)).insert()
    await Tag.insert_many([Tag(id=2, label="red"), Tag(id=3, label="green"), Tag(id=4, label="blue")])
    await Thing.insert_many(
        [
            Thing(
                id=1,
                name="100% cotton",
                price=Decimal("1.5"),
                owner=link(User, 5),
                tags=[link(Tag, 2), link(Tag, 3)],
                parts=["a", "b"],
            ),
            Thing(id=2, name="100 cotton", price=Decimal("2.00"), owner=link(User, 6)),
            Thing(
                id=3, name="lamp", price=Decimal(3), owner=link(User, 7), tags=[link(Tag, 3), link(Tag, 4)], parts=["x"]
            ),
            Thing(
                id=4,
                name="desk",
                price=Decimal("0.25"),
                owner=link(User, 5),
                tags=[link(Tag, 4)],
                parts=["p", "q", "r"],
                note="heavy",
            ),
        ]
    )
    return database


def things() -> Any:
    return Thing.get_pymongo_collection()


def users() -> Any:
    return User.get_pymongo_collection()


async def ids(collection: Any, query: dict[str, Any], **kwargs: Any) -> list[Any]:
    return [document["_id"] async for document in collection.find(query, **kwargs)]


async def aggregate(collection: Any, pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cursor = await collection.aggregate(pipeline)
    documents: list[dict[str, Any]] = await cursor.to_list(None)
    return documents


def lookup(source: str, local: str, foreign: str, into: str) -> dict[str, Any]:
    return {"$lookup": {"from": source, "localField": local, "foreignField": foreign, "as": into}}


# --- Versions ---------------------------------------------------------------------------------------------------


def test_installed_versions_are_the_adapted_ones() -> None:
    check_versions()


def test_another_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ADAPTED_VERSIONS, "mongomock", "9.9.9")
    with pytest.raises(RuntimeError, match=r"mongomock==9\.9\.9.*but found mongomock==4\.3\.0"):
        check_versions()


# --- Beanie on the adapter --------------------------------------------------------------------------------------


async def test_init_beanie_and_the_pymongo_keywords_of_list_collection_names(database: Any) -> None:
    names = await database.list_collection_names(authorizedCollections=True, nameOnly=True)
    assert sorted(names) == ["roles", "tags", "things", "users"]
    assert await database.list_collection_names(filter={"name": "users"}, nameOnly=True) == ["users"]


async def test_beanie_insert_and_read_back(database: Any) -> None:
    assert [user.id for user in await User.find_all().to_list()] == [5, 6, 7, 8]
    user = await User.get(8)
    assert user is not None
    assert (user.name, user.role and user.role.ref) == ("bob", DBRef("roles", 1))
    assert [user.id for user in await User.find(User.name == "alba").to_list()] == [6]
    thing = await Thing.get(1)
    assert thing is not None
    assert thing.price == Decimal("1.5")
    assert thing.owner.ref == DBRef("users", 5)
    assert [tag.ref for tag in thing.tags] == [DBRef("tags", 2), DBRef("tags", 3)]


async def test_beanie_queries_on_links_and_decimals(database: Any) -> None:
    assert [thing.id for thing in await Thing.find({"owner.$id": 5}).to_list()] == [1, 4]
    assert [thing.id for thing in await Thing.find(Thing.price > Decimal("1.6")).to_list()] == [2, 3]
    ordered = await Thing.find_all().sort(("price", SortDirection.DESCENDING)).to_list()
    assert [thing.id for thing in ordered] == [3, 2, 1, 4]
    assert await Thing.find(Thing.price <= 2).count() == 3


async def test_beanie_fetches_a_direct_link(database: Any) -> None:
    fetched = await User.find(fetch_links=True).sort("_id").to_list()
    assert [(user.id, user.role.name if isinstance(user.role, Role) else user.role) for user in fetched] == [
        (5, "admin"),
        (6, "staff"),
        (7, None),
        (8, "admin"),
    ]


async def test_beanie_updates_save_and_delete_all(database: Any) -> None:
    thing = await Thing.get(2)
    assert thing is not None
    thing.price = Decimal("9.50")
    thing.tags = [link(Tag, 4)]
    await thing.save()
    await things().update_many({"_id": 3}, {"$set": {"owner": DBRef("users", 5), "price": Decimal128("0.10")}})
    assert await ids(things(), {"price": {"$gt": 9}}) == [2]
    assert await ids(things(), {"tags.$id": 4}) == [2, 3, 4]
    assert await ids(things(), {"owner.$id": 5}) == [1, 3, 4]
    assert await ids(things(), {"price": {"$lt": Decimal128("0.2")}}) == [3]
    await Thing.delete_all()
    assert await Thing.count() == 0


# --- BSON round trip --------------------------------------------------------------------------------------------


async def test_links_and_decimals_are_stored_as_mongodb_stores_them(database: Any) -> None:
    # The mongomock-motor collection under the adapter holds what MongoDB would hold.
    stored = await things()._inner.find_one({"_id": 1})
    assert stored == {
        "_id": 1,
        "name": "100% cotton",
        "price": Decimal("1.5"),
        "owner": {"$ref": "users", "$id": 5},
        "tags": [{"$ref": "tags", "$id": 2}, {"$ref": "tags", "$id": 3}],
        "parts": ["a", "b"],
        "note": None,
    }
    assert type(stored["owner"]) is dict


async def test_results_come_back_as_pymongo_decodes_them(database: Any) -> None:
    document = await things().find_one({"_id": 1})
    assert document == {
        "_id": 1,
        "name": "100% cotton",
        "price": Decimal128("1.5"),
        "owner": DBRef("users", 5),
        "tags": [DBRef("tags", 2), DBRef("tags", 3)],
        "parts": ["a", "b"],
        "note": None,
    }
    assert isinstance(document["owner"], DBRef)
    assert isinstance(document["price"], Decimal128)
    distinct = await things().distinct("owner")
    assert sorted(distinct, key=lambda reference: reference.id) == [
        DBRef("users", 5),
        DBRef("users", 6),
        DBRef("users", 7),
    ]


async def test_dbref_with_database_and_extra_fields_round_trips(database: Any) -> None:
    reference = DBRef("users", 5, "elsewhere", note="kept")
    await database["scratch"].insert_one({"_id": 1, "ref": reference, "nested": {"refs": [reference]}})
    stored = await database["scratch"]._inner.find_one({"_id": 1})
    assert stored["ref"] == {"$ref": "users", "$id": 5, "$db": "elsewhere", "note": "kept"}
    assert await database["scratch"].find_one({"ref.$db": "elsewhere"}) == {
        "_id": 1,
        "ref": reference,
        "nested": {"refs": [reference]},
    }


async def test_insert_adds_the_generated_id_to_the_callers_document(database: Any) -> None:
    document: dict[str, Any] = {"price": Decimal128("1")}
    result = await database["scratch"].insert_one(document)
    assert isinstance(result.inserted_id, bson.ObjectId)
    assert document == {"price": Decimal128("1"), "_id": result.inserted_id}


async def test_a_bare_decimal_is_refused_as_pymongo_refuses_it(database: Any) -> None:
    with pytest.raises(InvalidDocument, match="cannot encode object"):
        await database["scratch"].insert_one({"price": Decimal("1")})
    with pytest.raises(InvalidDocument, match="cannot encode object"):
        things().find({"price": Decimal("1")})


async def test_filters_on_link_ids(database: Any) -> None:
    assert await ids(things(), {"owner.$id": 5}) == [1, 4]
    assert await ids(things(), {"owner.$id": {"$in": [5, 6]}}) == [1, 2, 4]
    assert await ids(things(), {"tags.$id": 2}) == [1]
    assert await ids(things(), {"tags.$id": 3}) == [1, 3]
    assert await ids(things(), {"owner": DBRef("users", 6)}) == [2]
    assert await ids(things(), {"owner": {"$in": [DBRef("users", 7), DBRef("users", 6)]}}) == [2, 3]
    assert await ids(things(), {"owner": {"$ne": DBRef("users", 5)}}) == [2, 3]
    assert await ids(things(), {"tags": DBRef("tags", 4)}) == [3, 4]
    assert await ids(things(), {"$or": [{"owner": DBRef("users", 7)}, {"tags": DBRef("tags", 2)}]}) == [1, 3]
    assert await things().count_documents({"owner.$id": 5}) == 2


async def test_filters_on_decimals_compare_numerically(database: Any) -> None:
    assert await ids(things(), {"price": {"$gt": Decimal128("1.6")}}) == [2, 3]
    assert await ids(things(), {"price": {"$in": [Decimal128("2.00")]}}) == [2]
    assert await ids(things(), {"price": {"$in": [Decimal128("2")]}}) == [2]
    assert await ids(things(), {"price": 2}) == [2]
    assert await ids(things(), {"price": 3.0}) == [3]
    assert await ids(things(), {"price": {"$lte": 1.5}}) == [1, 4]
    pipeline: list[dict[str, Any]] = [
        {"$match": {"price": {"$gte": Decimal128("1.50"), "$lt": 3}}},
        {"$sort": {"price": -1}},
    ]
    assert [document["_id"] for document in await aggregate(things(), pipeline)] == [2, 1]


# --- Cursors ------------------------------------------------------------------------------------------------------


async def test_aggregate_is_awaited_and_returns_an_async_cursor(database: Any) -> None:
    cursor = await things().aggregate([{"$sort": {"_id": -1}}], session=None)
    assert [document["_id"] async for document in cursor] == [4, 3, 2, 1]
    cursor = await things().aggregate([{"$sort": {"_id": 1}}])
    assert [document["_id"] for document in await cursor.to_list(length=1)] == [1]
    assert [document["_id"] for document in await cursor.to_list(length=None)] == [2, 3, 4]


async def test_find_cursor_sorts_skips_and_limits(database: Any) -> None:
    cursor = things().find({}).sort("price", -1).skip(1).limit(2)
    assert [document["_id"] for document in await cursor.to_list(None)] == [2, 1]
    cursor = things().find({"owner.$id": 5}).sort([("price", 1)])
    assert [document["price"] async for document in cursor] == [Decimal128("0.25"), Decimal128("1.5")]
    assert await ids(things(), {}, sort=[("owner.$id", -1), ("_id", -1)], skip=1, limit=2) == [2, 4]


async def test_bulk_write_is_refused_rather_than_storing_unconverted_values(database: Any) -> None:
    with pytest.raises(NotImplementedError, match="bulk_write"):
        await things().bulk_write([])


# --- Aggregation features the listing backend emits ---------------------------------------------------------------


async def test_match_with_and_or_in_and_regex(database: Any) -> None:
    async def matched(collection: Any, query: dict[str, Any]) -> list[Any]:
        return [document["_id"] for document in await aggregate(collection, [{"$match": query}])]

    assert await matched(users(), {"name": {"$regex": "[Aa]lb"}}) == [5, 6]
    assert await matched(things(), {"name": {"$regex": "100\\%"}}) == [1]
    assert await matched(things(), {"$and": [{"owner.$id": {"$in": [5, 7]}}, {"price": {"$gt": 1}}]}) == [1, 3]
    assert await matched(things(), {"$or": [{"note": "heavy"}, {"tags.$id": 2}]}) == [1, 4]


async def test_lookup_on_a_link(database: Any) -> None:
    joined = await aggregate(users(), [lookup("roles", "role.$id", "_id", "_joined"), {"$project": {"_joined": 1}}])
    assert joined == [
        {"_id": 5, "_joined": [{"_id": 1, "name": "admin"}]},
        {"_id": 6, "_joined": [{"_id": 2, "name": "staff"}]},
        {"_id": 7, "_joined": []},
        {"_id": 8, "_joined": [{"_id": 1, "name": "admin"}]},
    ]


async def test_lookup_through_an_array_of_links(database: Any) -> None:
    joined = await aggregate(things(), [lookup("tags", "tags.$id", "_id", "_tags"), {"$project": {"_tags": 1}}])
    assert [[tag["_id"] for tag in document["_tags"]] for document in joined] == [[2, 3], [], [3, 4], [4]]


async def test_lookup_through_a_previous_lookup(database: Any) -> None:
    pipeline = [
        lookup("users", "owner.$id", "_id", "_owner"),
        lookup("roles", "_owner.role.$id", "_id", "_role"),
        {"$project": {"_role": 1, "owner": "$_owner"}},
    ]
    joined = await aggregate(things(), pipeline)
    assert [[role["name"] for role in document["_role"]] for document in joined] == [
        ["admin"],
        ["staff"],
        [],
        ["admin"],
    ]
    # Links inside joined documents come back as DBRefs too.
    assert joined[0]["owner"] == [{"_id": 5, "name": "Albert", "role": DBRef("roles", 1)}]


async def test_reverse_lookup_on_a_foreign_link(database: Any) -> None:
    owned = await aggregate(users(), [lookup("things", "_id", "owner.$id", "_owned")])
    assert [[thing["_id"] for thing in document["_owned"]] for document in owned] == [[1, 4], [2], [3], []]
    tagged = await aggregate(Tag.get_pymongo_collection(), [lookup("things", "_id", "tags.$id", "_things")])
    assert [[thing["_id"] for thing in document["_things"]] for document in tagged] == [[1], [1, 3], [3, 4]]


async def test_lookup_from_a_missing_field_matches_null_or_missing(database: Any) -> None:
    await database["scratch"].insert_many([{"_id": 1, "note": None}, {"_id": 2}, {"_id": 3, "note": "x"}])
    pipeline = [
        {"$match": {"_id": 1}},
        lookup("scratch", "absent", "note", "_null"),
        lookup("scratch", "absent", "_id", "_id_"),
    ]
    [document] = await aggregate(things(), pipeline)
    assert [joined["_id"] for joined in document["_null"]] == [1, 2]
    assert document["_id_"] == []


async def test_lookup_keeps_mongomock_validation(database: Any) -> None:
    with pytest.raises(OperationFailure, match="FieldPath"):
        await things().aggregate([lookup("tags", "$tags", "_id", "x")])
    with pytest.raises(OperationFailure, match="'from' and 'as'"):
        await things().aggregate([{"$lookup": {"from": "tags", "pipeline": []}}])


def link_id(link: str) -> dict[str, Any]:
    return {"$getField": {"field": {"$literal": "$id"}, "input": link}}


async def test_lookup_with_let_and_a_pipeline(database: Any) -> None:
    # MongoDB 3.6: the sub-pipeline runs on every foreign document, let's variables bound in its expressions.
    owned = {
        "$lookup": {
            "from": "things",
            "let": {"user": "$_id", "unused": "$absent"},
            "pipeline": [
                {"$match": {"$expr": {"$eq": [link_id("$owner"), "$$user"]}}},
                {"$match": {"$expr": {"$eq": ["$$unused", None]}}},  # a missing value is bound as null
                {"$project": {"name": 1}},
            ],
            "as": "_owned",
        }
    }
    joined = await aggregate(users(), [owned, {"$project": {"_owned": 1}}])
    assert [[thing["name"] for thing in document["_owned"]] for document in joined] == [
        ["100% cotton", "desk"],
        ["100 cotton"],
        ["lamp"],
        [],
    ]


async def test_an_array_is_an_array_expression(database: Any) -> None:
    # Each element is evaluated, a missing one as null: the backend looks a back link up with let {keys: ["$_id"]}
    # (mongomock alone binds the text "$_id", and the lookup finds nothing).
    owned = {
        "$lookup": {
            "from": "things",
            "let": {"keys": ["$_id"]},
            "pipeline": [{"$match": {"$expr": {"$in": [link_id("$owner"), "$$keys"]}}}, {"$project": {"name": 1}}],
            "as": "_owned",
        }
    }
    joined = await aggregate(users(), [owned, {"$project": {"_owned": 1, "pair": ["$name", "$absent", 1]}}])
    assert [([thing["name"] for thing in document["_owned"]], document["pair"]) for document in joined] == [
        (["100% cotton", "desk"], ["Albert", None, 1]),
        (["100 cotton"], ["alba", None, 1]),
        (["lamp"], ["Zoë", None, 1]),
        ([], ["bob", None, 1]),
    ]
    # A literal array stays as written.
    assert [document["v"] for document in await aggregate(users(), [{"$project": {"v": {"$literal": ["$_id"]}}}])] == [
        ["$_id"]
    ] * 4


async def test_lookup_with_fields_and_a_pipeline(database: Any) -> None:
    # MongoDB 5.0: the equality match first, then the pipeline on the matched documents; a $filter inside binds
    # $$name over the let variable of the same name from the enclosing $lookup.
    kept = {"$filter": {"input": [1, 2], "as": "name", "cond": {"$gt": ["$$name", 1]}}}
    tagged = {
        "$lookup": {
            "from": "tags",
            "localField": "_tag_ids",
            "foreignField": "_id",
            "let": {"name": "$name"},
            "pipeline": [{"$match": {"label": {"$ne": "blue"}}}, {"$addFields": {"thing": "$$name", "kept": kept}}],
            "as": "_tags",
        }
    }
    ids_of_tags = {"$map": {"input": "$tags", "as": "link", "in": link_id("$$link")}}
    pipeline: list[dict[str, Any]] = [{"$addFields": {"_tag_ids": ids_of_tags}}, tagged, {"$project": {"_tags": 1}}]
    joined = await aggregate(things(), pipeline)
    assert [[(tag["label"], tag["thing"], tag["kept"]) for tag in document["_tags"]] for document in joined] == [
        [("red", "100% cotton", [2]), ("green", "100% cotton", [2])],
        [],
        [("green", "lamp", [2])],
        [],
    ]


async def test_get_field_reads_a_dbref_id(database: Any) -> None:
    # MongoDB 5.0: a field by its exact name; a null or missing input gives null, a missing field is missing.
    pipeline = [
        {"$match": {"_id": {"$in": [1, 7]}}},
        {
            "$project": {
                "owner": link_id("$owner"),
                "absent": link_id("$nothing"),
                "shorthand": {"$getField": "name"},
                "gone": {"$ifNull": [{"$getField": {"field": "nothing", "input": "$$ROOT"}}, "missing"]},
            }
        },
    ]
    expected = {"_id": 1, "owner": 5, "absent": None, "shorthand": "100% cotton", "gone": "missing"}
    assert await aggregate(things(), pipeline) == [expected]
    with pytest.raises(OperationFailure, match="type Object"):
        await aggregate(things(), [{"$project": {"x": {"$getField": {"field": "a", "input": "$name"}}}}])
    with pytest.raises(OperationFailure, match="constant string"):
        await aggregate(things(), [{"$project": {"x": {"$getField": {"field": "$id", "input": "$owner"}}}}])


async def test_reduce_concatenates_arrays(database: Any) -> None:
    flattened = {"$reduce": {"input": "$parts", "initialValue": "", "in": {"$concat": ["$$value", "$$this"]}}}
    nothing = {"$reduce": {"input": "$absent", "initialValue": 0, "in": 1}}
    pipeline = [{"$project": {"parts": flattened, "none": nothing}}]
    assert [(document["parts"], document["none"]) for document in await aggregate(things(), pipeline)] == [
        ("ab", None),
        ("", None),
        ("x", None),
        ("pqr", None),
    ]


async def test_type_and_iso_day_of_week_as_mongodb_reads_them(database: Any) -> None:
    # $type as an expression (3.4): pymongo stores an int beyond 32 bits as a long, a bool is no number.
    values: dict[str, Any] = {
        "int": 7, "long": 2**40, "double": 42.0, "bool": True, "string": "x", "object": {"a": 1}, "array": [1],
        "null": None, "date": dt.datetime(2013, 2, 9, 23, tzinfo=dt.timezone.utc),
    }  # fmt: skip
    named = {name: {"$type": {"$literal": value}} for name, value in values.items()}
    days = {"saturday": {"$isoDayOfWeek": {"$literal": values["date"]}}, "no_day": {"$isoDayOfWeek": "$nothing"}}
    pipeline: list[dict[str, Any]] = [
        {"$match": {"_id": 1}},
        {"$project": {**named, "missing": {"$type": ["$nothing"]}, **days}},
    ]
    expected = {"_id": 1, **{name: name for name in values}, "missing": "missing", "saturday": 6, "no_day": None}
    assert await aggregate(things(), pipeline) == [expected]
    with pytest.raises(OperationFailure, match="to Date"):
        await aggregate(things(), [{"$project": {"x": {"$isoDayOfWeek": "$name"}}}])


async def test_unwind_preserving_null_and_empty_arrays(database: Any) -> None:
    pipeline = [
        lookup("tags", "tags.$id", "_id", "_tag"),
        {"$unwind": {"path": "$_tag", "preserveNullAndEmptyArrays": True}},
        {"$project": {"tag": "$_tag.label"}},
    ]
    assert await aggregate(things(), pipeline) == [
        {"_id": 1, "tag": "red"},
        {"_id": 1, "tag": "green"},
        {"_id": 2},
        {"_id": 3, "tag": "green"},
        {"_id": 3, "tag": "blue"},
        {"_id": 4, "tag": "blue"},
    ]


async def test_add_fields_with_cond_on_if_null(database: Any) -> None:
    await database["scratch"].insert_many([{"_id": 1}, {"_id": 2, "f": None}, {"_id": 3, "f": 0}, {"_id": 4, "f": ""}])
    pipeline: list[dict[str, Any]] = [
        {"$addFields": {"f_is_null": {"$cond": [{"$eq": [{"$ifNull": ["$f", None]}, None]}, 1, 0]}}},
        {"$project": {"f_is_null": 1}},
    ]
    assert [document["f_is_null"] for document in await aggregate(database["scratch"], pipeline)] == [1, 1, 0, 0]


async def test_sort_on_several_keys_with_dotted_paths(database: Any) -> None:
    pipeline = [
        lookup("roles", "role.$id", "_id", "_joined"),
        {"$unwind": {"path": "$_joined", "preserveNullAndEmptyArrays": True}},
        {"$sort": {"_joined.name": 1, "name": -1}},
    ]
    assert [document["_id"] for document in await aggregate(users(), pipeline)] == [7, 8, 5, 6]
    pipeline = [{"$sort": {"owner.$id": -1, "price": 1}}]
    assert [document["_id"] for document in await aggregate(things(), pipeline)] == [3, 2, 4, 1]


async def test_sort_on_an_array_uses_its_smallest_or_largest_element(database: Any) -> None:
    # tags: 1 -> [red, green], 2 -> [], 3 -> [green, blue], 4 -> [blue]. mongomock alone sorts by the first element.
    joined: list[dict[str, Any]] = [lookup("tags", "tags.$id", "_id", "_joined")]
    ascending = await aggregate(things(), [*joined, {"$sort": {"_joined.label": 1, "_id": 1}}])
    descending = await aggregate(things(), [*joined, {"$sort": {"_joined.label": -1, "_id": 1}}])
    assert [document["_id"] for document in ascending] == [2, 3, 4, 1]
    assert [document["_id"] for document in descending] == [1, 3, 4, 2]
    # The same rule for find(): tags.$id is [2, 3], [], [3, 4], [4].
    assert await ids(things(), {}, sort=[("tags.$id", 1), ("_id", 1)]) == [2, 1, 3, 4]
    assert await ids(things(), {}, sort=[("tags.$id", -1), ("_id", 1)]) == [3, 4, 1, 2]
    # An empty array sorts before null, which ties with missing.
    await database["scratch"].insert_many(
        [{"_id": 1, "v": None}, {"_id": 2}, {"_id": 3, "v": []}, {"_id": 4, "v": [0]}]
    )
    assert await ids(database["scratch"], {}, sort=[("v", 1), ("_id", 1)]) == [3, 1, 2, 4]


async def test_skip_limit_and_count(database: Any) -> None:
    page = await aggregate(things(), [{"$sort": {"_id": 1}}, {"$skip": 1}, {"$limit": 2}])
    assert [document["_id"] for document in page] == [2, 3]
    assert await aggregate(things(), [{"$match": {"owner.$id": {"$in": [5, 6]}}}, {"$count": "total"}]) == [
        {"total": 3}
    ]
    # No input, no output document (mongomock alone outputs {"total": 0}).
    assert await aggregate(things(), [{"$match": {"owner.$id": 99}}, {"$count": "total"}]) == []


async def test_project_with_exclusions(database: Any) -> None:
    pipeline = [{"$match": {"_id": 4}}, lookup("users", "owner.$id", "_id", "_joined"), {"$project": {"_joined": 0}}]
    assert await aggregate(things(), pipeline) == [
        {
            "_id": 4,
            "name": "desk",
            "price": Decimal128("0.25"),
            "owner": DBRef("users", 5),
            "tags": [DBRef("tags", 4)],
            "parts": ["p", "q", "r"],
            "note": "heavy",
        }
    ]


async def test_size_of_an_array(database: Any) -> None:
    pipeline: list[dict[str, Any]] = [{"$addFields": {"n": {"$size": "$parts"}}}, {"$project": {"n": 1}}]
    assert [document["n"] for document in await aggregate(things(), pipeline)] == [2, 0, 1, 3]


async def test_set_window_fields_over_one_partition(database: Any) -> None:
    # Owners: 5 (things 1 and 4), 6 (2), 7 (3). Each group learns how many groups there are, and their rows.
    grouped: list[dict[str, Any]] = [
        {"$group": {"_id": "$owner.$id", "count": {"$sum": 1}}},
        {"$setWindowFields": {"output": {"distinct": {"$count": {}}, "rows": {"$sum": "$count"}}}},
        {"$sort": {"count": -1, "_id": 1}},
    ]
    assert await aggregate(things(), grouped) == [
        {"_id": 5, "count": 2, "distinct": 3, "rows": 4},
        {"_id": 6, "count": 1, "distinct": 3, "rows": 4},
        {"_id": 7, "count": 1, "distinct": 3, "rows": 4},
    ]
    assert await aggregate(things(), [{"$match": {"_id": 99}}, *grouped]) == []
    # Forms it does not run are refused, not answered by guess.
    for options in (
        {"partitionBy": "$name", "output": {"n": {"$count": {}}}},
        {"sortBy": {"_id": 1}, "output": {"n": {"$count": {}}}},
        {"output": {"n": {"$sum": 1, "window": {"documents": ["unbounded", "current"]}}}},
        {"output": {"n": {"$avg": "$_id"}}},
    ):
        with pytest.raises(NotImplementedError):
            await aggregate(things(), [{"$setWindowFields": options}])


async def test_facet_runs_each_sub_pipeline_on_the_same_documents(database: Any) -> None:
    pipeline: list[dict[str, Any]] = [
        {"$match": {"_id": {"$lte": 3}}},
        {
            "$facet": {
                "total": [{"$count": "total"}],
                "tagged": [lookup("tags", "tags.$id", "_id", "_tags"), {"$match": {"_tags.label": "green"}}],
                "none": [{"$match": {"_id": 99}}, {"$count": "total"}],
            }
        },
    ]
    [result] = await aggregate(things(), pipeline)
    assert result["total"] == [{"total": 3}]
    assert [document["_id"] for document in result["tagged"]] == [1, 3]
    assert result["none"] == []


# --- Sort order of scalars ----------------------------------------------------------------------------------------

MISSING = "<missing>"

SCALAR_ORDERS: dict[str, list[Any]] = {
    # Code point order, as MongoDB compares UTF-8 bytes.
    "str": ["B", "Z", "a", "b", "ä", "é", "\uff21", "\U0001f600"],
    "int": [-1, 0, 3, 10],
    "float": [-math.inf, -2.0, 0.1, 1.5, math.inf],
    "decimal": [Decimal128("-1"), 0.5, Decimal128("1.5"), 1.7, Decimal128("2.00"), 3],
    "datetime": [dt.datetime(2023, 5, 1), dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 1, 2)],  # noqa: DTZ001
    "bool": [False, True],
}


@pytest.mark.parametrize("kind", list(SCALAR_ORDERS))
async def test_scalar_sort_order(database: Any, kind: str) -> None:
    ordered = SCALAR_ORDERS[kind]
    shuffled = ordered[1::2] + ordered[::2]
    await database["scratch"].insert_many([{"_id": index, "v": value} for index, value in enumerate(shuffled)])
    await database["scratch"].insert_many([{"_id": 100, "v": None}, {"_id": 101}])

    async def values(direction: int) -> list[Any]:
        cursor = database["scratch"].find({}, sort=[("v", direction), ("_id", 1)])
        from_find = [document.get("v", MISSING) async for document in cursor]
        pipeline = [{"$sort": {"v": direction, "_id": 1}}]
        from_aggregate = [document.get("v", MISSING) for document in await aggregate(database["scratch"], pipeline)]
        assert from_find == from_aggregate
        return from_find

    # Null and missing are equal and come first ascending (ties broken by _id here).
    assert await values(1) == [None, MISSING, *ordered]
    assert await values(-1) == [*reversed(ordered), None, MISSING]


# --- Confinement ---------------------------------------------------------------------------------------------------


async def test_mongomock_is_unchanged_outside_the_adapters_calls(database: Any) -> None:
    await aggregate(things(), [lookup("tags", "tags.$id", "_id", "_tags"), {"$sort": {"_tags.label": 1}}])
    assert mongomock_aggregate._PIPELINE_HANDLERS["$lookup"] is mongomock_aggregate._handle_lookup_stage
    assert mongomock_aggregate._PIPELINE_HANDLERS["$count"] is mongomock_aggregate._handle_count_stage
    assert "$setWindowFields" not in mongomock_aggregate._PIPELINE_HANDLERS
    assert mongomock_filtering.resolve_sort_key.__module__ == "mongomock.filtering"
    assert vars(mongomock_collection)["BSON"] is bson.BSON
    assert vars(mongomock_aggregate._Parser)["parse"].__module__ == "mongomock.aggregate"
