"""The response headers of keyset continuation: ``X-Next-Cursor`` and ``Link: <...>; rel="next"``.

An extension a resource opts into with ``Resource(keyset=True)``; the token itself is
``core.cursor.CursorToken`` (docs: extensions, "Keyset continuation").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from litestar.connection import ASGIConnection

from litestar_listing.backends.base import Page
from litestar_listing.core.cursor import CURSOR_PARAMETER, CursorToken, fingerprint, value_text
from litestar_listing.core.errors import InvalidQueryError, ParameterError
from litestar_listing.core.query import ListQuery

__all__ = ("cursor_past_total", "next_page_headers")


def next_page_headers(
    query: ListQuery,
    page: Page,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    params: Sequence[tuple[str, str]],
) -> dict[str, str]:
    """The headers pointing at the page after ``page``, or none when it is the last one.

    Args:
        query: The query that produced ``page``; the token is bound to its fingerprint.
        page: The fetched page; a full page with a ``last_key`` and more rows after it continues.
        connection: The request, for the ``Link`` URL; None: no ``Link``.
        params: The request's query parameters, kept in the ``Link`` URL but for ``page`` and ``cursor``.

    Returns:
        ``{"X-Next-Cursor": token, "Link": '<url>; rel="next"'}``, or ``{}``.
    """
    window = query.window
    more = page.total_mode == "estimated" or window.offset + len(page.items) < page.total
    if page.last_key is None or len(page.items) != window.count or not more:
        return {}
    token = CursorToken(
        page=window.page + 1,
        count=window.count,
        fingerprint=fingerprint(query),
        values=tuple(value_text(value) for value in page.last_key),
    ).encode()
    headers = {"X-Next-Cursor": token}
    if connection is not None:
        headers["Link"] = f'<{_next_url(connection, params, token)}>; rel="next"'
    return headers


def cursor_past_total(total: int) -> InvalidQueryError:
    """The error of a cursor whose page number does not fit the list's count: forged, or the list shrank."""
    message = f"a cursor of this list: its page lies past the {total} items the list has now; start from page=1"
    return InvalidQueryError([ParameterError(CURSOR_PARAMETER, message)])


def _next_url(connection: ASGIConnection[Any, Any, Any, Any], params: Sequence[tuple[str, str]], token: str) -> str:
    """The request's URL with ``page`` and ``cursor`` replaced by ``cursor=<token>``."""
    kept = [(key, value) for key, value in params if key not in {"page", CURSOR_PARAMETER}]
    query = urlencode([*kept, (CURSOR_PARAMETER, token)])
    # The Link is the same request (docs: extensions), so its path is the one the client sent, trailing
    # slash included, not Litestar's normalised one; some servers leave the query string in raw_path.
    raw_path = (connection.scope.get("raw_path") or connection.scope["path"].encode()).split(b"?", 1)[0]
    return str(connection.url.with_replacements(path=raw_path.decode("latin-1"), query=query))
