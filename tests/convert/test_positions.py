"""Findings point at the object's line, never the file's 1:1 where a better place is known."""

from __future__ import annotations

import re

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.pipeline.many_files import _collisions
from dra_migrate.pipeline.one_file import process
from dra_migrate.repo.roles import Role
from dra_migrate.report.model import FileResult, Status
from tests.conftest import FIXTURES

SETTINGS = Settings(target="v1", config=load_config(None))
CASES = FIXTURES / "convert"
# Findings about the file as a whole: it has no better place than its start.
FILE_LEVEL = {"DRA001", "DRA003", "DRA004", "DRA007"}
# a Helm chart's way, said once on its Chart.yaml: about the whole chart, not a line
CHART_LEVEL = {"DRA241", "DRA242", "DRA243", "DRA246", "DRA249"}
LINE = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+):(?P<col>\d+): (?P<code>DRA\d{3}) ")


def test_golden_findings_at_1_1_are_about_the_whole_file() -> None:
    seen = 0
    for findings in sorted(CASES.glob("*/findings.txt")):
        for text in findings.read_text(encoding="utf-8").splitlines():
            match = LINE.match(text)
            if not match:
                continue
            seen += 1
            at = (match["line"], match["col"])
            whole = FILE_LEVEL | (CHART_LEVEL if match["path"].endswith("Chart.yaml") else set())
            assert at != ("1", "1") or match["code"] in whole, f"{findings.parent.name}: {text}"
    assert seen > 40


OBJECT = """\
# an InferenceService on Knative: reported, left alone
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: whisper
spec:
  template:
    spec:
      containers:
      - image: example/whisper:1
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def test_a_finding_about_an_object_points_at_its_name() -> None:
    for text, name_line in ((OBJECT, 5), (OBJECT.split("\n", 1)[1], 4)):
        result = process("ksvc.yaml", text.encode(), Role(), SETTINGS)
        (knative,) = [f for f in result.findings if f.code == "DRA215"]
        assert (knative.line, knative.col) == (name_line, 9)


def test_a_finding_about_an_unnamed_object_points_at_its_kind() -> None:
    text = OBJECT.replace("  name: whisper\n", "  labels: {app: whisper}\n")
    result = process("ksvc.yaml", text.encode(), Role(), SETTINGS)
    (knative,) = [f for f in result.findings if f.code == "DRA215"]
    assert (knative.line, knative.col) == (3, 7)


def test_colliding_templates_point_at_the_workload_that_generates_them() -> None:
    def template(count: int) -> dict[str, object]:
        return {"metadata": {"name": "serve-gpu"}, "spec": {"count": count}}

    first = FileResult(
        "a.yaml", Status.CHANGED, templates=[template(1)], template_positions=[(7, 9)]
    )
    second = FileResult(
        "b.yaml", Status.CHANGED, templates=[template(2)], template_positions=[(12, 9)]
    )
    (collision,) = _collisions([first, second])
    assert collision.code == "DRA217"
    assert (collision.path, collision.line, collision.col) == ("b.yaml", 12, 9)
