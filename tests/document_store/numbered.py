"""The Beanie document base of the tests' own data sets: rows keyed by the numbers the tests choose.

Beanie allows any ``id`` type; with the data sets' integers as ``_id`` the expected ids of a test
are the ones it wrote, on every backend alike.
"""

from __future__ import annotations

from beanie import Document

__all__ = ("NumberedDocument",)


class NumberedDocument(Document):
    """A document whose ``id`` (``_id``) is an int; a subclass names its collection in ``Settings``."""

    id: int  # type: ignore[assignment]  # Document declares PydanticObjectId | None
