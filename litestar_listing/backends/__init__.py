"""Storage backends: each compiles a ``ListQuery`` for one kind of store.

Backends other than ``memory`` need an optional extra; import them from their subpackage
(``litestar_listing.backends.sqlalchemy``, ``litestar_listing.backends.piccolo``), which raise
``MissingExtraError`` naming the extra when it is missing.
"""

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
