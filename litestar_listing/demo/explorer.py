"""The demo's API explorer: Swagger UI served from locally installed files, so it works offline.

Litestar's own Swagger UI page loads Swagger UI from a CDN. ``LocalSwaggerRenderPlugin`` renders a page
whose script, style sheet and icon come from the ``swagger-ui-py`` package, served under
``ASSETS_PATH`` next to the page at ``EXPLORER_PATH``; the page reads the OpenAPI document from this
server and does not call Swagger's online validator. ``swagger-ui-py`` ships Swagger UI 5, the first
major version that reads OpenAPI 3.1 (what Litestar writes); ``swagger-ui-bundle`` ships 4.15, which
refuses such a document. The page also replaces three of Swagger UI's selectors whose cost grows with
the square of an operation's parameters, and renders a parameter row only when its inputs change
(see ``_SCRIPT``): a listing operation has hundreds of parameters.

The schema declares the demo's bearer tokens as an optional HTTP bearer scheme (``SECURITY_SCHEME``),
so the explorer's "Authorize" button signs its requests in as a demo user; without a token a request
is anonymous, as with the demo's ``DemoAuthentication`` middleware.
"""

from __future__ import annotations

import html
import importlib.util
import json
from pathlib import Path
from typing import Any

from litestar import Request
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, YamlRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.router import Router
from litestar.static_files import create_static_files_router

__all__ = (
    "ASSETS_PATH",
    "EXPLORER_PATH",
    "SCHEMA_PATH",
    "SECURITY_SCHEME",
    "LocalSwaggerRenderPlugin",
    "openapi_config",
    "swagger_ui_assets",
)

SCHEMA_PATH = "/schema"
"""Where Litestar serves the OpenAPI documents and the explorer (the demo's auth middleware skips it)."""

EXPLORER_PATH = f"{SCHEMA_PATH}/swagger"
"""The explorer page; ``SCHEMA_PATH`` itself serves it too."""

ASSETS_PATH = f"{SCHEMA_PATH}/swagger-ui"
"""Where Swagger UI's files are served from the installed package."""

SECURITY_SCHEME = "DemoBearer"
"""The name of the demo's bearer token scheme in ``components.securitySchemes``."""

_PACKAGE = "swagger_ui"  # the import name of the PyPI package swagger-ui-py


def swagger_ui_assets() -> Path:
    """The folder of Swagger UI's distribution files inside the installed ``swagger-ui-py`` package.

    The package is located, never imported: its ``__init__`` loads web framework adapters the demo
    does not use.

    Returns:
        The folder holding ``swagger-ui-bundle.js``, ``swagger-ui.css`` and the icons.

    Raises:
        RuntimeError: ``swagger-ui-py`` is not installed (it comes with the ``demo`` extra).
    """
    spec = importlib.util.find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        folder = Path(location) / "static"
        if (folder / "swagger-ui-bundle.js").is_file():
            return folder
    msg = "the demo's API explorer needs swagger-ui-py: pip install 'litestar-listing[demo]'"
    raise RuntimeError(msg)


_PAGE = """<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{title}</title>
    <link rel="icon" type="image/png" href="{assets}/favicon-32x32.png">
    <link rel="stylesheet" href="{assets}/swagger-ui.css">
    <style>body {{ margin: 0 }}</style>
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="{assets}/swagger-ui-bundle.js"></script>
    <script>
{script}
    </script>
  </body>
</html>
"""

