"""Every real manifest in ../shared/corpus/real: processed without an internal error,
and every converted file keeps the guarantees (conservation, validity, untouched
bytes, idempotence). The corpus is read in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.pipeline.one_file import process
from dra_migrate.repo.roles import Role
from dra_migrate.report.model import Status
from tests.conftest import SHARED, shared_dir
from tests.helpers.invariants import check_conversion, check_untouched

CORPUS = SHARED / "corpus" / "real"
FILES = sorted(p.name for p in CORPUS.glob("*.yaml")) if CORPUS.is_dir() else ["(missing)"]
GPU_NAMES = ("nvidia.com/gpu", "nvidia.com/mig-", "amd.com/gpu", "gpu.intel.com/")


@pytest.mark.parametrize("target", ["v1beta1", "v1"])
@pytest.mark.parametrize("name", FILES, ids=[f.removesuffix(".yaml")[-60:] for f in FILES])
def test_corpus_file(name: str, target: str) -> None:
    folder = shared_dir("corpus", "real")
    raw = (folder / name).read_bytes()
    settings = Settings(target=target, config=load_config(None))
    result = process(name, raw, Role(), settings)
    codes = [f.code for f in result.findings]
    assert "DRA900" not in codes and "DRA901" not in codes, [f.format() for f in result.findings]
    for f in result.findings:
        assert f.line >= 1 and f.col >= 1
    if result.status is not Status.CHANGED:
        assert result.converted is None
        return
    assert result.converted is not None
    original = raw.decode("utf-8")
    converted = result.converted.decode("utf-8")
    check_conversion(original, converted, result.inventory)
    check_untouched(original, converted, GPU_NAMES)
    again = process(name, result.converted, Role(), settings)
    assert again.status is Status.UNCHANGED, [f.format() for f in again.findings]


def test_corpus_converts_most_files() -> None:
    """A guard against a silent regression that skips everything."""
    folder = shared_dir("corpus", "real")
    settings = Settings(target="v1beta1", config=load_config(None))
    results = {
        p.name: process(p.name, p.read_bytes(), Role(), settings) for p in folder.glob("*.yaml")
    }
    changed = sum(r.status is Status.CHANGED for r in results.values())
    assert changed >= 34
    # left on purpose: Kubeflow Trainer derives torchrun's processes from the GPU count
    torchtune = results[
        "kubeflow__trainer__manifests__base__runtimes__torchtune__llama3_2__llama3_2_1B.yaml"
    ]
    assert torchtune.status is Status.UNCHANGED
    assert {f.code for f in torchtune.findings} >= {"DRA228"}


def test_corpus_is_beside_the_checkout_or_skipped() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} not found: the shared corpus lives beside the checkout in CI")
    assert Path(CORPUS / "SOURCES.tsv").is_file()
