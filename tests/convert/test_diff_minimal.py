"""The diff is minimal: no unchanged line is shown as removed and added.

``writer.unified_diff`` compares only the regions the edits changed (linear in
the file's size); these tests hold it to the fewest changed lines any line diff
could show (twice the longest common subsequence subtracted from both lengths),
on files where edits sit close together and documents follow them.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.convert.writer import _lines, _opcodes, unified_diff
from dra_migrate.pipeline.one_file import process
from dra_migrate.repo.roles import Role
from dra_migrate.report.model import Status
from tests.convert.test_properties import _settings, cases

PLAIN = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n",
    "apiVersion: v1\nkind: Service\nmetadata:\n  name: worker\nspec:\n  ports:\n  - port: 80\n",
    "# a comment between documents\n",
)


def _minimal(a: list[str], b: list[str]) -> int:
    """The fewest removed plus added lines of any diff from a to b."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return len(a) + len(b) - 2 * previous[-1]


def _shown(diff: str) -> int:
    body = [line for line in diff.splitlines()[2:] if not line.startswith("@@")]
    return sum(1 for line in body if line[:1] in "+-")


def _check(text: str) -> None:
    raw = text.encode("utf-8")
    result = process("case.yaml", raw, Role(), _settings("v1"))
    if result.status is not Status.CHANGED:
        return
    assert result.converted is not None and result.regions is not None
    old, new = _lines(raw), _lines(result.converted)
    # the regions describe the texts: the linear path is taken, not the whole-file one
    assert _opcodes(old, new, result.regions) is not None
    diff = unified_diff("case.yaml", raw, result.converted, result.regions)
    assert _shown(diff) == _minimal(old, new), diff


def _pod(name: str, gpus: int, comment: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n"
        f"  - name: a\n    image: i\n    resources:\n      limits:\n"
        f"        nvidia.com/gpu: {gpus}{comment}\n"
        f"  - name: b\n    image: i\n    resources:\n      limits:\n"
        f"        cpu: 1\n        nvidia.com/gpu: {gpus}\n"
    )


def test_edits_close_together_and_trailing_documents() -> None:
    """Two containers' edits three lines apart, then documents that stay as they
    were: the '---' and the unchanged lines between the edits are context, not
    removed and added again."""
    text = "---\n".join(
        [_pod("first", 1, "  # one A100"), PLAIN[0], _pod("second", 2), PLAIN[1], PLAIN[2]]
    )
    _check(text)
    result = process("case.yaml", text.encode(), Role(), _settings("v1"))
    assert result.converted is not None
    diff = unified_diff("case.yaml", text.encode(), result.converted, result.regions)
    removed = [line[1:] for line in diff.splitlines()[2:] if line.startswith("-")]
    assert sorted(removed) == sorted(
        [
            "      limits:",
            "        nvidia.com/gpu: 1  # one A100",
            "        nvidia.com/gpu: 1",
            "      limits:",
            "        nvidia.com/gpu: 2",
            "        nvidia.com/gpu: 2",
        ]
    ), diff


@st.composite
def files(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.one_of(
                cases().map(lambda c: c.text.removeprefix("\ufeff").replace("\r\n", "\n")),
                st.sampled_from(PLAIN),
            ),
            min_size=1,
            max_size=4,
        )
    )
    parts = [p if p.endswith("\n") else p + "\n" for p in parts]
    return "---\n".join(parts)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=files())
def test_diff_is_minimal(text: str) -> None:
    _check(text)


def test_a_region_shows_the_fewest_changed_lines() -> None:
    """Inside a changed region, difflib's matcher takes the longest common block
    first: here it would show two unchanged lines as removed and added again."""
    old = b"---\n---\nkind: Pod\n"
    new = b"---\nkind: Pod\n---\nkind: Pod\n"
    diff = unified_diff("case.yaml", old, new, [(0, 3, 0, 4)])
    assert _shown(diff) == 1 == _minimal(_lines(old), _lines(new)), diff
    assert diff.splitlines()[2:] == ["@@ -1,3 +1,4 @@", " ---", "+kind: Pod", " ---", " kind: Pod"]
