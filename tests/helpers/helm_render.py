"""A chart's migration proven with the real helm: render before and after, compare.

- ``render``: ``helm template NAME CHART [-f values] [--set k=v]...``, the output bytes;
- ``converted``: a rendering converted as ``dra-migrate convert -`` converts it;
- ``difference``: the first difference between two renderings object by object, the
  names of generated ResourceClaimTemplates aside (each named by the claims that refer
  to it, as ``convert --verify-builds`` compares kustomize builds), and null values read
  as absent (``limits:`` that renders empty is no limits to the API server); "" when
  none.

``convert --verify-helm`` may reuse these or replace them; the tests of every way do.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from dra_migrate.convert.mapping import Settings, load_config

RELEASE = "rel"


def render(helm: Path, chart: Path, values: list[Path] = (), sets: list[str] = ()) -> bytes:  # type: ignore[assignment]
    """The chart rendered; a failing render fails the test with helm's error."""
    args = [str(helm), "template", RELEASE, str(chart)]
    for v in values:
        args += ["-f", str(v)]
    for s in sets:
        args += ["--set", s]
    done = subprocess.run(args, capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def converted(rendered: bytes, settings: Settings | None = None) -> bytes:
    """The rendering converted as ``dra-migrate convert -`` would convert it."""
    from dra_migrate.pipeline.one_file import process
    from dra_migrate.repo.roles import Role
    from dra_migrate.report.model import Status

    settings = settings or Settings(target="v1", config=load_config(None))
    result = process("helm template", rendered, Role(), settings)
    if result.status is Status.CHANGED and result.converted is not None:
        return result.converted
    return rendered


def difference(expected: bytes, actual: bytes) -> str:
    """The first difference between two renderings, generated names and nulls aside."""
    from dra_migrate.pipeline import builds

    return builds.difference(_without_nulls(expected), _without_nulls(actual))


def _without_nulls(data: bytes) -> bytes:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs = [_drop(d) for d in yaml.load_all(data, Loader=loader) if isinstance(d, dict)]
    return yaml.safe_dump_all(docs).encode()


def _drop(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop(v) for v in value]
    return value
