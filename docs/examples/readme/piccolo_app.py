import os

from litestar import Litestar
from piccolo.columns import M2M, ForeignKey, Integer, LazyTableReference, Serial, Timestamptz, Varchar
from piccolo.engine.postgres import PostgresEngine
from piccolo.querystring import QueryString
from piccolo.table import Table

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.piccolo import PiccoloBackend

engine = PostgresEngine(config={"dsn": os.environ.get("DATABASE_URL", "postgresql://app@127.0.0.1/app")})


class Owner(Table, tablename="owners", db=engine):
    name = Varchar(length=100)


class Thing(Table, tablename="things", db=engine):
    id = Serial(primary_key=True)
    name = Varchar(length=100)
    owner = ForeignKey(Owner, db_column_name="owner_id")
    deleted_at = Timestamptz(null=True, default=None)
    tags = M2M(LazyTableReference("ThingTag", module_path=__name__))


class Tag(Table, tablename="tags", db=engine):
    name = Varchar(length=100)


class ThingTag(Table, tablename="thing_tags", db=engine):
    thing = ForeignKey(Thing, db_column_name="thing_id")
    tag = ForeignKey(Tag, db_column_name="tag_id")


class Part(Table, tablename="parts", db=engine):
    name = Varchar(length=100)
    thing = ForeignKey(Thing, db_column_name="thing_id")


things = Resource(
    "things",
    PiccoloBackend(
        Thing,
        engine=engine,  # optional: without it, the table's own engine (piccolo_conf)
        where=Thing.deleted_at.is_null(),  # the base list query: hide soft-deleted rows
        reverse={"parts": Part.thing},  # a to-many relation Piccolo does not declare
        computed={
            "part_count": (QueryString("(SELECT COUNT(*) FROM parts WHERE parts.thing_id = {})", Thing.id), Integer())
        },
    ),
    filter_fields=("*", "owner__*", "tags__name", "parts__name"),
    search_fields=("name", "owner__name"),
)


# Litestar passes the app to hooks that take an argument; Piccolo's pool methods take none of it.
async def open_pool() -> None:
    await engine.start_connection_pool()


async def close_pool() -> None:
    await engine.close_connection_pool()


app = Litestar(plugins=[ListingPlugin([things])], on_startup=[open_pool], on_shutdown=[close_pool])