# Swagger UI (5.x, spec plugin) looks a parameter's state up by merging every parameter of the operation
# with it and keeping the match, for each parameter row on each render, and for each parameter when it
# reads the values to send: quadratic in the parameters. The flights list has 541 (every field times its
# operators); without this plugin "Execute" reports a request duration of about 52 s on two busy cores.
# parameterWithMetaByIdentity, operationWithMeta and parameterValues below return the same values: one
# lookup per parameter, and a parameter without a value or an error is returned as the document's own
# object, so that the memoised parameterRow renders only the rows whose inputs changed.
_SCRIPT = """
function FastParameterLookup(system) {
  const { List, Map, OrderedMap } = system.Im;
  // Each operation's parameters by "in.name", built once per (immutable) parameter list.
  const indexes = new WeakMap();
  function byIdentity(parameters) {
    let index = indexes.get(parameters);
    if (index === undefined) {
      index = new globalThis.Map(parameters.map((p) => [`${p.get("in")}.${p.get("name")}`, p]).toArray());
      indexes.set(parameters, index);
    }
    return index;
  }
  // Meta that changes nothing: none, or only an empty error list (Execute validates every parameter).
  function blank(meta) {
    const empty = (value, key) => key === "errors" && !(value && value.size);
    return meta === undefined || (Map.isMap(meta) && meta.every(empty));
  }
  function withMeta(state, pathMethod, param) {
    const spec = system.specSelectors.specJsonWithResolvedSubtrees();
    const parameters = spec.getIn(["paths", ...pathMethod, "parameters"], List());
    const key = `${param.get("in")}.${param.get("name")}`;
    const current = byIdentity(parameters).get(key);
    if (current === undefined) {
      return OrderedMap();
    }
    const meta = state.getIn(["meta", "paths", ...pathMethod, "parameters"], OrderedMap());
    const own = meta.get(key);
    const hashed = meta.get(`${key}.hash-${param.hashCode()}`);
    if (blank(own) && blank(hashed) && OrderedMap.isOrderedMap(current)) {
      // No value and no error: the parameter as the document has it (most of them), the same object
      // on each call, so that its row need not render again.
      return current;
    }
    return OrderedMap().merge(current, own, hashed);
  }
  function operationWithMeta(state, path, method) {
    const operation = system.specSelectors.specJsonWithResolvedSubtrees().getIn(["paths", path, method], OrderedMap());
    const meta = state.getIn(["meta", "paths", path, method], OrderedMap());
    const parameters = operation.get("parameters", List()).map((param) => withMeta(state, [path, method], param));
    return OrderedMap().merge(operation, meta).set("parameters", parameters);
  }
  function parameterValues(state, pathMethod, isXml) {
    const [path, method] = pathMethod || [];
    const parameters = operationWithMeta(state, path, method).get("parameters", List());
    return parameters.reduce((values, param) => {
      let value = isXml && param.get("in") === "body" ? param.get("value_xml") : param.get("value");
      if (List.isList(value)) {
        value = value.filter((item) => item !== "");
      }
      const where = param.get("in");
      const name = param.get("name");
      return values.set(where && name ? `${where}.${name}` : name, value);
    }, Map());
  }
  // A parameter row renders again only when one of its own inputs changed: Execute otherwise
  // re-renders every row of the operation (hundreds) while the request is under way.
  const { React, Im } = system;
  const steady = (key) => key === "fn" || key.startsWith("get") || key.endsWith("Selectors") || key.endsWith("Actions");
  function same(a, b) {
    if (Array.isArray(a) && Array.isArray(b)) {  // pathMethod: a new [path, method] on each render
      return a.length === b.length && a.every((item, i) => Im.is(item, b[i]));
    }
    return Im.is(a, b);
  }
  function sameRow(previous, next) {
    const keys = Object.keys(next);
    return keys.length === Object.keys(previous).length &&
      keys.every((key) => steady(key) || typeof next[key] === "function" || same(previous[key], next[key]));
  }
  return {
    wrapComponents: {
      parameterRow: (Original) => React.memo(Original, sameRow),
    },
    statePlugins: {
      spec: {
        wrapSelectors: {
          parameterWithMetaByIdentity: () => withMeta,
          operationWithMeta: () => operationWithMeta,
          parameterValues: () => parameterValues,
        },
      },
    },
  };
}

window.ui = SwaggerUIBundle({
  url: %(spec_url)s,
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayRequestDuration: true,
  persistAuthorization: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  plugins: [FastParameterLookup],
});
"""


class LocalSwaggerRenderPlugin(OpenAPIRenderPlugin):
    """Swagger UI whose files come from ``assets``, served by the OpenAPI router: no request leaves the server."""

    def __init__(self, assets: Path, *, path: str = "/swagger", assets_path: str = "/swagger-ui") -> None:
        """Serve the page at ``path`` and the files at ``assets_path``, both under the OpenAPI router.

        Args:
            assets: The folder of Swagger UI's distribution files (``swagger_ui_assets()``).
            path: The page's path below the OpenAPI router's (``SCHEMA_PATH``).
            assets_path: The files' path below the OpenAPI router's.
        """
        super().__init__(path=path)
        self.assets = assets
        self.assets_path = assets_path
        self.assets_url = f"{SCHEMA_PATH}{assets_path}"  # set from the OpenAPI router's path by receive_router

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        """The explorer page: Swagger UI loading the JSON document from this server.

        Args:
            request: The request for the page.
            openapi_schema: The OpenAPI document, for its title.

        Returns:
            The HTML page.
        """
        # json.dumps quotes the URL for JavaScript; "<\/" keeps a "</script>" inside it from ending the script.
        spec_url = json.dumps(self.get_openapi_json_route(request)).replace("</", "<\\/")
        page = _PAGE.format(
            title=html.escape(str(openapi_schema.get("info", {}).get("title", "API"))),
            assets=html.escape(self.assets_url),
            script=_SCRIPT % {"spec_url": spec_url},
        )
        return page.encode()

    def receive_router(self, router: Router) -> None:
        """Add the route of Swagger UI's files to the OpenAPI router, outside the schema."""
        self.assets_url = f"{router.path.rstrip('/')}{self.assets_path}"
        router.register(
            create_static_files_router(
                path=self.assets_path, directories=[self.assets], name="swagger-ui-assets", include_in_schema=False
            )
        )


def openapi_config(*, title: str = "litestar-listing demo", version: str = "1.0.0") -> OpenAPIConfig:
    """The demo's OpenAPI settings: the offline explorer, the JSON and YAML documents, the bearer scheme.

    Only pages that need no network are served: the CDN-based ReDoc, RapiDoc and Stoplight pages
    Litestar offers by default are left out.

    Args:
        title: ``info.title`` of the document, also the explorer's page title.
        version: ``info.version`` of the document.

    Returns:
        The configuration for ``Litestar(openapi_config=...)``: the explorer at ``SCHEMA_PATH`` and
        ``EXPLORER_PATH``, ``/schema/openapi.json``, ``/schema/openapi.yaml``.
    """
    bearer = SecurityScheme(
        type="http",
        scheme="bearer",
        description=(
            "A demo user's token, listed at / (demo-admin sees every airline; demo-ua, demo-aa and demo-dl "
            "see their own airline's flights and watch list). Optional: without it a request is anonymous; "
            "an unknown token is refused with 401."
        ),
    )
    return OpenAPIConfig(
        title=title,
        version=version,
        path=SCHEMA_PATH,
        components=Components(security_schemes={SECURITY_SCHEME: bearer}),
        # ``{}`` first: the token is optional (anonymous requests list the public flight data).
        security=[{}, {SECURITY_SCHEME: []}],
        render_plugins=[LocalSwaggerRenderPlugin(swagger_ui_assets()), JsonRenderPlugin(), YamlRenderPlugin()],
    )
