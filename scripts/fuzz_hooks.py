"""Schemathesis hooks of ``scripts/fuzz.py``, loaded through ``SCHEMATHESIS_HOOKS``.

- ``litestar_error_shape``: a custom check, every 4xx answer is Litestar's error body,
  ``{"status_code", "detail", "extra": [{"key", "message", "source"}]}``; a 400 names in ``extra``
  only parameters the request sent.
- ``before_call``: requests carry one of the demo's bearer tokens or none, picked from a hash of
  the query (so a replay sends the same). ``watched-flights`` always gets a token: without one it
  only ever answers 401.
- ``after_call``/``after_network_error``: count every request sent, by operation, status, generation
  mode and phase, and the reasons of 400s to data generated as valid; written as JSON to
  ``$LISTING_FUZZ_STATS`` when the run ends.
- ``filter_failure``: drops a "schema-violating request accepted" (``negative_data_rejection``) whose
  every sent value is valid as documented: a filter repeated, or one value of a list parameter.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import math
import os
import re
import threading
from collections import Counter
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jsonschema_rs  # schemathesis' own validator
import requests
import schemathesis
from schemathesis import Case as AnyCase
from schemathesis import CheckContext, HookContext, Response

from litestar_listing.demo.data import TOKENS

_ERROR_KEYS = frozenset({"status_code", "detail", "extra"})
_EXTRA_KEYS = frozenset({"key", "message", "source"})
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_SCOPED_PATH = "/watched-flights"
_STATS_PATH = os.environ.get("LISTING_FUZZ_STATS")

Case = AnyCase[Any]
_lock = threading.Lock()
_requests: Counter[str] = Counter()
_statuses: Counter[str] = Counter()
_modes: Counter[str] = Counter()
_phases: Counter[str] = Counter()
_operations: Counter[str] = Counter()
_valid_rejected: Counter[str] = Counter()
_valid_rejected_examples: dict[str, str] = {}
_network_errors: Counter[str] = Counter()


def _error_shape_problems(body: Any, status: int, sent: set[str]) -> list[str]:
    if not isinstance(body, dict):
        return [f"the body is {type(body).__name__}, not an object"]
    problems = [f"unexpected member {key!r}" for key in sorted(set(body) - _ERROR_KEYS)]
    code = body.get("status_code")
    if type(code) is not int or code != status:
        problems.append(f"status_code is {code!r}, the response's status is {status}")
    detail = body.get("detail")
    if not isinstance(detail, str) or not detail:
        problems.append(f"detail is {detail!r}, not a non-empty string")
    if "extra" not in body:
        if status == 400:
            problems.append("a 400 without 'extra' (every bad parameter must be listed)")
        return problems
    extra = body["extra"]
    if not isinstance(extra, list) or (status == 400 and not extra):
        return [*problems, f"extra is {extra!r}, not a non-empty list"]
    for position, item in enumerate(extra):
        if not isinstance(item, dict) or set(item) != _EXTRA_KEYS:
            problems.append(f"extra[{position}] is {item!r}, not {{key, message, source}}")
            continue
        if not all(isinstance(item[key], str) for key in _EXTRA_KEYS) or not item["message"]:
            problems.append(f"extra[{position}] has a non-text member or an empty message: {item!r}")
        elif status == 400 and (item["source"] != "query" or item["key"] not in sent):
            # ``key`` is the name as sent, which may be empty (``?=x``), never one that was not sent.
            problems.append(f"extra[{position}] names {item['key']!r} ({item['source']}), not a parameter sent")
    return problems


def _sent_parameters(response: Response) -> set[str]:
    query = urlsplit(str(response.request.url)).query
    return {name for name, _ in parse_qsl(query, keep_blank_values=True)}


@schemathesis.check
def litestar_error_shape(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """Every 4xx is Litestar's error body; a 400 lists in ``extra`` only query parameters that were sent."""
    del ctx, case
    status = response.status_code
    if not 400 <= status < 500:
        return None
    content_type = [
        value for name, values in response.headers.items() if name.lower() == "content-type" for value in values
    ]
    if not any(value.startswith("application/json") for value in content_type):
        msg = f"a {status} answered with content-type {content_type!r}, not Litestar's JSON error body"
        raise AssertionError(msg)
    try:
        body = json.loads(response.content)
    except ValueError as error:
        msg = f"a {status} whose body is not JSON: {error}"
        raise AssertionError(msg) from None
    problems = _error_shape_problems(body, status, _sent_parameters(response))
    if problems:
        msg = f"a {status} outside Litestar's error shape: " + "; ".join(problems)
        raise AssertionError(msg)
    return None


