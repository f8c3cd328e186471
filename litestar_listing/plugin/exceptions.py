"""The library's errors as HTTP answers: exception handlers the ``ListingPlugin`` registers.

The list action (``plugin.action``) raises the library's own errors (and lets the 401 and 403 of a
scope rule, Litestar's exceptions already, through); here the library's become Litestar's:
``InvalidQueryError`` a 400 ``ValidationException`` with one ``extra`` entry ``{key, message,
source}`` per bad parameter, ``UnavailableError`` a 503 ``ServiceUnavailableException`` with
``Retry-After: 1``, ``RateLimitedError`` a 429 ``TooManyRequestsException`` with its
``Retry-After``. The Litestar exception is then answered by the handler the route would use for
it (the application's, a router's, ``ProblemDetailsPlugin``'s), or by Litestar's default response,
so an application shapes these errors as it shapes its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from inspect import getmro
from typing import Any

from litestar import Request, Response
from litestar.exceptions import (
    HTTPException,
    ServiceUnavailableException,
    TooManyRequestsException,
    ValidationException,
)
from litestar.exceptions.responses import create_exception_response
from litestar.types import ExceptionHandlersMap

from litestar_listing.core.errors import (
    ConfigurationError,
    InvalidQueryError,
    ListingError,
    ParameterError,
    RateLimitedError,
    UnavailableError,
    UnsupportedQueryError,
)

__all__ = ("LOGGER", "as_http", "bad_request", "exception_handlers", "logged", "unsupported")

RETRY_AFTER_S = 1
"""The ``Retry-After`` of a 503, in seconds."""

LOGGER = logging.getLogger("litestar_listing")
"""The library's logger: the ``ConfigurationError`` of a list made during a request (``logged``)."""


def logged(error: ConfigurationError) -> ConfigurationError:
    """Log ``error``, raised while a list was made, at ERROR; return it, to raise.

    Such an error is a bug of the application, and the client gets a 500, which Litestar logs only
    in debug mode (its ``log_exceptions="debug"`` default): logged here in any mode, so that the
    fix its message names is seen (docs: in your app, "Start-up checks").
    """
    LOGGER.error("a list failed on the application's configuration: %s", error)
    return error


def bad_request(error: InvalidQueryError) -> ValidationException:
    """Litestar's 400 for ``error``: one ``extra`` entry ``{key, message, source: "query"}`` per problem."""
    extra = [{"key": item.key, "message": item.message, "source": "query"} for item in error.errors]
    return ValidationException(detail=str(error), extra=extra)


def as_http(error: ListingError) -> HTTPException:
    """The Litestar exception answering ``error``: 400 for a bad query, 429 over a share, 503 for an unavailable store.

    (docs: query language, "Errors"; in your app, "Errors")

    Raises:
        TypeError: ``error`` is a ``ConfigurationError`` or another error that is a bug of the
            application, not an answer to the client (a 500 stays a 500).
    """
    if isinstance(error, InvalidQueryError):
        return bad_request(error)
    if isinstance(error, UnsupportedQueryError):  # the list action maps these; a handler's own fetch may not
        return bad_request(unsupported(error))
    if isinstance(error, UnavailableError):
        return ServiceUnavailableException(detail=str(error), headers={"Retry-After": str(RETRY_AFTER_S)})
    if isinstance(error, RateLimitedError):
        return TooManyRequestsException(detail=str(error), headers=dict(error.headers))
    msg = f"{type(error).__name__} is not an HTTP answer: {error}"
    raise TypeError(msg)


def unsupported(error: UnsupportedQueryError) -> InvalidQueryError:
    """The client's view of a query the store cannot answer: which parameter, and why (a 400, not a 500)."""
    message = f"cannot be answered by this resource's store ({error})"
    return InvalidQueryError([ParameterError(error.key, message)])


def exception_handlers() -> ExceptionHandlersMap:
    """The handlers the ``ListingPlugin`` registers on the application, by library error."""
    return {
        InvalidQueryError: _answer,
        UnsupportedQueryError: _answer,
        UnavailableError: _answer,
        RateLimitedError: _answer,
    }


def _answer(request: Request[Any, Any, Any], error: Exception) -> Response[Any]:
    """Answer ``error`` as the route answers the Litestar exception ``as_http`` makes of it."""
    assert isinstance(error, ListingError)  # noqa: S101 - registered for the library's errors only
    http = as_http(error)
    handler = _handler_for(request.route_handler.resolve_exception_handlers(), http)
    if handler is None:
        return create_exception_response(request, http)
    return handler(request, http)


def _handler_for(handlers: ExceptionHandlersMap, error: HTTPException) -> Callable[..., Response[Any]] | None:
    """The handler Litestar would pick for ``error``: by status code first, then along its class's MRO."""
    by_status = handlers.get(error.status_code)
    if by_status is not None:
        return by_status
    return next((handlers[cls] for cls in getmro(type(error)) if cls in handlers), None)
