"""Fairness between clients: Litestar's rate limit next to max_concurrent_lists (docs/guide/security.md)."""

from litestar import Litestar
from litestar.middleware.rate_limit import RateLimitConfig
from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, MemoryBackend, Resource
from litestar_listing.backends.sqlalchemy import model_graph


class Base(DeclarativeBase):
    pass


class Article(Base):
    __tablename__ = "articles"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(100))


ROWS = [{"id": number, "title": f"Article {number}"} for number in range(1, 26)]
articles = Resource("articles", MemoryBackend(model_graph(Article), ROWS), search_fields=("title",))

# start-example fairness
# Per client: at most 30 requests a minute from one address (Litestar counts them, before any
# handler runs; the 31st is a 429 with RateLimit-* headers). Behind a proxy, pass an
# identifier_for_request that reads the client from the header your proxy sets.
rate_limit = RateLimitConfig(rate_limit=("minute", 30), exclude=["/schema"])

app = Litestar(
    # For the store: at most 8 lists at once from all clients together; the others wait their turn.
    plugins=[ListingPlugin([articles], max_concurrent_lists=8)],
    middleware=[rate_limit.middleware],
)
# end-example fairness