def _token_for(case: Case) -> str | None:
    scoped = case.operation.path.endswith(_SCOPED_PATH)
    choices: list[str | None] = [*sorted(TOKENS)] if scoped else [None, *sorted(TOKENS)]
    query = sorted((str(key), repr(value)) for key, value in (case.query or {}).items())
    digest = hashlib.blake2b(repr((case.operation.path, query)).encode(), digest_size=2).digest()
    return choices[int.from_bytes(digest, "big") % len(choices)]


@schemathesis.hook
def before_call(context: HookContext, case: Case, kwargs: dict[str, Any]) -> None:
    """Send one of the demo's bearer tokens, or none (always a token on watched-flights)."""
    del context, kwargs
    token = _token_for(case)
    if token is not None:
        case.headers["Authorization"] = f"Bearer {token}"


def _reasons(response: Response) -> list[tuple[str, str]]:
    """``(rule, parameter)`` per entry of a 400's ``extra``; values in the message are masked."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return [("(not JSON)", "")]
    extra = body.get("extra") if isinstance(body, dict) else None
    if not isinstance(extra, list) or not extra:
        return [(str(body.get("detail") if isinstance(body, dict) else body)[:120], "")]
    return [
        (_QUOTED.sub("'…'", str(item.get("message", ""))), str(item.get("key", "")))
        if isinstance(item, dict)
        else (str(item)[:120], "")
        for item in extra
    ]


@schemathesis.hook
def after_call(context: HookContext, case: Case, response: Response) -> None:
    """Count the request; remember why a 400 rejected data generated as valid."""
    del context
    meta = case.meta
    mode = meta.generation.mode.value if meta is not None else "unknown"
    phase = meta.phase.name.value if meta is not None else "unknown"
    status = response.status_code
    reasons = _reasons(response) if status == 400 and mode == "positive" else []
    with _lock:
        _requests["sent"] += 1
        _statuses[f"{status // 100}xx"] += 1
        _statuses[str(status)] += 1
        _modes[mode] += 1
        _phases[phase] += 1
        _operations[case.operation.label] += 1
        for rule, key in reasons:
            _valid_rejected[rule] += 1
            _valid_rejected_examples.setdefault(rule, f"{key!r} in {str(response.request.url)[:400]}")


def _resolved(schema: Any, document: dict[str, Any]) -> Any:
    """``schema`` with its local ``$ref``s (``#/components/...``) replaced by what they name."""
    if isinstance(schema, list):
        return [_resolved(item, document) for item in schema]
    if not isinstance(schema, dict):
        return schema
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/"):
        target: Any = document
        for part in reference[2:].split("/"):
            target = target[part]
        return _resolved(target, document)
    return {key: _resolved(value, document) for key, value in schema.items()}


def _as_schema_value(text: str, schema: dict[str, Any]) -> Any:
    """``text`` as the JSON value of ``schema``'s type (a number for ``number``...), None when it is not one."""
    kind = schema.get("type")
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return number if math.isfinite(number) else None
    except ValueError:
        return None
    if kind == "boolean":
        return {"true": True, "false": False}.get(text)
    return text


def _fits(text: str, schema: dict[str, Any], *, empty: bool) -> bool:
    if empty and text == "":
        return True
    value = _as_schema_value(text, schema)
    return value is not None and jsonschema_rs.is_valid(schema, value)


def _declared(operation: dict[str, Any], document: dict[str, Any]) -> dict[str, tuple[dict[str, Any], Any]]:
    """Each query key the operation declares: its parameter and its (resolved) schema.

    An object parameter in form style, exploded (the listing's ``filters``), declares one key per
    property: ``manufacturer__gt`` is the property of ``filters``, not a parameter of its own.
    """
    keys: dict[str, tuple[dict[str, Any], Any]] = {}
    for parameter in operation.get("parameters", []):
        if parameter.get("in") != "query":
            continue
        schema = _resolved(parameter.get("schema", {}), document)
        if schema.get("type") == "object" and parameter.get("explode", True):
            for key, value in schema.get("properties", {}).items():
                keys[key] = (parameter, value)
        else:
            keys[parameter["name"]] = (parameter, schema)
    return keys


def _valid_as_documented(case: Case, response: Response) -> bool:
    """Whether every query parameter the request sent is valid as the listing documents its parameters.

    The schema of a filter describes one value, and the operation's description says a filter may be
    repeated for several values (``origin=JFK&origin=LGA``); a parameter whose schema is an array
    (``precip__in``) takes its values repeated or one value alone, unless it is not exploded
    (``lon__between=low,high``): then one value holds the list. Schemathesis' negative mode makes
    such requests among others (a scalar given as an object is sent as repeated values); a request
    whose every value fits its schema this way is valid, and accepting it is right.
    """
    document = case.operation.schema.raw_schema
    operation = document["paths"][case.operation.path][case.operation.method.lower()]
    declared = _declared(operation, document)
    query = urlsplit(str(response.request.url)).query
    for name, text in parse_qsl(query, keep_blank_values=True):
        if name not in declared:
            return False
        parameter, schema = declared[name]
        if schema.get("type") == "array" and parameter.get("explode") is False:
            # One value holds the whole list, comma-separated (``lon__between=low,high``).
            if not _fits_list(text.split(","), schema):
                return False
            continue
        if schema.get("type") == "array":
            schema = schema.get("items", {})
        if not _fits(text, schema, empty=bool(parameter.get("allowEmptyValue"))):
            return False
    return True


def _fits_list(parts: list[str], schema: dict[str, Any]) -> bool:
    """Whether ``parts``, each read as an item of the array ``schema``, make an array ``schema`` admits."""
    values = [_as_schema_value(part, schema.get("items", {})) for part in parts]
    return None not in values and jsonschema_rs.is_valid(schema, values)


@schemathesis.hook
def filter_failure(context: HookContext, failure: Any, case: Case, response: Response) -> bool:
    """Keep every failure but an accepted "schema-violating" request that is valid as documented.

    ``negative_data_rejection`` (ST201) flagged ``weather?origin=«&origin=Ñ&precip__in=8.5``: a filter
    repeated, and one value for a list, both of which the listing accepts by design
    (``_valid_as_documented``). Any other accepted negative request stays a failure, as does one
    with a parameter the operation does not declare.
    """
    del context
    if getattr(failure, "code", None) != "ST201":
        return True
    try:
        return not _valid_as_documented(case, response)
    except (KeyError, TypeError, ValueError):  # a shape this check does not know: keep the failure
        return True


@schemathesis.hook
def after_network_error(context: HookContext, case: Case, request: requests.PreparedRequest) -> None:
    """Count a request that got no answer (timeout, connection refused)."""
    del context
    with _lock:
        _requests["sent"] += 1
        _network_errors[f"{case.operation.label}: {str(request.url)[:300]}"] += 1


def _write_stats() -> None:
    if not _STATS_PATH:
        return
    with _lock:
        stats = {
            "requests": _requests["sent"],
            "statuses": dict(_statuses),
            "modes": dict(_modes),
            "phases": dict(_phases),
            "operations": dict(_operations),
            "valid_rejected": dict(_valid_rejected.most_common()),
            "valid_rejected_examples": dict(_valid_rejected_examples),
            "network_errors": dict(_network_errors),
        }
    with open(_STATS_PATH, "w", encoding="utf-8") as sink:  # noqa: PTH123 - at exit, keep it minimal
        json.dump(stats, sink, indent=1)


atexit.register(_write_stats)
