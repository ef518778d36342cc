"""A Helm chart of a run and its way: the record the chart pass (dra_migrate/helm/)
fills in, that ``--verify-helm`` proves and ``report`` lists."""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True, slots=True)
class ChartPlan:
    """What the run makes of one Helm chart's sources (dra_migrate/helm/): the way, and
    what a rendering needs to show it (``convert --verify-helm``, ``report``)."""

    root: str  # the chart's folder, as the run shows paths
    name: str  # Chart.yaml name
    version: str  # Chart.yaml version
    way: str  # recipe, template, bridge, manual or done (migrated already)
    recipe: str = ""  # the recipe's name (way recipe)
    # (values key, value as YAML) a user sets to turn DRA on (the switch a template edit
    # adds, when it is off by default); empty when the change is on by itself
    set_keys: tuple[tuple[str, str], ...] = ()
    count_keys: tuple[str, ...] = ()  # values keys that hold GPU counts
    switch: str = ""  # the values key of the switch a template edit adds ("": none)
    switch_on: bool = False  # the switch's default in values.yaml
    values_overlay: str = ""  # values-dra.yaml a rendering after adds (-f), as shown; ""
    compare: str = "exact"  # exact: objects as convert writes them; claims: what is allocated
    files: tuple[str, ...] = ()  # the chart's files the way changes or creates, as shown
    codes: tuple[str, ...] = ()  # the codes of the findings that say why (manual, bridge)
    # manifests of the way applied beside the release (a recipe's ResourceClaimTemplates
    # the chart cannot render), as shown: the proof adds them to the rendering after
    applied: tuple[str, ...] = ()
    # values keys that turn GPUs on, off in the chart's values (set at install time): the
    # proof renders a variant with each set to true
    enable_keys: tuple[str, ...] = ()

    @property
    def shown_way(self) -> str:
        """The way as the tables show it: the recipe's name with a recipe."""
        return f"recipe {self.recipe}" if self.recipe else self.way

    @property
    def to_set(self) -> str:
        """What a user sets to turn DRA on, as helm's ``--set`` and ``-f`` say it."""
        keys = [f"{k}={v}" for k, v in self.set_keys]
        if self.values_overlay:
            keys.append(f"-f {self.values_overlay}")
        return ", ".join(keys)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "name": self.name,
            "version": self.version,
            "way": self.way,
            "recipe": self.recipe,
            "setKeys": [{"key": k, "value": v} for k, v in self.set_keys],
            "countKeys": list(self.count_keys),
            "switch": self.switch,
            "switchOn": self.switch_on,
            "valuesOverlay": self.values_overlay,
            "files": list(self.files),
            "codes": list(self.codes),
            "applied": list(self.applied),
            "enableKeys": list(self.enable_keys),
        }
