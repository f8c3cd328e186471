from datetime import datetime

from beanie import Document, Link, init_beanie
from litestar import Litestar
from pymongo import AsyncMongoClient

from litestar_listing import ListingPlugin, Resource, tenant_scope
from litestar_listing.backends.beanie import BeanieBackend


class Company(Document):
    name: str


class User(Document):
    name: str


class Note(Document):
    title: str
    labels: list[str] = []
    meta: dict[str, str] = {}
    owner: Link[User]
    company: Link[Company]
    deleted_at: datetime | None = None


client: AsyncMongoClient = AsyncMongoClient("mongodb://127.0.0.1:27017", tz_aware=True, uuidRepresentation="standard")
notes = Resource(
    "notes",
    BeanieBackend(
        Note,  # a beanie.Document; owner: Link[User], company: Link[Company]
        pipeline=[{"$match": {"deleted_at": None}}],  # the list query, in the store's own operators
        computed={"label_count": ({"$size": "$labels"}, int)},  # listed and orderable
    ),
    search_fields=("title", "owner__name"),  # through a $lookup
    order_fields=("*", "owner__name"),
    raw_filters=("meta.color",),  # raw store keys clients may send (docs: query language, "Document-store resources")
    scopes=(tenant_scope("company_id"),),  # company_id = the company link's identifier
)


async def start() -> None:
    await init_beanie(database=client["app"], document_models=[Note, User, Company])


app = Litestar(plugins=[ListingPlugin([notes])], on_startup=[start])
