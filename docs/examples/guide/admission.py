"""Admission by cost: a ceiling, two lanes, a cost budget per client, the costs observed (docs/guide/admission.md)."""

import logging

from litestar import Litestar
from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import CostBudget, CostModel, ListingPlugin, MemoryBackend, Resource
from litestar_listing.backends.sqlalchemy import model_graph


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))


class Book(Base):
    __tablename__ = "books"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    year: Mapped[int] = mapped_column(index=True)  # indexed: filtering on it is priced as an index lookup
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id"), index=True)
    author: Mapped[Author] = relationship()


AUTHORS = [
    {"id": 1, "name": "Ursula K. Le Guin"},
    {"id": 2, "name": "Italo Calvino"},
    {"id": 3, "name": "Toni Morrison"},
]
TITLES = ["The Dispossessed", "Invisible Cities", "Beloved", "The Lathe of Heaven", "The Baron in the Trees", "Jazz"]
ROWS = [
    {
        "id": number,
        "title": title,
        "year": 1965 + 5 * number,
        "author_id": 1 + (number - 1) % 3,
        "author": AUTHORS[(number - 1) % 3],
    }
    for number, title in enumerate(TITLES, start=1)
]

# start-example resource
books = Resource(
    "books",
    MemoryBackend(model_graph(Book), ROWS),
    filter_fields=("*", "author__*"),
    order_fields=("*", "author__name"),
    search_fields=("title", "author__name"),
    # A list costing more than 30 units is a 400 naming the parameters that made it so.
    max_cost=30.0,
    # Searching is dearer on this store than the default weights say: 4 units a field, not 3.
    cost=CostModel(search_field=4.0),
    # X-Listing-Cost, X-Listing-Lane and X-Listing-Wait on every answer.
    cost_headers=True,
)
# end-example resource

# start-example plugin
plugin = ListingPlugin(
    [books],
    # 8 lists in the store at once, of which at most 2 costing 15 units or more: cheap lists always
    # find one of the other 6 places. One client has at most one expensive list admitted or waiting.
    max_concurrent_lists=8,
    max_expensive_lists=2,
    expensive_cost=15.0,
    client_share=1,
    # 300 cost units a minute per client, kept in the application's store "listing_budget" (memory
    # here; a RedisStore under that name shares it between workers).
    budget=CostBudget(units=300.0, window="minute"),
)
# Expensive lists are logged at INFO, with their cost, its parts, the lane and the wait.
logging.getLogger("litestar_listing.admission").setLevel(logging.INFO)
# end-example plugin

app = Litestar(plugins=[plugin])
