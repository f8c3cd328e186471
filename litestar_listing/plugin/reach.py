"""The start-up check of row policies: every relation path a client may use reaches only models it may read.

A model that some resource of the application scopes (its forced filters, or a base list query
that leaves rows out) may be reached through another resource's relation paths, computed values
or eager loading only when it has a row policy, or when that resource declares the path public
(docs: scoping, "The start-up check").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.query import LOOKUP_SEP
from litestar_listing.plugin.prepared import prepare

if TYPE_CHECKING:
    from litestar_listing.plugin.policies import RowPolicies
    from litestar_listing.plugin.resource import Resource

__all__ = ("check_load_row_policies", "check_paths")


def _scoped_models(resources: Sequence[Resource]) -> dict[str, str]:
    """The models some resource scopes, each with the first such resource's name.

    A resource scopes its listed model when it has forced filters (``scopes``) or a base list
    query that may leave rows out (``narrows_rows``: a base statement, a ``where``, a pipeline).
    """
    scoped: dict[str, str] = {}
    for resource in resources:
        if resource.scopes or resource.backend.narrows_rows:
            scoped.setdefault(prepare(resource).field_map.graph.root, resource.name)
    return scoped


def _client_paths(resource: Resource) -> list[tuple[str, str]]:
    """``(kind, path)`` of every relation path a client of ``resource`` may use, and its loads."""
    field_map = prepare(resource).field_map
    paths = [("filter", name) for name, exposed in field_map.filterable.items() if exposed.hops]
    paths += [("search", exposed.path.name) for exposed in field_map.searchable if exposed.hops]
    paths += [("order", name) for name, exposed in field_map.orderable.items() if exposed.hops]
    paths += [("load", name) for name in resource.load]
    return paths


def _is_public(path: str, public: Sequence[str]) -> bool:
    return any(path == name or path.startswith(name + LOOKUP_SEP) for name in public)


def check_paths(resources: Sequence[Resource], policies: RowPolicies) -> None:
    """The start-up check: no relation path reaches a scoped model that has no row policy.

    For every resource, every filter, search and order path that crosses a relation, every
    ``load`` path, and every model a ``Computed`` value reads (``FieldInfo.reads``): each model
    reached that some resource of the application scopes (``_scoped_models``) must have a
    ``RowPolicy``, unless the resource declares the path (or a relation prefix of it, or the
    computed alias) in ``Resource.public_paths``. A model reached through a backend without
    ``Capabilities.row_policies`` may not have a policy at all, nor one that follows a relation
    (``RowPolicy.through``) through a backend without ``Capabilities.inherited_policies``: it would
    not be applied.

    Raises:
        ConfigurationError: Naming the path, its kind, the resource, the model and the resource
            that scopes it; or a policy its backend cannot apply; or a policy ``RowPolicies.check``
            refuses.
    """
    policies.check([prepare(resource).field_map.graph for resource in resources])
    policies.scoped = scoped = _scoped_models(resources)
    for resource in resources:
        graph = prepare(resource).field_map.graph
        if not resource.backend.capabilities.row_policies:
            governed = sorted(name for name in graph.entities if name in policies.by_entity)
            if governed:
                msg = (
                    f"resource {resource.name!r}: {type(resource.backend).__name__} does not apply row policies, "
                    f"and {', '.join(governed)} {'has' if len(governed) == 1 else 'have'} one"
                )
                raise ConfigurationError(msg)
        if not resource.backend.capabilities.inherited_policies:
            inheriting = sorted(
                name for name in graph.entities if name in policies.by_entity and policies.by_entity[name].relations
            )
            if inheriting:
                msg = (
                    f"resource {resource.name!r}: {type(resource.backend).__name__} does not apply row policies that "
                    f"follow a relation (RowPolicy(through=...)), and {', '.join(inheriting)} "
                    f"{'has' if len(inheriting) == 1 else 'have'} one"
                )
                raise ConfigurationError(msg)
        for kind, path in _client_paths(resource):
            _check_path(resource, kind, path, scoped, policies)
        _check_computed(resource, scoped, policies)


def _check_path(resource: Resource, kind: str, path: str, scoped: Mapping[str, str], policies: RowPolicies) -> None:
    if _is_public(path, resource.public_paths):
        return
    graph = prepare(resource).field_map.graph
    entity = graph.root_entity
    for step in path.split(LOOKUP_SEP):
        relation = entity.relations.get(step)
        if relation is None:  # the field at the end of the path
            return
        entity = graph.entities[relation.target]
        _check_reach(resource, f"the {kind} path {path!r}", entity.name, scoped, policies)


def _check_reach(resource: Resource, what: str, model: str, scoped: Mapping[str, str], policies: RowPolicies) -> None:
    """``what`` (a path, a computed value) reaching ``model``: refused when a resource scopes it without a policy."""
    owner = scoped.get(model)
    if owner is not None and model not in policies.by_entity:
        msg = (
            f"resource {resource.name!r}: {what} reaches {model}, whose rows "
            f"resource {owner!r} scopes, but {model} has no row policy: clients could read "
            f"rows {owner!r} hides. Give {model} a RowPolicy on the plugin, or declare the path "
            f"in Resource.public_paths if every row of {model} may be read through it"
        )
        raise ConfigurationError(msg)


def _check_computed(resource: Resource, scoped: Mapping[str, str], policies: RowPolicies) -> None:
    """A ``Computed`` value reading a scoped model: the check of a path, the alias being the path."""
    for name, info in resource.backend.computed_fields().items():
        if _is_public(name, resource.public_paths):
            continue
        for model in info.reads:
            _check_reach(resource, f"the computed value {name!r}", model, scoped, policies)


def check_load_row_policies(resource: Resource, policies: RowPolicies, load: Sequence[str]) -> None:
    """``check_paths`` for the ``load`` of one call (``list_resource(..., load=...)``) under an application's policies.

    Raises:
        ConfigurationError: As ``check_paths``, for a load path of this call.
    """
    for path in load:
        _check_path(resource, "load", path, policies.scoped, policies)
