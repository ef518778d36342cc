"""Measurement: cel-python with dra-migrate's layer against cel-expr-python (CEL C++).

Runs the upstream-derived table tests/fixtures/upstream/upstream_cel.yaml through both
engines and prints how many compile verdicts and evaluation results agree with
Kubernetes, and the time each takes per evaluation. cel-expr-python is given
what it has: its checker, the strings, optional and bindings extensions, and a
``device`` variable of type map(string, dyn); the Kubernetes libraries
(semver, quantity, ip, cidr, url, sets, regex, lists) and two-variable
comprehensions it does not have would be our own code on top of it. Quoted in
docs/validate.md ("The CEL engine").

    pip install cel-expr-python
    PYTHONPATH=. python benchmarks/cel_engines.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import yaml

from dra_migrate import cel

TABLE = (
    Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "upstream" / "upstream_cel.yaml"
)
API_CODES = {"syntax", "too-long", "not-bool", "too-complex", "undeclared", "unknown-function"}
API_CODES |= {"unknown-field", "type"}


def ours(case: dict[str, Any], device: cel.Device) -> tuple[str, str]:
    problems = cel.check_selector(case["expression"])
    compiled = (
        "error" if any(p.code in API_CODES and p.severity == "error" for p in problems) else "ok"
    )
    try:
        result = "true" if cel.evaluate_selector(case["expression"], device) else "false"
    except cel.CelEvaluationError:
        result = "error"
    return compiled, result


def device_of(case: dict[str, Any]) -> cel.Device:
    driver = case.get("driver", "dra.example.com")
    slice_ = {
        "kind": "ResourceSlice",
        "spec": {
            "driver": driver,
            "devices": [
                {
                    "name": "d",
                    "attributes": case.get("attributes") or {},
                    "capacity": case.get("capacity") or {},
                }
            ],
        },
    }
    return cel.devices_from_resource_slices([slice_], default_driver=driver)[0]


def main() -> int:
    try:
        from cel_expr_python import cel as cx  # type: ignore[import-not-found]
        from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings  # type: ignore[import-not-found]
    except ImportError:
        print("cel-expr-python is not installed: pip install cel-expr-python")
        return 2
    env = cx.NewEnv(
        variables={"device": cx.Type.Map(cx.Type.STRING, cx.Type.DYN)},
        extensions=[
            ext_strings.ExtStrings(),
            ext_optional.ExtOptional(),
            ext_bindings.ExtBindings(),
        ],
    )
    cases = yaml.safe_load(TABLE.read_text(encoding="utf-8"))["cases"]
    tally = {"ours": [0, 0], "cel-expr-python": [0, 0]}
    evaluated = 0
    times = {"ours": 0.0, "cel-expr-python": 0.0}
    for case in cases:
        device = device_of(case)
        start = time.perf_counter()
        compiled, result = ours(case, device)
        times["ours"] += time.perf_counter() - start
        expected_result = str(case.get("match", "")).lower()
        tally["ours"][0] += compiled == case["compile"]
        start = time.perf_counter()
        try:
            program = env.compile(case["expression"])
            their_compile = "ok"
        except Exception:
            program, their_compile = None, "error"
        their_result = "error"
        if program is not None:
            data = {
                "device": {
                    "driver": device.driver,
                    "attributes": {
                        d: {
                            n: v if isinstance(v, (str, int, bool)) else str(v)
                            for n, v in names.items()
                        }
                        for d, names in device.attributes.items()
                    },
                    "capacity": {d: dict(names) for d, names in device.capacity.items()},
                }
            }
            try:
                value = program.eval(data=data).value()
                their_result = "true" if value is True else "false" if value is False else "error"
            except Exception:
                their_result = "error"
        times["cel-expr-python"] += time.perf_counter() - start
        tally["cel-expr-python"][0] += their_compile == case["compile"]
        if case["compile"] == "ok":
            evaluated += 1
            tally["ours"][1] += result == expected_result
            tally["cel-expr-python"][1] += their_result == expected_result
    print(
        f"{len(cases)} compile cases, {evaluated} evaluation cases (tests/fixtures/upstream/upstream_cel.yaml)"
    )
    for engine, (comp, ev) in tally.items():
        print(
            f"  {engine:16} compile {100 * comp / len(cases):5.1f} %   evaluation "
            f"{100 * ev / evaluated:5.1f} %   {1000 * times[engine] / len(cases):.2f} ms a case"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
