"""The error bodies of the list routes as the application writes them: Litestar's or RFC 9457 problem details.

Read once, when the application is built, from its ``ProblemDetailsPlugin`` (if any), so that
OpenAPI documents the body and media type a client really gets (``plugin.openapi``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from inspect import getmro
from typing import Literal

from litestar.exceptions import (
    HTTPException,
    NotAuthorizedException,
    PermissionDeniedException,
    ServiceUnavailableException,
    TooManyRequestsException,
    ValidationException,
)
from litestar.plugins.problem_details import ProblemDetailsPlugin

__all__ = ("ERROR_EXCEPTIONS", "ErrorFormat", "ErrorShapes")

ErrorFormat = Literal["litestar", "problem", "mapped"]
"""``"litestar"``: ``{status_code, detail[, extra]}`` as ``application/json``; ``"problem"``: the
problem details Litestar's ``ProblemDetailsPlugin`` makes of an ``HTTPException`` (``{status, title,
detail[, extra]}``, ``title`` holding the exception's detail); ``"mapped"``: problem details made by a
function of the application (``exception_to_problem_detail_map``), whose other members are its own."""

ERROR_EXCEPTIONS: Mapping[int, type[HTTPException]] = {
    400: ValidationException,
    401: NotAuthorizedException,
    403: PermissionDeniedException,
    429: TooManyRequestsException,
    503: ServiceUnavailableException,
}
"""The Litestar exception each documented error status is answered with: the scopes raise the 401 and 403
ones, the plugin's exception handlers make the 400, 429 and 503 ones of the library's errors (``plugin.exceptions``)."""

PROBLEM_MEDIA_TYPE = "application/problem+json"


@dataclass(frozen=True, slots=True)
class ErrorShapes:
    """The format of each error status of the list routes (``ErrorFormat``); a status not listed is ``"litestar"``.

    Attributes:
        formats: ``{status: format}`` for the statuses of ``ERROR_EXCEPTIONS``.
    """

    formats: Mapping[int, ErrorFormat] = field(default_factory=dict)

    @classmethod
    def detect(cls, plugins: Iterable[object]) -> ErrorShapes:
        """The formats an application with these plugins writes (``AppConfig.plugins``).

        With Litestar's ``ProblemDetailsPlugin``, an exception is answered as problem details when
        its class or a base is in the plugin's ``exception_to_problem_detail_map`` (``"mapped"``), or
        when ``enable_for_all_http_exceptions`` is set (``"problem"``), the first match along the
        exception's MRO winning, as Litestar looks its handlers up. Exception handlers the
        application registers itself are not read.

        Args:
            plugins: The application's plugins, in any order (read before any ``on_app_init``).

        Returns:
            The formats; all ``"litestar"`` without the plugin.
        """
        formats: dict[int, ErrorFormat] = {}
        for plugin in plugins:
            if not isinstance(plugin, ProblemDetailsPlugin):
                continue
            config = plugin.config
            for status, exception in ERROR_EXCEPTIONS.items():
                for base in getmro(exception):
                    if base in config.exception_to_problem_detail_map:
                        formats[status] = "mapped"
                        break
                    if base is HTTPException and config.enable_for_all_http_exceptions:
                        formats[status] = "problem"
                        break
        return cls(formats)

    def format(self, status: int) -> ErrorFormat:
        """The format of ``status``'s body."""
        return self.formats.get(status, "litestar")

    def media_type(self, status: int) -> str:
        """``application/problem+json`` for problem details, else ``application/json``."""
        return "application/json" if self.format(status) == "litestar" else PROBLEM_MEDIA_TYPE
