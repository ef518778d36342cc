"""The configuration file against its JSON Schema (``schemas/config.schema.json``), by
jsonschema: the first error at its line and column, an unknown key with the key it may
be a typo of. A valid file's verdict is kept for its bytes, so a run whose
configuration did not change imports no jsonschema (``schemas.kept_check``)."""

from __future__ import annotations

import functools
import json

from dra_migrate.package_data import schema_path
from dra_migrate.report.findings import ConfigError

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

    from yaml.nodes import Node


def check_schema(data: dict[str, Any], root: Node, display: str, raw: bytes) -> None:
    """The file against the configuration schema, by jsonschema; ConfigError at the
    first error's line. A valid file's verdict is kept for its bytes
    (``schemas.kept_check``): the configuration is read on every run."""
    from dra_migrate.k8s import schemas
    from dra_migrate.manifests import trees

    def check() -> list[Any]:
        return sorted(
            _config_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path))
        )

    errors = schemas.kept_check(schema_path("config.schema.json"), raw, check)
    if not errors:
        return
    error = errors[0]
    if error.validator in ("anyOf", "oneOf"):  # a value of two shapes: the mapping's
        # unknown key, if any, says more than "not valid under any of the given schemas"
        error = next((e for e in error.context if _unknown_key(e) is not None), error)
    node = trees.node_at(root, tuple(error.absolute_path))
    where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    message = error.message
    unknown = _unknown_key(error)
    if unknown is not None:  # at the key itself, with the key it may be a typo of
        import difflib  # only for a configuration with an unknown key

        key, known = unknown
        node = next((k for name, k, _v in trees.entries(node) if name == key), node)
        close = difflib.get_close_matches(key, known, n=1)
        message = f"unknown key {key!r}" + (
            f": did you mean {close[0]!r}?"
            if close
            else f" (the keys here: {', '.join(sorted(known))})"
        )
    line, col = trees.position(node)
    raise ConfigError(f"invalid configuration at {where}: {message}", display, line, col)


def _unknown_key(error: Any) -> tuple[str, list[str]] | None:
    """(the first unknown key, the keys the schema knows there) of a jsonschema error
    of ``additionalProperties: false``; None for any other error. The known keys are
    the schema's own at that level, so every key it gains is offered as it is added."""
    if error.validator != "additionalProperties" or error.validator_value is not False:
        return None
    known = list(error.schema.get("properties") or ())
    if not isinstance(error.instance, dict):
        return None
    extra = [k for k in error.instance if k not in known]
    return (str(extra[0]), known) if extra else None


@functools.cache
def _config_validator() -> Any:
    """jsonschema's validator for the configuration schema (draft 7), built once a run."""
    from jsonschema import validators

    with open(schema_path("config.schema.json"), encoding="utf-8") as handle:
        schema = json.load(handle)
    return validators.validator_for(schema)(schema)
