"""A Beanie (MongoDB) resource: base pipeline, computed field, raw filters, links (docs/guide/backends.md).

``create_app`` takes the database, so the same code serves a MongoDB server or, in the tests of
these docs, an in-memory store.
"""

import datetime as dt
from typing import Any

from beanie import Document, Link, PydanticObjectId, init_beanie
from litestar import Litestar
from pydantic import Field
from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.beanie import BeanieBackend


class Author(Document):
    name: str

    class Settings:
        name = "guide_authors"


class Note(Document):
    title: str
    words: int
    author: Link[Author]
    labels: list[str] = Field(default_factory=list)
    meta: dict[str, str] = Field(default_factory=dict)
    deleted_at: dt.datetime | None = None

    class Settings:
        name = "guide_notes"


# start-example resource
notes = Resource(
    "notes",
    BeanieBackend(
        Note,
        # The list query, in the store's own operators: soft-deleted notes are never listed.
        pipeline=[{"$match": {"deleted_at": None}}],
        # Added with $addFields, listed in each item and orderable.
        computed={"label_count": ({"$size": "$labels"}, int)},
    ),
    search_fields=("title", "author__name"),  # through a $lookup
    order_fields=("*", "author__name"),
    default_order=("title",),
    raw_filters=("meta.color",),  # a raw store key clients may filter on by equality
    load=("author",),
)
# end-example resource


def oid(number: int) -> PydanticObjectId:
    """Readable fixed identifiers: 000000000000000000000001..."""
    return PydanticObjectId(f"{number:024x}")


async def seed() -> None:
    await Author.delete_all()
    await Note.delete_all()
    await Author.insert_many([Author(id=oid(1), name="Ann"), Author(id=oid(2), name="Bob")])
    ann, bob = Author.link_from_id(oid(1)), Author.link_from_id(oid(2))
    deleted = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    await Note.insert_many(
        [
            Note(id=oid(11), title="Groceries", words=12, author=ann, labels=["home"], meta={"color": "red"}),
            Note(id=oid(12), title="Meeting notes", words=300, author=bob, labels=["work", "q3"]),
            Note(id=oid(13), title="Old plan", words=80, author=bob, deleted_at=deleted),
            Note(id=oid(14), title="Holiday ideas", words=45, author=ann, labels=[], meta={"color": "blue"}),
        ]
    )


def create_app(database: AsyncDatabase[Any]) -> Litestar:
    """The app over ``database``; Beanie binds the document classes to it at start-up."""

    async def start() -> None:
        await init_beanie(database=database, document_models=[Author, Note])
        await seed()

    return Litestar(plugins=[ListingPlugin([notes])], on_startup=[start])


# start-example app
client: AsyncMongoClient[Any] = AsyncMongoClient(
    "mongodb://127.0.0.1:27017", tz_aware=True, uuidRepresentation="standard"
)
app = create_app(client["guide"])  # the client connects on the first request
# end-example app
