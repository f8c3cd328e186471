"""Framework-free exceptions of the engine and the backends.

The plugin maps them to HTTP at the edge, in ``plugin/exceptions.py``; nothing here knows about HTTP
(docs: design, "Errors").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = (
    "ConfigurationError",
    "InvalidQueryError",
    "ListingError",
    "ParameterError",
    "RateLimitedError",
    "UnavailableError",
    "UnsupportedQueryError",
)


@dataclass(frozen=True, slots=True)
class ParameterError:
    """One bad query parameter.

    Attributes:
        key: The query parameter's name exactly as the client sent it (for example ``count`` or
            ``airline__name__startswith``).
        message: What was expected, written for the client.
    """

    key: str
    message: str


class ListingError(Exception):
    """Base class of every error raised by litestar-listing."""


class InvalidQueryError(ListingError):
    """The query string breaks the listing contract; every bad parameter is listed at once.

    The plugin answers it with Litestar's 400 shape (docs: query language, "Errors").

    Attributes:
        errors: One entry per bad parameter, in the order the client sent them.
    """

    def __init__(self, errors: list[ParameterError] | tuple[ParameterError, ...]) -> None:
        self.errors = tuple(errors)
        keys = ", ".join(dict.fromkeys(error.key for error in self.errors))
        super().__init__(f"Invalid query parameters: {keys}")


class ConfigurationError(ListingError):
    """The application declared or used the library wrongly: a bug of the application, never the client's.

    Mostly raised before any request, when a scope rule is declared or the application starts and
    checks every declaration. Some misuses show only when a list is made and are raised during the
    request, e.g. a list without the request its scopes or row policies are resolved for
    (``RowPolicies.resolve``), or a per-call ``load`` the list action refuses. The plugin maps no
    ``ConfigurationError`` to an answer: the client gets a 500 (docs: design, "Errors").
    """


class UnsupportedQueryError(ListingError):
    """A backend was asked to compile a node or an operator it has no visitor for.

    The plugin answers 400 naming ``key``; the start-up check of the backend contract keeps any
    query that passed parsing from reaching it (docs: design, "Errors").

    Attributes:
        key: The query parameter that asked for it (e.g. ``name__ilike``), or ``""`` when unknown.
    """

    def __init__(self, message: str, *, key: str = "") -> None:
        self.key = key
        super().__init__(message)


class UnavailableError(ListingError):
    """The store could not answer: the connection failed, no connection was free, or it timed out.

    The plugin answers 503 with ``Retry-After: 1`` (docs: design, "Errors"); the request can be retried
    once the store is back.

    Attributes:
        reason: ``"timeout"`` (the list took longer than allowed), ``"busy"`` (no connection became
            free) or ``"connection"`` (the store was unreachable or dropped the connection).
    """

    def __init__(self, message: str, *, reason: str = "connection") -> None:
        self.reason = reason
        super().__init__(message)


class RateLimitedError(ListingError):
    """A client has spent its share: of the expensive lists' places, or of its cost budget.

    The plugin answers 429 with ``Retry-After`` and, for a budget, the ``RateLimit-*`` headers Litestar's
    own rate limiting writes (docs: admission, "Fair shares").

    Attributes:
        retry_after: Seconds after which the client's list would be admitted again.
        headers: The headers of the answer, ``Retry-After`` included.
    """

    def __init__(self, message: str, *, retry_after: int, headers: Mapping[str, str] | None = None) -> None:
        self.retry_after = retry_after
        self.headers = {**(headers or {}), "Retry-After": str(retry_after)}
        super().__init__(message)
