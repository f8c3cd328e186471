"""The exact MongoDB filter documents of the document-store rules, and every key that must never reach the store.

The rules: (docs: query language, "Document-store resources").

No store is involved: each query string is parsed by a document-store resource and compiled; the
assertions are on the ``$match`` stage the count pipeline starts with.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from beanie import Document, Link
from bson import Decimal128, ObjectId
from pydantic import Field, SecretStr

from litestar_listing import ConfigurationError, Resource, parse_query
from litestar_listing.backends.beanie import BeanieBackend
from litestar_listing.backends.beanie.compiler import PipelineCompiler
from litestar_listing.core.errors import InvalidQueryError
from litestar_listing.core.parsing import forced_filter
from litestar_listing.plugin.prepared import prepare
from tests.apps import served

OWNER = "5f0c1a2b3c4d5e6f7a8b9c0d"
OTHER = "65a1b2c3d4e5f60718293a4b"


class Account(Document):
    name: str
    secret: SecretStr | None = None


class Gadget(Document):
    name: str
    quantity: int
    price: Decimal | None = None
    active: bool = True
    owner: Link[Account] | None = None
    meta: dict[str, str] = Field(default_factory=dict)


def resource(**options: Any) -> Resource:
    built = Resource("gadgets", BeanieBackend(Gadget), raw_filters=("meta.color", "owner.$id"), **options)
    prepare(built)
    return built


RESOURCE = resource(search_fields=("name",))
COMPILER = PipelineCompiler(RESOURCE.backend.documents())  # type: ignore[attr-defined]


def match(query: str, target: Resource = RESOURCE, forced: tuple[tuple[str, object], ...] = ()) -> Any:
    """The ``$match`` condition of ``query``, or None when nothing is filtered."""
    filters = [forced_filter(prepare(target).field_map, name, value) for name, value in forced]
    parsed = prepare(target).parser.parse(parse_qsl(query, keep_blank_values=True), filters)
    first = COMPILER.compile(parsed).count[0]
    return first.get("$match")


def rejected(query: str, target: Resource = RESOURCE) -> list[tuple[str, str]]:
    with pytest.raises(InvalidQueryError) as raised:
        parse_query(target, parse_qsl(query, keep_blank_values=True), app=served(target))
    return [(item.key, item.message) for item in raised.value.errors]


# ---------------------------------------------------------------- the rules' table, row by row
def test_raw_key_with_a_dot_passes_through_unchanged() -> None:
    assert match("meta.color=red") == {"meta.color": "red"}


def test_raw_key_with_a_dollar_passes_through_unchanged() -> None:
    # The value of a raw key is the client's text, not converted (spec: "passed through unchanged").
    assert match(f"owner.$id={OWNER}") == {"owner.$id": OWNER}


def test_reference_by_its_name_matches_the_identifier_as_an_object_id() -> None:
    assert match(f"owner={OWNER}") == {"owner.$id": ObjectId(OWNER)}


def test_plain_field_is_an_equality_with_the_coerced_value() -> None:
    assert match("name=Widget") == {"name": "Widget"}
    assert match("quantity=7") == {"quantity": 7}
    assert match("active=no") == {"active": False}
    assert match("price=1.50") == {"price": Decimal128(Decimal("1.50"))}


def test_reference_by_its_id_alias_is_the_same_as_by_its_name() -> None:
    assert match(f"owner_id={OWNER}") == match(f"owner={OWNER}") == {"owner.$id": ObjectId(OWNER)}


def test_key_that_is_not_a_field_is_ignored() -> None:
    assert match("colour=red") is None


def test_reference_and_plain_field_combine_with_and() -> None:
    assert match(f"owner_id={OWNER}&name=Widget") == {"$and": [{"owner.$id": ObjectId(OWNER)}, {"name": "Widget"}]}


def test_identifier_of_the_document_itself_is_matched_at_underscore_id() -> None:
    assert match(f"id={OWNER}") == {"_id": ObjectId(OWNER)}


def test_or_resource_combines_client_filters_with_or() -> None:
    either = resource(combine="or")
    assert match("name=a&quantity=2", either) == {"$or": [{"name": "a"}, {"quantity": 2}]}


# ---------------------------------------------------------------- repetition
# (docs: query language, "Repeated parameters")
def test_repeated_parameter_is_membership() -> None:
    assert match("name=a&name=b") == {"name": {"$in": ["a", "b"]}}
    assert match(f"owner={OWNER}&owner_id={OTHER}") == {"owner.$id": {"$in": [ObjectId(OWNER), ObjectId(OTHER)]}}
    assert match("meta.color=red&meta.color=blue") == {"meta.color": {"$in": ["red", "blue"]}}


def test_repeated_identical_values_are_sent_once() -> None:
    assert match("name=a&name=a") == {"name": {"$in": ["a"]}}


# ---------------------------------------------------------------- rejected and ignored keys
@pytest.mark.parametrize(
    "key",
    [
        "name__eq",  # operator suffixes are relational only: an unknown name
        "quantity__gt",
        "name__ne",
        "owner__name",  # relation paths are relational only
        "meta.size",  # a raw key the resource does not allowlist
        "$where",
        "$expr",
        "$function",
        "$accumulator",
        "$or",
        "name[$ne]",  # PHP/qs-style operator objects are plain names here
        "name.$ne",
        "owner.$ref",
        "secret",  # private
        "_id",
    ],
)
def test_key_is_ignored_and_never_reaches_the_store(key: str) -> None:
    assert match(urlencode({key: "1", "name": "x"})) == {"name": "x"}


@pytest.mark.parametrize("key", ["name__eq", "$where", "name[$ne]", "meta.size", "colour", "secret"])
def test_resource_may_answer_400_for_unknown_keys(key: str) -> None:
    strict = resource(ignore_unknown_filters=False)
    assert [name for name, _ in rejected(urlencode({key: "1"}), strict)] == [key]


def test_invalid_object_id_is_a_400_naming_the_parameter() -> None:
    assert rejected("owner=zz&owner_id=123") == [
        ("owner", "expected a 24-character hexadecimal ObjectId"),
    ]
    assert rejected("id=5f0c1a2b3c4d5e6f7a8b9c0") == [("id", "expected a 24-character hexadecimal ObjectId")]


def test_uncoercible_plain_value_is_a_400() -> None:
    expected = "expected an integer from -9223372036854775808 to 9223372036854775807"
    assert rejected("quantity=many") == [("quantity", expected)]


def test_operator_shaped_values_are_compared_as_text() -> None:
    assert match(urlencode({"name": '{"$gt": ""}'})) == {"name": '{"$gt": ""}'}
    assert match(urlencode({"meta.color": "$where"})) == {"meta.color": "$where"}


def test_raw_values_are_bounded_like_membership_lists() -> None:
    query = "&".join(f"meta.color=c{value}" for value in range(501))
    strict = resource(limits=RESOURCE.limits)
    assert rejected(query, strict)[0][0] == "meta.color"


# ---------------------------------------------------------------- parts of dates and keys of JSON documents
# (docs: query language, "Parts of dates"; query language, "Keys of JSON documents")
class Shipment(Document):
    sent: dt.datetime
    spec: dict[str, Any] = Field(default_factory=dict)
    owner: Link[Account] | None = None


class Sender(Document):
    name: str
    profile: dict[str, Any] = Field(default_factory=dict)


class Parcel(Document):
    sender: Link[Sender] | None = None


SHIPMENTS = Resource("shipments", BeanieBackend(Shipment), json_keys={"spec": {"size": int, "tags": list[str]}})
PARCELS = Resource("parcels", BeanieBackend(Parcel), json_keys={"sender__profile": {"tier": str}})


def compiled(query: str, target: Resource = SHIPMENTS) -> Any:
    parsed = prepare(target).parser.parse(parse_qsl(query, keep_blank_values=True), [])
    return PipelineCompiler(target.backend.documents()).compile(parsed)  # type: ignore[attr-defined]


def test_date_and_year_are_ranges_of_the_stored_date_in_query_form() -> None:
    # Comparisons of ``sent`` itself, which an index on it serves; adjacent years merge into one range.
    day = compiled("sent__date=2024-03-01").count[0]["$match"]
    assert day == {"sent": {"$gte": stored(2024, 3, 1), "$lt": stored(2024, 3, 2)}}
    years = compiled("sent__year=2024&sent__year=2023").count[0]["$match"]
    assert years == {"sent": {"$gte": stored(2023, 1, 1), "$lt": stored(2025, 1, 1)}}


def stored(year: int, month: int, day: int) -> dt.datetime:
    """Midnight UTC of a day as MongoDB holds a date: naive, in UTC."""
    return dt.datetime(year, month, day, tzinfo=dt.timezone.utc).replace(tzinfo=None)


def test_other_parts_are_computed_from_a_date_only() -> None:
    condition = compiled("sent__hour=8").count[0]["$match"]
    assert condition == {"$expr": {"$cond": [{"$eq": [{"$type": "$sent"}, "date"]}, HOUR_IS_8, False]}}


HOUR_IS_8 = {"$eq": [{"$hour": "$sent"}, {"$literal": 8}]}


def test_a_json_key_is_read_from_objects_only_and_typed() -> None:
    # No dotted path ("spec.size" would reach into arrays of objects and match 42.0): $getField, then $type.
    text = str(compiled("spec__size=42").count[0]["$match"])
    assert "spec.size" not in text
    assert "'$getField': {'field': {'$literal': 'size'}, 'input': '$$document'}" in text
    assert "'$type': '$$value'}, ['int', 'long']" in text


def test_keys_through_a_link_are_ordered_and_searched_but_not_filtered() -> None:
    field_map = prepare(PARCELS).field_map
    assert "sender__profile__tier" not in field_map.filterable
    assert "sender__profile__tier" in field_map.orderable
    assert compiled("sender__profile__tier=gold", PARCELS).count == [{"$count": "total"}]
    with pytest.raises(ConfigurationError, match="crosses a relation"):
        prepare(Resource("parcels", BeanieBackend(Parcel), filter_fields=("sender__name",)))


# ---------------------------------------------------------------- forced filters
# (docs: query language, "Forced filters")
def test_forced_reference_cannot_be_overridden_by_name_or_alias() -> None:
    forced = (("owner_id", ObjectId(OWNER)),)
    assert match(f"owner={OTHER}", forced=forced) == {"owner.$id": ObjectId(OWNER)}
    assert match(f"owner_id={OTHER}", forced=forced) == {"owner.$id": ObjectId(OWNER)}


def test_raw_key_on_a_forced_field_only_narrows() -> None:
    forced = (("owner_id", ObjectId(OWNER)),)
    narrowed = {"$and": [{"owner.$id": ObjectId(OWNER)}, {"owner.$id": OTHER}]}
    assert match(f"owner.$id={OTHER}", forced=forced) == narrowed


def test_forced_filters_stay_outside_an_or_of_client_filters() -> None:
    either = resource(combine="or")
    forced = (("owner_id", ObjectId(OWNER)),)
    assert match("name=a&quantity=2", either, forced) == {
        "$and": [{"owner.$id": ObjectId(OWNER)}, {"$or": [{"name": "a"}, {"quantity": 2}]}]
    }


# ---------------------------------------------------------------- search: escaped text, no regex from the client
@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("Álbum", "[Áá][Ll][Bb][Uu][Mm]"),
        (".*", r"\.\*"),
        ("(a+)+$", r"\([Aa]\+\)\+\$"),
        ("[^x]{99}", r"\[\^[Xx]\]\{99\}"),
        ("a|b", r"[Aa]\|[Bb]"),
        ("\\d", r"\\[Dd]"),
        ("100%_", r"100\%\_"),
    ],
)
def test_search_is_an_escaped_caseless_regex(text: str, pattern: str) -> None:
    assert match(urlencode({"search": text})) == {"$or": [{"name": {"$regex": pattern}}]}


# ---------------------------------------------------------------- configuration
@pytest.mark.parametrize("key", ["$where", "$expr", "meta.$where", "$function.x", "meta..color", "meta", "a.$ne"])
def test_raw_keys_that_could_reach_operators_are_refused_at_start(key: str) -> None:
    with pytest.raises(ConfigurationError, match="raw filter"):
        prepare(Resource("gadgets", BeanieBackend(Gadget), raw_filters=(key,)))


def test_relation_filter_paths_are_refused_for_document_resources() -> None:
    with pytest.raises(ConfigurationError, match="document-store resources filter"):
        prepare(Resource("gadgets", BeanieBackend(Gadget), filter_fields=("*", "owner__name")))


def test_private_field_cannot_be_exposed() -> None:
    with pytest.raises(ConfigurationError, match="private"):
        prepare(Resource("accounts", BeanieBackend(Account), search_fields=("secret",)))
