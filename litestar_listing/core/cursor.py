"""Keyset continuation: the opaque ``cursor`` of a resource that opts into it (docs: extensions).

A cursor holds the ordering values of the last item of a page, the page number and size it leads
to, and a fingerprint of the query's filters, search and order, so that it continues only the list
it came from. It is not a secret and not signed: every value in it is validated again with the
order fields' types when it comes back, and a forged one can only choose where a page starts.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import enum
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from litestar_listing.core.query import Filter, RawFilter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from litestar_listing.core.query import ListQuery, OrderTerm

__all__ = ("CURSOR_PARAMETER", "CursorError", "CursorToken", "fingerprint", "follows", "value_text")

CURSOR_PARAMETER = "cursor"
"""The query parameter of keyset continuation; reserved only on resources with ``keyset=True``."""

_VERSION = 1
_MAX_TOKEN_LENGTH = 4096


class CursorError(ValueError):
    """A cursor that cannot be read; the message says why, for a 400 on the ``cursor`` parameter."""


def value_text(value: object) -> str | None:
    """``value`` as the query-string text that ``core.coercion.coerce`` reads back to the same value.

    Args:
        value: An ordering value from the store: ``str``, ``int``, ``float``, ``Decimal``,
            ``bool``, ``date``, ``datetime``, ``UUID``, an enum member, an identifier, or None.

    Returns:
        The text, or None for None (NULLs sort last; docs: design, "Ordering").
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    # int, Decimal, UUID, text, and identifiers (e.g. ObjectId) whose str() their coercer reads.
    return str(value)


def follows(key: Sequence[object], after: Sequence[object], order: Sequence[OrderTerm]) -> bool:
    """Whether a row whose ordering values are ``key`` sorts after the row whose values are ``after``.

    The reference for every backend's keyset condition: terms compare in turn, ascending unless
    descending, NULLs last in both directions (docs: design, "Ordering"); equal keys do not follow.
    """
    for value, bound, term in zip(key, after, order, strict=True):
        if value == bound:
            continue
        if bound is None:
            return False
        if value is None:
            return True
        return bool(value < bound) if term.descending else bool(value > bound)  # type: ignore[operator]
    return False


def _filter_key(item: Filter | RawFilter) -> list[str]:
    if isinstance(item, RawFilter):
        return [item.key, repr(item.values)]
    return [item.name, item.operator.name, repr(item.value)]


def fingerprint(query: ListQuery) -> str:
    """A short hash of what a cursor is bound to: the client's filters, their combination, the search and the order.

    Forced filters are left out: they come from the request, not the client, and apply to every page.
    """
    shape = [
        [_filter_key(item) for item in query.filters],
        query.combine.value,
        None if query.search is None else query.search.text,
        [[term.path.name, term.descending] for term in query.order],
    ]
    digest = hashlib.sha256(json.dumps(shape, separators=(",", ":")).encode()).hexdigest()
    return digest[:16]


@dataclass(frozen=True, slots=True)
class CursorToken:
    """The content of a cursor.

    Attributes:
        page: The page number the cursor leads to (reported in ``pagination.page``).
        count: The page size it was made for.
        fingerprint: ``fingerprint(query)`` of the list it continues.
        values: The ordering values of the previous page's last item as text (``value_text``),
            one per ordering term, the primary key included.
    """

    page: int
    count: int
    fingerprint: str
    values: tuple[str | None, ...]

    def encode(self) -> str:
        """The opaque token: URL-safe base64 of a small JSON array, without padding."""
        payload = [_VERSION, self.page, self.count, self.fingerprint, list(self.values)]
        raw = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    @classmethod
    def decode(cls, token: str) -> CursorToken:
        """Read a token made by ``encode``.

        Raises:
            CursorError: The token is not one (bad base64, JSON, version, or shape).
        """
        if not token or len(token) > _MAX_TOKEN_LENGTH:
            msg = "a cursor from the X-Next-Cursor header of a previous response"
            raise CursorError(msg)
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            payload = json.loads(raw.decode("utf-8"))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            msg = "a cursor from the X-Next-Cursor header of a previous response"
            raise CursorError(msg) from None
        if not (
            isinstance(payload, list)
            and len(payload) == 5  # version, page, count, fingerprint, values
            and payload[0] == _VERSION
            and all(isinstance(item, int) and not isinstance(item, bool) and item >= 1 for item in payload[1:3])
            and isinstance(payload[3], str)
            and isinstance(payload[4], list)
            and all(item is None or isinstance(item, str) for item in payload[4])
        ):
            msg = "a cursor from the X-Next-Cursor header of a previous response"
            raise CursorError(msg)
        return cls(page=payload[1], count=payload[2], fingerprint=payload[3], values=tuple(payload[4]))
