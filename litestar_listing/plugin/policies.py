"""Row policies: the rows of a model a request may reach, declared once per model, resolved per request.

A resource's ``scopes`` restrict the rows it lists; a ``RowPolicy`` restricts the rows
of one model wherever any resource reaches them: as the listed rows, through a to-one or to-many
relation path of a filter, the search or the order, and in eager loading. Declared on the plugin::

    ListingPlugin(
        resources,
        policies=[RowPolicy(Flight, tenant_scope("carrier")), RowPolicy(Watch, owner_scope("user_id"))],
    )

Each request resolves every row policy with its ``ScopeRule`` (the presets' admin bypass and
anonymous handling included) into ``core.query.Policy`` values, row policies resolved for that
request, which the backends apply (``ListQuery.policies``) (docs: scoping, "Row policies: scoping
that follows every path"). The start-up check of the paths that reach them is ``plugin.reach``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from litestar.exceptions import NotAuthorizedException

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.operators import OPERATORS
from litestar_listing.core.parsing import equality_filter
from litestar_listing.core.query import FieldPath, Filter, ListQuery, Policy
from litestar_listing.core.schema import EntityInfo, ModelGraph, closest
from litestar_listing.plugin.scoping import ScopeRule

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection

__all__ = ("RowPolicies", "RowPolicy", "resolved_policy")


@dataclass(frozen=True, slots=True)
class RowPolicy:
    """The rows of one model that a request may reach, wherever they are reached.

    Attributes:
        model: The model (a SQLAlchemy mapped class, a Piccolo table, a Beanie document), or its
            name in the ``ModelGraph`` (its class name).
        rule: Builds the policy per request, as for a resource's forced filters: ``tenant_scope``,
            ``owner_scope`` or any ``ScopeRule``; an empty mapping lets every row through (an
            administrator). A rule that raises ``NotAuthorizedException`` (an anonymous request
            under ``anonymous="deny"``) lets no row of the model through; for the listed model
            of a resource the request is answered 401 instead, as ``Resource.scopes`` do. None:
            only ``null`` applies.
        null: Own fields that are NULL on every row anyone may reach, whatever the rule says, even
            for an administrator: soft delete (``("deleted_at",)``; docs: soft delete).
        through: To-one relations of the model (a name, or several) whose related row must be
            visible for the row to be: the model inherits the policy of the related model, which
            must have a ``RowPolicy`` of its own (and may inherit in turn), ANDed with ``rule`` and
            ``null``. ``RowPolicy(Invoice, through="customer")``: an invoice is visible when its
            customer is, so a missing or hidden customer hides it; when the request may see every
            customer (an administrator), nothing is inherited (docs: scoping, "Policies that
            follow relations").
    """

    model: type[Any] | str
    rule: ScopeRule | None = None
    null: tuple[str, ...] = field(default=())
    through: str | tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.through, str):
            object.__setattr__(self, "through", (self.through,))

    @property
    def entity(self) -> str:
        """The model's name in the ``ModelGraph``."""
        return self.model if isinstance(self.model, str) else self.model.__name__

    @property
    def relations(self) -> tuple[str, ...]:
        """The relations of ``through``, as a tuple."""
        return (self.through,) if isinstance(self.through, str) else tuple(self.through)


def resolved_policy(
    entity: EntityInfo,
    values: Mapping[str, object],
    *,
    null: Sequence[str] = (),
    visible: bool = True,
    through: tuple[str, ...] = (),
) -> Policy:
    """The row policy of ``entity`` resolved for one request: it admits the rows whose own fields equal ``values``.

    Args:
        entity: The model.
        values: ``{own field: value}`` as a ``ScopeRule`` built them for the request. A list, tuple
            or set value means membership; None matches no row, as for forced filters
            (``core.parsing.forced_filter``; docs: scoping).
        null: Own fields that must be NULL (``RowPolicy.null``).
        visible: False: the policy admits no row of the model (``Policy.visible``).
        through: Relations whose related rows must be visible too (``Policy.through``).

    Returns:
        The ``Policy`` for ``ListQuery.policies``.

    Raises:
        ConfigurationError: A name is not a public own field of ``entity``.
    """
    filters = []
    for name, value in [*values.items(), *((name, _NULL) for name in null)]:
        info = entity.fields.get(name)
        if info is None or info.private:
            hint = closest(name, [field for field, info in entity.fields.items() if not info.private])
            msg = f"row policy of {entity.name}: {entity.name} has no field {name!r}" + (
                f" (did you mean {hint})" if hint else ""
            )
            raise ConfigurationError(msg)
        path = FieldPath((name,))
        is_null = value is _NULL
        filters.append(
            Filter(path, OPERATORS["isnull"], value=True, key=name)
            if is_null
            else equality_filter(path, value, key=name)
        )
    return Policy(entity.name, tuple(filters), visible=visible, through=through)


_NULL = object()


class RowPolicies:
    """The row policies of an application, by model name (``ListingPlugin(policies=...)``).

    Args:
        policies: At most one ``RowPolicy`` per model.

    Raises:
        ConfigurationError: Two policies for one model.
    """

    __slots__ = ("by_entity", "entities", "scoped")

    def __init__(self, policies: Iterable[RowPolicy]) -> None:
        self.by_entity: dict[str, RowPolicy] = {}
        self.entities: dict[str, EntityInfo] = {}
        """The models of the policies, found by ``check`` in the resources' graphs."""
        self.scoped: dict[str, str] = {}
        """The models some resource scopes, with that resource's name (set by ``reach.check_paths``)."""
        for policy in policies:
            if policy.entity in self.by_entity:
                msg = f"two row policies for the model {policy.entity}; declare one per model"
                raise ConfigurationError(msg)
            self.by_entity[policy.entity] = policy

    def __bool__(self) -> bool:
        return bool(self.by_entity)

    def check(self, graphs: Sequence[ModelGraph]) -> None:
        """Check at start-up that every policy names a model some resource reaches, its own fields and relations.

        Raises:
            ConfigurationError: A policy's model is reached by no resource (a misspelt name), its rule
                names a field the model does not have, or its ``through`` names no to-one relation of
                the model, a relation to a model without a ``RowPolicy``, or closes a circle of
                policies that follow each other.
        """
        entities = {name: entity for graph in graphs for name, entity in graph.entities.items()}
        for name, policy in self.by_entity.items():
            entity = entities.get(name)
            if entity is None:
                hint = closest(name, entities)
                msg = f"row policy of {name}: no resource reaches a model named {name!r}" + (
                    f" (did you mean {hint})" if hint else ""
                )
                raise ConfigurationError(msg)
            resolved_policy(entity, dict.fromkeys(() if policy.rule is None else policy.rule.fields), null=policy.null)
            self.entities[name] = entity
        for name, policy in self.by_entity.items():
            for step in policy.relations:
                self._check_through(self.entities[name], step)
        for name in self.by_entity:
            self._check_circle(name, ())

    def _check_through(self, entity: EntityInfo, step: str) -> None:
        relation = entity.relations.get(step)
        if relation is None or relation.to_many:
            to_one = sorted(name for name, each in entity.relations.items() if not each.to_many)
            hint = closest(step, to_one)
            msg = f"row policy of {entity.name}: through={step!r} is no to-one relation of {entity.name}" + (
                f" (did you mean {hint})" if hint else f"; its to-one relations are {to_one}"
            )
            raise ConfigurationError(msg)
        if relation.target not in self.by_entity:
            msg = (
                f"row policy of {entity.name}: through={step!r} reaches {relation.target}, which has no RowPolicy to "
                f"inherit; give {relation.target} one"
            )
            raise ConfigurationError(msg)

    def _check_circle(self, name: str, seen: tuple[str, ...]) -> None:
        if name in seen:
            msg = f"row policies follow each other in a circle: {' -> '.join((*seen, name))}"
            raise ConfigurationError(msg)
        entity = self.entities[name]
        for step in self.by_entity[name].relations:
            self._check_circle(entity.relations[step].target, (*seen, name))

    def resolve(self, graph: ModelGraph, connection: ASGIConnection[Any, Any, Any, Any] | None) -> tuple[Policy, ...]:
        """The policies of ``connection`` for the models of ``graph``, for ``ListQuery.policies``.

        A policy that restricts nothing for this request (an administrator's) is left out, and so is
        a ``through`` relation whose model's policy restricts nothing.

        Raises:
            NotAuthorizedException: The listed model's rule refuses the request (a 401).
            ConfigurationError: A policy applies but no connection was given: a list without its
                request would be unrestricted.
        """
        return self._resolve(graph.entities, graph.root, connection)

    def _resolve(
        self, entities: Mapping[str, EntityInfo], root: str, connection: ASGIConnection[Any, Any, Any, Any] | None
    ) -> tuple[Policy, ...]:
        resolved: dict[str, Policy | None] = {}

        def resolve(name: str) -> Policy | None:
            if name in resolved:
                return resolved[name]
            policy = self.by_entity.get(name)
            result: Policy | None = None
            if policy is not None:
                if connection is None:
                    msg = f"the model {name} has a row policy: list or parse with the request"
                    raise ConfigurationError(msg)
                entity = entities[name]
                try:
                    values = {} if policy.rule is None else policy.rule.build(connection)
                except NotAuthorizedException:
                    if name == root:
                        raise
                    result = Policy(name, visible=False)
                else:
                    through = tuple(step for step in policy.relations if resolve(entity.relations[step].target))
                    if values or policy.null or through:
                        result = resolved_policy(entity, values, null=policy.null, through=through)
            resolved[name] = result
            return result

        for name in entities:
            resolve(name)
        return tuple(policy for policy in resolved.values() if policy is not None)

    def for_request(self, connection: ASGIConnection[Any, Any, Any, Any]) -> dict[str, Policy]:
        """Every policy of the application resolved for ``connection``, by model name.

        For enrichment and computed values that read models the listed one does not reach (the
        demo's ``fleet_size`` counts flights for airlines): apply ``policies[name]`` with the
        backend's helper (``policy_condition`` of ``backends.sqlalchemy`` or ``backends.piccolo``,
        ``policy_filter`` of ``backends.beanie``).
        A model without an entry is not restricted for this request. A rule that refuses the
        request gives a policy that admits no row.
        """
        return {policy.entity: policy for policy in self._resolve(self.entities, "", connection)}

    def apply(
        self, query: ListQuery, graph: ModelGraph, connection: ASGIConnection[Any, Any, Any, Any] | None
    ) -> ListQuery:
        """``query`` carrying the policies of ``connection`` (``resolve``)."""
        policies = self.resolve(graph, connection)
        return replace(query, policies=policies) if policies else query
