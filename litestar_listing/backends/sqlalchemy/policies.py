"""Row policies on SQLAlchemy statements of one's own: ``policy_condition`` (docs: scoping, "Row policies")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, inspect, select

from litestar_listing.backends.relational.compiler import with_followed
from litestar_listing.backends.relational.databases import database
from litestar_listing.backends.sqlalchemy.compiler import STATEMENT_COMPILERS, StatementCompiler
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.query import Policy

__all__ = ("mapped_name", "policy_condition")


def _mapped_class(entity: Any) -> type[Any]:
    """The mapped class of ``entity``: itself, or the class an ``aliased(...)`` is of.

    Raises:
        ConfigurationError: ``entity`` is neither (a table, a column, an unmapped class).
    """
    mapper = getattr(inspect(entity, raiseerr=False), "mapper", None)
    if mapper is None:
        msg = f"allowed() takes a mapped class or an aliased(...) of one, not a {type(entity).__name__}"
        raise ConfigurationError(msg)
    return mapper.class_  # type: ignore[no-any-return]


def mapped_name(entity: Any) -> str:
    """The model name of a mapped class or of an alias of one (its ``ModelGraph`` entity).

    Raises:
        ConfigurationError: ``entity`` is neither.
    """
    return _mapped_class(entity).__name__


_MODEL_COMPILERS: dict[tuple[type[Any], str], StatementCompiler] = {}


def _model_compiler(model: type[Any], dialect: str) -> StatementCompiler:
    compiler = _MODEL_COMPILERS.get((model, dialect))
    if compiler is None:
        kind = STATEMENT_COMPILERS[database(dialect, "SQLAlchemyBackend", STATEMENT_COMPILERS).name]
        compiler = _MODEL_COMPILERS[model, dialect] = kind(model, select(model), {}, custom_base=False)
    return compiler


def policy_condition(
    model: Any,
    policy: Policy | None,
    dialect: str = "postgresql",
    *,
    policies: Mapping[str, Policy] | None = None,
) -> ColumnElement[bool] | None:
    """The condition ``policy`` puts on rows of ``model``, for statements of one's own (docs: scoping, "Row policies").

    For enrichment and computed values that count rows of a model with a policy, e.g.
    ``select(...).where(policy_condition(Flight, policies.get("Flight"), policies=policies))`` with
    ``policies`` from ``request_policies(context)``. For rows the statement reads through an alias
    (a self-reference, the same model twice), pass the alias: ``policy_condition(child, ...)`` with
    ``child = aliased(Project)``.

    Args:
        model: The mapped class the statement reads, or an ``aliased(...)`` of one: the condition
            is over that entity's columns.
        policy: Its policy for the request, or None for none.
        dialect: The session's dialect name.
        policies: Every policy of the request by model name, which a policy that follows a relation
            (``RowPolicy(through=...)``) reads for the related model.

    Returns:
        The condition (compiled by the shared compiler, as for listed rows), or None when ``policy``
        restricts nothing.

    Raises:
        ConfigurationError: ``policy`` follows a relation and ``policies`` was not given.
    """
    if policy is None:
        return None
    compiler = _model_compiler(_mapped_class(model), dialect)
    condition: ColumnElement[bool] | None = compiler.policy_condition(
        (model, ()), policy.entity, with_followed(policy, policies)
    )
    return condition
