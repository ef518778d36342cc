"""``strategy:`` in the configuration: read as written, and a mistake reported at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_migrate.convert.mapping import StrategyConfig, load_config
from dra_migrate.migration import strategy
from dra_migrate.report.findings import ConfigError
from dra_migrate.report.model import InventoryItem

FULL = """\
strategy:
  default: auto
  resources:
    nvidia.com/mig-*: rewrite
  paths:
    legacy/**: bridge
  workloads:
    Deployment/ml-*/chat-*: rewrite
    Job/render: bridge
  deviceClasses: platform/deviceclasses.yaml
"""


def test_the_strategy_is_read_in_the_order_written(tmp_path: Path) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text(FULL)
    chosen = load_config(tmp_path / ".dra-migrate.yaml").strategy
    assert chosen.default == "auto"
    assert chosen.resources == (("nvidia.com/mig-*", "rewrite"),)
    assert chosen.paths == (("legacy/**", "bridge"),)
    assert chosen.workloads == (("Deployment/ml-*/chat-*", "rewrite"), ("Job/render", "bridge"))
    assert chosen.folder == str(tmp_path.resolve())
    assert chosen.device_classes == str(tmp_path.resolve() / "platform" / "deviceclasses.yaml")


def test_a_name_alone_is_the_default(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("strategy: bridge\n")
    assert load_config(tmp_path / "c.yaml").strategy == StrategyConfig(default="bridge")
    assert load_config(None).strategy == StrategyConfig()  # built-ins: rewrite


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "strategy:\n  resources:\n    nvidia.com/gpu: brige\n",
            "3:21: invalid configuration at strategy.resources.nvidia.com/gpu: 'brige' is not "
            "one of ['rewrite', 'bridge', 'auto']",
        ),
        (
            "strategy:\n  defualt: auto\n",
            "2:3: invalid configuration at strategy: unknown key 'defualt': did you mean "
            "'default'?",
        ),
        (
            "strategy: sometimes\n",
            "1:11: invalid configuration at strategy: 'sometimes' is not one of ['rewrite', "
            "'bridge', 'auto']",
        ),
        (
            "strategy:\n  workloads:\n    Deployment: rewrite\n",
            "3:17: invalid configuration at strategy.workloads.Deployment: 'Deployment' is not "
            "Kind/namespace/name or Kind/name (globs allowed, e.g. Deployment/ml-*/chat-*)",
        ),
        (
            "strategy:\n  workloads:\n    Deployment//x: rewrite\n",
            "3:20: invalid configuration at strategy.workloads.Deployment//x: 'Deployment//x' "
            "is not Kind/namespace/name or Kind/name (globs allowed, e.g. Deployment/ml-*/chat-*)",
        ),
        (
            "strategy:\n  deviceClasses: ''\n",
            "2:18: invalid configuration at strategy.deviceClasses: '' should be non-empty",
        ),
    ],
    ids=["value", "unknown-key", "name", "workload", "empty-namespace", "empty-file"],
)
def test_strategy_mistakes_name_the_key_at_its_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / ".dra-migrate.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert f"{raised.value.line}:{raised.value.col}: {raised.value}" == expected


def _row(path: str, resource: str = "nvidia.com/gpu", **where: str | None) -> InventoryItem:
    place = {"kind": "Deployment", "namespace": "ml-serving", "name": "chat-vllm", **where}
    return InventoryItem(
        path=path,
        line=1,
        col=1,
        api_version="apps/v1",
        kind=place["kind"] or "",
        namespace=place["namespace"],
        name=place["name"] or "",
        pod_path="spec.template.spec",
        container="c",
        role="app",
        resource=resource,
        count=1,
        value="1",
        device_class="gpu.nvidia.com",
    )


def test_overrides_beat_the_flag_and_the_flag_beats_the_default(tmp_path: Path) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text(FULL)
    chosen = load_config(tmp_path / ".dra-migrate.yaml").strategy
    app = str(tmp_path / "apps" / "serve.yaml")
    legacy = str(tmp_path / "legacy" / "old.yaml")
    # a workload override beats --strategy bridge, and the path override beats it too
    assert strategy.asked(chosen, "bridge", [_row(app)]).strategy == "rewrite"
    assert "strategy.workloads" in strategy.asked(chosen, "bridge", [_row(app)]).source
    assert strategy.asked(chosen, "rewrite", [_row(legacy, name="x")]).strategy == "bridge"
    # Kind/name: in any namespace; the resource override beats the flag
    render = _row(app, kind="Job", name="render", namespace="media")
    assert strategy.asked(chosen, "rewrite", [render]).strategy == "bridge"
    mig = _row(app, "nvidia.com/mig-1g.10gb", name="nb")
    assert strategy.asked(chosen, "bridge", [mig]).strategy == "rewrite"
    # nothing matches: the flag, else the configuration's default
    other = _row(app, name="other")
    assert strategy.asked(chosen, "bridge", [other]).strategy == "bridge"
    assert strategy.asked(chosen, None, [other]).strategy == "auto"
    assert strategy.asked(StrategyConfig(), None, [other]).strategy == "rewrite"
    # one pod spec, two names that ask for different strategies: rewritten whole
    assert strategy.asked(chosen, "bridge", [other, mig]).strategy == "rewrite"


def test_only_a_strategy_that_may_bridge_reads_bridges() -> None:
    assert not StrategyConfig().may_bridge(None)
    assert not StrategyConfig().may_bridge("rewrite")
    assert StrategyConfig().may_bridge("auto")
    assert StrategyConfig(workloads=(("Job/x", "bridge"),)).may_bridge("rewrite")
    assert not StrategyConfig(default="bridge", paths=(("*", "rewrite"),)).may_bridge("rewrite")
