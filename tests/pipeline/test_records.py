"""The records a worker of the process pool is sent (``Job``, ``Settings`` with its
``Config``) and sends back (``FileResult`` with findings and inventory rows) pickle
to equal values; records keep the value semantics the pipeline relies on."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.pipeline.one_file import Job, process_job
from dra_migrate.repo.roles import Overlay, Role
from dra_migrate.report.findings import Finding
from dra_migrate.report.model import FileResult, Status
from tests.helpers.invariants import gpu_job


def test_a_job_and_its_result_cross_the_process_pool() -> None:
    config = load_config(None)
    assert config.is_gpu("nvidia.com/gpu")  # its cache of answers travels too
    settings = Settings("v1", config, reserved=frozenset({("ml", "taken")}))
    role = Role(overlays=(Overlay("overlays/prod", frozenset({("Job", "train")})),))
    job = Job("train.yaml", "train.yaml", role, gpu_job("train", 2).encode())
    sent_job, sent_settings = pickle.loads(pickle.dumps((job, settings)))
    assert (sent_job, sent_settings) == (job, settings) and sent_job is not job
    assert sent_settings.config == load_config(None)  # caches are no part of the value

    result = process_job(job, settings)
    # an overlay patches its GPUs: converted, and edited even by scan (the overlay's
    # conversion reads the base's converted text)
    assert result.status is Status.CHANGED and result.converted is not None
    assert result.templates and result.inventory[0].kept == ""
    scanned = process_job(dataclasses.replace(job, edit=False), settings)
    assert scanned.converted == result.converted
    back = pickle.loads(pickle.dumps(result))
    assert back == result and back is not result
    assert process_job(sent_job, sent_settings) == result


def test_records_compare_by_value_and_copy_with_replace() -> None:
    finding = Finding("a.yaml", 3, 1, "DRA401", "m")
    later = dataclasses.replace(finding, line=4)
    assert (later.line, finding.line) == (4, 3)
    assert sorted([later, finding]) == [finding, later]  # by place, then code
    assert len({finding, Finding("a.yaml", 3, 1, "DRA401", "m")}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.line = 5  # type: ignore[misc]

    result = FileResult("a.yaml", Status.CHANGED, [finding], original=b"x")
    assert result != FileResult("a.yaml", Status.CHANGED)
    one, other = FileResult("a.yaml", Status.UNCHANGED), FileResult("b.yaml", Status.UNCHANGED)
    one.findings.append(finding)
    assert other.findings == []  # each result has a list of its own
    with pytest.raises(TypeError):
        hash(result)  # filled in by later stages: equal by value, never a dict key


def test_the_pool_forks_only_where_that_is_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers are forked on Linux in a process with no other thread (they start with the
    run's modules imported; Python 3.14's default, a fork server, imports them again in
    each); with a thread running, or on another system, the platform's own way."""
    import sys
    import threading

    from dra_migrate.pipeline import pool

    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(sys, "platform", "linux")
    context = pool._context()
    assert context is not None and context.get_start_method() == "fork"
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert pool._context() is None
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert pool._context() is None
    assert [pool.chunk(n, 2) for n in (24, 100, 515, 10_000)] == [1, 6, 16, 16]
