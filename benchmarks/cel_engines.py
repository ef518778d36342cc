"""Measurement: cel-python with dra-migrate's layer against cel-expr-python (CEL C++).

Runs the upstream-derived table tests/fixtures/upstream/upstream_cel.yaml through both
engines and prints how many compile verdicts and evaluation results agree with
Kubernetes, and the time each takes per evaluation. cel-expr-python is given
what it has: its checker, the strings, optional and bindings extensions, and a
``device`` variable of type map(string, dyn), plus the Kubernetes library
functions that Python can register with it (``FunctionDecl`` with a Python
``impl``): those over CEL's own types, ``isSemver``, ``isQuantity``, ``isIP``,
``isCIDR`` and ``isURL``, implemented by dra-migrate's own code. The functions
that make or take the libraries' own values (``quantity()``, ``semver()``,
``ip()``, ``cidr()``, ``url()``, ``format.*``) cannot be registered:
``library_values()`` tries and prints why. Quoted in docs/validate.md ("The CEL
engine").

    pip install cel-expr-python
The evaluation tests of tests/cel/test_cel.py (``test_evaluate``, ``test_evaluate_errors``,
on its A100 device) are run through both engines too.

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


def _accepts(parse: Any) -> Any:
    """A predicate over strings: True where ``parse`` does not raise ValueError."""

    def test(text: str, *rest: Any) -> bool:
        try:
            parse(text, *rest)
        except ValueError:
            return False
        return True

    return test


def predicates(cx: Any) -> list[Any]:
    """The Kubernetes library functions over CEL's own types, as cel-expr-python
    declarations whose implementations are dra-migrate's."""
    from dra_migrate.cel.values import CIDRValue, SemVer, URLValue, _parse_ip, is_quantity

    one = {"isQuantity": is_quantity, "isIP": _accepts(_parse_ip)}
    one |= {"isCIDR": _accepts(CIDRValue.parse), "isURL": _accepts(URLValue.parse)}
    decls = [
        cx.FunctionDecl(
            name, [cx.Overload(f"{name}_string", cx.Type.BOOL, [cx.Type.STRING], impl=f)]
        )
        for name, f in one.items()
    ]
    semver = _accepts(SemVer.parse)
    overloads = [
        cx.Overload("isSemver_string", cx.Type.BOOL, [cx.Type.STRING], impl=semver),
        cx.Overload(
            "isSemver_string_bool", cx.Type.BOOL, [cx.Type.STRING, cx.Type.BOOL], impl=semver
        ),
    ]
    return [*decls, cx.FunctionDecl("isSemver", overloads)]


def library_values(cx: Any) -> list[str]:
    """What cel-expr-python answers when a Python function makes a value of one of the
    Kubernetes libraries' types: as an abstract (opaque) type, and as dyn."""
    from dra_migrate.cel import parse_quantity

    answers = []
    for label, result in (
        ("kubernetes.Quantity (AbstractType)", cx.Type.AbstractType("kubernetes.Quantity")),
        ("dyn", cx.Type.DYN),
    ):
        quantity = cx.Overload("quantity_string", result, [cx.Type.STRING], impl=parse_quantity)
        try:
            env = cx.NewEnv(functions=[cx.FunctionDecl("quantity", [quantity])])
            env.compile("quantity('40Gi') == quantity('40Gi')").eval()
            answers.append(f"quantity() as {label}: works")
        except Exception as exc:
            answers.append(f"quantity() as {label}: {exc}")
    return answers


def environment(cx: Any) -> Any:
    """cel-expr-python's environment for device selectors: a ``device`` map, the
    strings, optional and bindings extensions, and :func:`predicates`."""
    from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings  # type: ignore[import-not-found]

    return cx.NewEnv(
        variables={"device": cx.Type.Map(cx.Type.STRING, cx.Type.DYN)},
        extensions=[
            ext_strings.ExtStrings(),
            ext_optional.ExtOptional(),
            ext_bindings.ExtBindings(),
        ],
        functions=predicates(cx),
    )


def device_data(device: cel.Device) -> dict[str, Any]:
    """``device`` as cel-expr-python's data: versions as strings (it has no semver type)."""
    return {
        "device": {
            "driver": device.driver,
            "attributes": {
                d: {n: v if isinstance(v, (str, int, bool)) else str(v) for n, v in names.items()}
                for d, names in device.attributes.items()
            },
            "capacity": {d: dict(names) for d, names in device.capacity.items()},
        }
    }


def unit_cases() -> tuple[cel.Device, list[tuple[str, str]]]:
    """The A100 device of tests/cel/test_cel.py, and its evaluation tests' expressions
    with the result each expects ("true", "false" or "error")."""
    from tests.cel import test_cel

    cases = [(e, str(bool(x)).lower()) for e, x in test_cel.test_evaluate.pytestmark[0].args[1]]
    cases += [(e, "error") for e, _ in test_cel.test_evaluate_errors.pytestmark[0].args[1]]
    return test_cel.a100.__wrapped__(), cases


def theirs(env: Any, expression: str, device: cel.Device) -> tuple[str, str]:
    """cel-expr-python's compile verdict and result of ``expression`` on ``device``."""
    try:
        program = env.compile(expression)
    except Exception:
        return "error", "error"
    try:
        value = program.eval(data=device_data(device)).value()
    except Exception:
        return "ok", "error"
    return "ok", "true" if value is True else "false" if value is False else "error"


def unit_agreement(env: Any) -> None:
    device, cases = unit_cases()
    ours_agree = their_agree = 0
    for expression, expected in cases:
        try:
            result = "true" if cel.evaluate_selector(expression, device) else "false"
        except cel.CelEvaluationError:
            result = "error"
        ours_agree += result == expected
        their_agree += theirs(env, expression, device)[1] == expected
    print(f"{len(cases)} evaluation tests of tests/cel/test_cel.py (its A100 device)")
    for engine, agree in (("ours", ours_agree), ("cel-expr-python", their_agree)):
        print(f"  {engine:16} evaluation {100 * agree / len(cases):5.1f} %  ({agree})")


def main() -> int:
    try:
        from cel_expr_python import cel as cx  # type: ignore[import-not-found]
    except ImportError:
        print("cel-expr-python is not installed: pip install cel-expr-python")
        return 2
    env = environment(cx)
    for answer in library_values(cx):
        print(answer)
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
        their_compile, their_result = theirs(env, case["expression"], device)
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
    unit_agreement(env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
