"""Helper ``define`` blocks with a chart's GPU lines, as the template edit follows them.

A GPU line inside a ``define`` that one template of the chart includes once, with
the chart's root (``include "name" .`` at the root of that template), is edited
where it is defined (``template_edit._helper_edit``): its lines behind the switch,
the container's claims beside its limits, and the count the switch reads computed
within the define (a helper's variables are its own); the template that includes it
gets the pod's claims and the count again. A helper used several times, with
another context, or from its own file is refused, named (``template_text.helper_uses``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from dra_migrate.helm import template_shapes as shapes


@dataclass(frozen=True, slots=True)
class Helper:
    """A helper ``define`` with the GPU lines, included once, at the chart's root, by
    another template: edited where it is defined, with the template that includes it."""

    path: str  # the helper's file
    shown: str
    name: str
    lines: list[shapes.Line]  # its lines, the define's own control taken out
    gpu: list[shapes.Line]
    opening: int  # the define's line
    closing: int  # the line of its end
    use: shapes.Line  # the include line in the template that includes it
    trims: bool  # the define's action trims the line break after it (-}})


def used_once(
    texts: dict[str, str], gpu_key: Callable[[shapes.Line], bool], shown: Callable[[str], str]
) -> dict[str, Helper]:
    """The helpers the edit follows, by the path of the template that includes each;
    another helper with GPU lines is refused where it is read
    (``template_text.helper_uses``)."""
    out: dict[str, Helper] = {}
    for path, text in texts.items():
        lines = shapes.lines_of(text)
        gpu = [ln for ln in lines if gpu_key(ln)]
        openings = {c.opening for ln in gpu for c in ln.controls if c.keyword == "define"}
        if len(openings) != 1 or any(len(ln.controls) == 0 for ln in gpu):
            continue
        opening = openings.pop()
        named = re.search(r'"([^"]+)"', opening)
        if named is None:
            continue
        name = json.dumps(named.group(1))
        uses = [
            (p, ln)
            for p, t in texts.items()
            if name in t
            for ln in shapes.lines_of(t)
            if re.search(rf"\b(?:include|template)\s+{re.escape(name)}", ln.text)
        ]
        if len(uses) != 1 or uses[0][0] == path:
            continue
        use_path, use = uses[0]
        rooted = re.search(rf"\binclude\s+{re.escape(name)}\s+\.\s*(\||\}}\}})", use.text)
        if rooted is None or not shapes.root_scope(use.controls):
            continue  # not the chart's root: what the helper reads is not $.Values
        first = next(ln for ln in lines if opening in ln.text)
        if first.text.strip() != opening:
            continue
        inside = [ln.number for ln in lines if any(c.opening == opening for c in ln.controls)]
        stripped = [
            dataclasses.replace(ln, controls=tuple(c for c in ln.controls if c.opening != opening))
            for ln in lines
        ]
        out[use_path] = Helper(
            path,
            shown(path),
            named.group(1),
            stripped,
            [stripped[ln.number] for ln in gpu],
            first.number,
            max(inside),
            use,
            opening.endswith("-}}"),
        )
    return out
