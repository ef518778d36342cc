"""Values as the recipes read them (``recipes.py``): a dotted key as a path, the value
at a path, Helm's truth, and the toleration a recipe writes into a pod's values.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from dra_migrate.convert.mapping import Settings

Path = tuple[str | int, ...]


def key(text: str) -> Path:
    return tuple(text.split("."))


def get(values: Any, path: Path, default: Any = None) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(values, list) or not 0 <= step < len(values):
                return default
        elif not isinstance(values, dict) or step not in values:
            return default
        values = values[step]
    return values


def truthy(value: Any) -> bool:
    """Helm's truth (Go templates' ``if``): empty, zero, false and nil are false."""
    return value not in (None, False, 0, "", [], {})


# what convert writes for a pod that no longer asks for the extended resource
# (convert/controllers.py extended_resource_toleration, DRA224): the toleration the
# ExtendedResourceToleration admission plugin gave it, unless the pod tolerates it already
def tolerates(tolerations: Any, resource: str) -> bool:
    from dra_migrate.convert.controllers import TOLERATION_EFFECT

    for toleration in tolerations if isinstance(tolerations, list) else []:
        if not isinstance(toleration, dict):
            continue
        key = toleration.get("key") or ""
        operator = toleration.get("operator") or "Equal"
        effect = toleration.get("effect") or ""
        if operator == "Exists" and key in ("", resource) and effect in ("", TOLERATION_EFFECT):
            return True
    return False


def toleration(
    data: Mapping[str, Any], values: Any, settings: Settings, resource: str, base: Path = ()
) -> list[tuple[Path, Any]]:
    """The values set that gives the pod the toleration convert writes (DRA224): the
    recipe's ``tolerate.key`` under ``base`` (the role's or group's path; the values
    list the pod's tolerations come from) extended, unless the chart writes one itself (``tolerate.chart``: when its type key
    is one of ``types``) or the list tolerates the resource already."""
    from dra_migrate.convert.controllers import TOLERATION_EFFECT, TOLERATION_OPERATOR

    spec = data.get("tolerate")
    if not spec or not settings.config.extended_resource_toleration:
        return []
    own = spec.get("chart")
    if own and str(get(values, key(own["type_key"])) or "") in own["types"]:
        return []
    path = (*base, *key(spec["key"]))
    have = get(values, path)
    if tolerates(have, resource):
        return []
    added = {"key": resource, "operator": TOLERATION_OPERATOR, "effect": TOLERATION_EFFECT}
    return [(path, [*(have if isinstance(have, list) else []), added])]
