"""``ListingPlugin``: mounts each resource's list route and prepares its backend at start-up."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from litestar.plugins import InitPluginProtocol

from litestar_listing.plugin.handlers import list_handler

if TYPE_CHECKING:
    from litestar.config.app import AppConfig

    from litestar_listing.plugin.resource import Resource

__all__ = ("ListingPlugin",)


class ListingPlugin(InitPluginProtocol):
    """Serve ``GET {path_prefix}/<resource>/`` for every resource (spec §4.1, §9.1).

    Args:
        resources: The listed collections; resource names must be unique.
        path_prefix: The path before every resource name (spec §9.1: ``/api/v1``).

    Raises:
        ConfigurationError: When the application is built, for a resource whose declaration does
            not match its models (fail at start-up, not per request).
    """

    __slots__ = ("path_prefix", "resources")

    def __init__(self, resources: Sequence[Resource], *, path_prefix: str = "/api/v1") -> None:
        names = [resource.name for resource in resources]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            from litestar_listing.core.errors import ConfigurationError

            msg = f"resource names must be unique; repeated: {duplicated}"
            raise ConfigurationError(msg)
        self.resources = tuple(resources)
        self.path_prefix = path_prefix

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        """Register one list handler per resource, prepare its backend, add its type encoders.

        A backend may carry ``type_encoders`` (e.g. Beanie's ``{ObjectId: str}``) for values its
        items hold; the application's own encoders win.
        """
        for resource in self.resources:
            app_config.route_handlers.append(list_handler(resource, self.path_prefix))
            resource.backend.prepare()
            encoders = getattr(resource.backend, "type_encoders", None)
            if encoders:
                app_config.type_encoders = {**encoders, **(app_config.type_encoders or {})}
        return app_config
