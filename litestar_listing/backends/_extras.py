"""``MissingExtraError``, apart from ``backends/__init__.py`` so that importing the backends needs no Litestar."""

from __future__ import annotations

from litestar.exceptions import LitestarException, MissingDependencyException

__all__ = ("MissingExtraError",)


class MissingExtraError(MissingDependencyException):
    """A backend's ORM is not installed; the message names our extra, e.g. ``litestar-listing[piccolo]``.

    Litestar's own message would point at ``litestar[<extra>]``, which installs something else.
    """

    def __init__(self, package: str, extra: str) -> None:
        LitestarException.__init__(
            self, f"{package!r} is not installed; the {extra} backend needs: pip install 'litestar-listing[{extra}]'"
        )
