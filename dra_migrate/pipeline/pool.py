"""The process pool the file stage (``many_files.run``) and ``validate`` share: whether
a run takes one, how many files a task holds, how its workers start and what they take
of the run's cache rules; the results in order, each reported to the progress bar."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence

from dra_migrate import cache

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _T = TypeVar("_T")

Progress = Callable[[int, int], None] | None  # (files done, files to do): a progress bar
PARALLEL_THRESHOLD = 24  # below this many parsed files a process pool costs more than it saves
# files a task of the pool holds, at most: a task's round trip costs about what a small
# file's parsing does (515 files on two workers: 0.19 s in chunks of 4, 0.15 in 16),
# and eight tasks a worker at least keep a big file from holding up the end
MAX_CHUNK = 16


def in_order(
    function: Callable[..., _T],
    columns: Sequence[Sequence[Any]],
    jobs: int | None,
    progress: Progress = None,
) -> list[_T]:
    """``function`` of each row of ``columns`` (one sequence an argument, all as long),
    in order: in this process with one worker (``jobs``; None: a worker a core) or
    fewer than PARALLEL_THRESHOLD rows, else on a process pool."""
    count = len(columns[0]) if columns else 0
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    if workers <= 1 or count < PARALLEL_THRESHOLD:
        return list(counted(map(function, *columns), count, progress))
    from concurrent.futures import ProcessPoolExecutor  # lazy: start-up of small runs

    rules = (cache.outside(),)  # where the pool does not fork, a worker is a new interpreter
    with ProcessPoolExecutor(workers, _context(), initializer=cache.adopt, initargs=rules) as pool:
        done = pool.map(function, *columns, chunksize=chunk(count, workers))
        return list(counted(done, count, progress))


def chunk(files: int, workers: int) -> int:
    """Files a task of the pool holds (MAX_CHUNK at most, eight tasks a worker at least)."""
    return max(1, min(MAX_CHUNK, files // (workers * 8)))


def _context() -> Any:
    """How the pool starts its workers: forked where that is safe, on Linux in a process
    with no other thread, so that a worker starts with the run's modules imported
    (Python 3.14 starts them from a fork server by default, and each imports them
    again: 515 files on two workers took 0.28 s instead of 0.17). Elsewhere (macOS,
    where system libraries do not survive a fork; Windows), or with a thread running
    (a library's, a test's), the platform's own way (None)."""
    import multiprocessing
    import threading

    if (
        sys.platform.startswith("linux")
        and threading.active_count() == 1
        and "fork" in multiprocessing.get_all_start_methods()
    ):
        return multiprocessing.get_context("fork")
    return None


def counted(results: Iterable[_T], total: int, progress: Progress) -> Iterator[_T]:
    """The results, reporting each one done to ``progress``."""
    for done, result in enumerate(results, 1):
        if progress is not None:
            progress(done, total)
        yield result
