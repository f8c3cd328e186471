"""Piccolo relations: ForeignKey paths, reverse= to-many sides, M2M and ForeignKey("self") (docs/guide/backends.md)."""

import tempfile
from pathlib import Path

from litestar import Litestar
from piccolo.columns import M2M, ForeignKey, LazyTableReference, Varchar
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.table import Table, create_db_tables

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.piccolo import PiccoloBackend

engine = SQLiteEngine(path=str(Path(tempfile.mkdtemp()) / "music.sqlite"))


# start-example tables
class Artist(Table, tablename="artists", db=engine):
    name = Varchar(length=100)


class Album(Table, tablename="albums", db=engine):
    title = Varchar(length=100)
    artist = ForeignKey(Artist, db_column_name="artist_id")  # to-one: artist__name, and the field artist_id


class Track(Table, tablename="tracks", db=engine):
    name = Varchar(length=100)
    album = ForeignKey(Album, db_column_name="album_id")


class Playlist(Table, tablename="playlists", db=engine):
    name = Varchar(length=100)
    tracks = M2M(LazyTableReference("PlaylistTrack", module_path=__name__))  # to-many: tracks__name


class PlaylistTrack(Table, tablename="playlist_tracks", db=engine):
    playlist = ForeignKey(Playlist, db_column_name="playlist_id")
    track = ForeignKey(Track, db_column_name="track_id")


class Employee(Table, tablename="employees", db=engine):
    name = Varchar(length=100)
    # A self reference: to-one as manager__name; its reverse side is declared below as "reports".
    manager: ForeignKey["Employee"] = ForeignKey("self", null=True, db_column_name="manager_id")


# end-example tables

# start-example resources
albums = Resource(
    "albums",
    # Piccolo declares no reverse side of a foreign key: name it, as the foreign key pointing back.
    PiccoloBackend(Album, reverse={"tracks": Track.album}),
    filter_fields=("*", "artist__name", "tracks__name"),
    order_fields=("*", "artist__name"),  # to-one paths only: a to-many path has no one value per row
    search_fields=("title", "artist__name", "tracks__name"),
    default_order=("id",),
    load=("artist", "tracks"),
)
playlists = Resource(
    "playlists",
    PiccoloBackend(Playlist),  # M2M columns are to-many relations as they are
    filter_fields=("*", "tracks__name", "tracks__album__title"),
    default_order=("id",),
    load=("tracks",),
)
employees = Resource(
    "employees",
    PiccoloBackend(Employee, reverse={"reports": Employee.manager}),
    filter_fields=("*", "manager__name", "manager__manager__name", "reports__name"),
    order_fields=("*", "manager__name"),
    default_order=("id",),
    load=("manager", "reports"),
)
# end-example resources


async def seed() -> None:
    tables = (Artist, Album, Track, Playlist, PlaylistTrack, Employee)
    for table in reversed(tables):
        await table.alter().drop_table(if_exists=True)
    await create_db_tables(*tables)
    await Artist.insert(Artist(id=1, name="AC/DC"), Artist(id=2, name="Aerosmith"))
    await Album.insert(
        Album(id=1, title="Let There Be Rock", artist=1),
        Album(id=2, title="Big Ones", artist=2),
        Album(id=3, title="Back in Black", artist=1),
    )
    await Track.insert(
        Track(id=1, name="Go Down", album=1),
        Track(id=2, name="Whole Lotta Rosie", album=1),
        Track(id=3, name="Walk On Water", album=2),
        Track(id=4, name="Hells Bells", album=3),
    )
    await Playlist.insert(Playlist(id=1, name="Rock"), Playlist(id=2, name="Quiet"))
    await PlaylistTrack.insert(
        PlaylistTrack(playlist=1, track=1), PlaylistTrack(playlist=1, track=4), PlaylistTrack(playlist=2, track=3)
    )
    await Employee.insert(Employee(id=1, name="Andrew", manager=None))
    await Employee.insert(Employee(id=2, name="Nancy", manager=1), Employee(id=3, name="Michael", manager=1))
    await Employee.insert(Employee(id=4, name="Jane", manager=2), Employee(id=5, name="Robert", manager=3))


app = Litestar(plugins=[ListingPlugin([albums, playlists, employees])], on_startup=[seed])
