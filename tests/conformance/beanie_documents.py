"""The conformance data set as Beanie documents: the same rows, relations as ``Link``s.

Identifiers are the fixture's integers (Beanie allows any ``id`` type), so the case table's ids and
forced values hold unchanged; a link stores ``DBRef(collection, id)``.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from beanie import BackLink, DecimalAnnotation, Document, Link
from pydantic import Field, SecretStr

from tests.conformance.fixture import ATTRIBUTES, COMPANIES, PARTS, PROFILES, ROLES, TAGS, THING_TAGS, THINGS, USERS
from tests.conformance.models import Status
from tests.document_store.numbered import NumberedDocument

__all__ = ("DOCUMENTS", "Company", "Part", "Role", "Tag", "Thing", "User", "write_documents")


class Company(NumberedDocument):
    name: str
    founded: dt.date | None = None
    profile: dict[str, Any] | None = None

    class Settings:
        name = "companies"


class Role(NumberedDocument):
    code: str
    label: str | None = None

    class Settings:
        name = "roles"


class User(NumberedDocument):
    name: str
    email: str | None = None
    company: Link[Company] | None = None
    role: Link[Role] | None = None
    manager: Link[User] | None = None
    password_hash: SecretStr

    class Settings:
        name = "users"


class Tag(NumberedDocument):
    name: str

    class Settings:
        name = "tags"


class Thing(NumberedDocument):
    name: str | None = None
    status: Status | None = None
    quantity: int | None = None
    weight: float | None = None
    price: DecimalAnnotation | None = None
    active: bool | None = None
    release_date: dt.date | None = None
    created_at: dt.datetime
    uid: uuid.UUID | None = None
    note: str | None = None
    owner: Link[User] | None = None
    reviewer: Link[User] | None = None
    company: Link[Company]
    deleted_at: dt.datetime | None = None
    attributes: dict[str, Any] | None = None
    tags: list[Link[Tag]] = Field(default_factory=list)
    parts: list[BackLink[Part]] = Field(default_factory=list, json_schema_extra={"original_field": "thing"})

    class Settings:
        name = "things"


class Part(NumberedDocument):
    name: str
    quantity: int | None = None
    thing: Link[Thing]
    supplier: Link[Company] | None = None

    class Settings:
        name = "parts"


DOCUMENTS: tuple[type[Document], ...] = (Company, Role, User, Tag, Thing, Part)
"""Every document class, for ``init_beanie``."""


def _link(document: type[Document], key: int | None) -> Any:
    return None if key is None else document.link_from_id(key)


async def write_documents() -> None:
    """Delete every document of the conformance classes and insert the fixture rows through Beanie."""
    for document in DOCUMENTS:
        await document.delete_all()
    await Company.insert_many(
        [Company(id=key, name=name, founded=founded, profile=PROFILES.get(key)) for key, name, founded in COMPANIES]
    )
    await Role.insert_many([Role(id=key, code=code, label=label) for key, code, label in ROLES])
    await User.insert_many(
        [
            User(
                id=key,
                name=name,
                email=email,
                company=_link(Company, company),
                role=_link(Role, role),
                manager=_link(User, manager),
                password_hash=SecretStr(password_hash),
            )
            for key, name, email, company, role, manager, password_hash in USERS
        ]
    )
    await Tag.insert_many([Tag(id=key, name=name) for key, name in TAGS])
    things = []
    for values in THINGS:
        key, name, status, quantity, weight, price, active, release, created, uid, note = values[:11]
        owner, reviewer, company, deleted_at = values[11:]
        things.append(
            Thing(
                id=key,
                name=name,
                status=None if status is None else Status(status),
                quantity=quantity,
                weight=weight,
                price=price,
                active=active,
                release_date=release,
                created_at=created,
                uid=uid,
                note=note,
                owner=_link(User, owner),
                reviewer=_link(User, reviewer),
                company=_link(Company, company),
                deleted_at=deleted_at,
                attributes=ATTRIBUTES.get(key),
                tags=[_link(Tag, tag) for thing, tag in THING_TAGS if thing == key],
            )
        )
    await Thing.insert_many(things)
    await Part.insert_many(
        [
            Part(id=key, name=name, quantity=quantity, thing=_link(Thing, thing), supplier=_link(Company, supplier))
            for key, thing, name, quantity, supplier in PARTS
        ]
    )
