"""Parser worker processes: results in input order, a bounded window in flight, and a worker that dies
(a crash in a native parser, an allocation refused under the memory cap) costs only the file it was on.

Hostile files meet native code here (pdfium, libxml2): a decompression bomb or a crashing font must
become that file's problem, never a failed run — or a machine out of memory — that no later run gets past.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:  # imported where a pool starts: a run with nothing to parse never loads multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

Item = TypeVar("Item")
Result = TypeVar("Result")

WORKER_DIED = (
    "the parser process died while reading this file (out of memory under the parser's memory cap, "
    "or a crash in a native parsing library)"
)
WORKER_OUT_OF_MEMORY = (
    "the parser ran out of memory while reading this file (over the parser's memory cap, INGEST_PARSER_MEMORY_MB)"
)
WORKER_FAILED = (
    "the parser failed while reading this file ({error}; under the parser's memory cap, INGEST_PARSER_MEMORY_MB, "
    "native libraries can fail this way)"
)
WORKER_TIMED_OUT = "parsing this file took longer than the parser's time limit ({seconds:g} s); it was stopped"


@dataclass(frozen=True)
class WorkerPool(Generic[Item, Result]):
    """How to run ``task`` over groups of items in spawned processes.

    ``initializer(*initargs)`` runs once in each worker; ``on_death(item, reason)`` is the result given
    for an item whose worker died on it (or ran past ``item_timeout_s``, then killed) twice: once among
    its group, once on its own.
    """

    task: Callable[[list[Item]], list[Result]]
    on_death: Callable[[Item, str], Result]
    workers: int
    group: int
    window_per_worker: int
    initializer: Callable[..., None]
    initargs: tuple[object, ...]
    item_timeout_s: float | None = None

    def timeout(self, items: int) -> float | None:
        return None if self.item_timeout_s is None else self.item_timeout_s * items


def results_in_order(pool: WorkerPool[Item, Result], items: Sequence[Item]) -> Iterator[Result]:
    """Every item's result in the order of ``items``, computed in worker processes."""
    groups = [list(items[i : i + pool.group]) for i in range(0, len(items), pool.group)]
    done = 0
    while done < len(groups):
        for group, results in _run_until_broken(pool, groups[done:]):
            done += 1
            if results is None:  # the pool broke with this group in flight: retry its files one per task
                results = _retry(pool, group)
            yield from results


def _run_until_broken(
    pool: WorkerPool[Item, Result], groups: list[list[Item]]
) -> Iterator[tuple[list[Item], list[Result] | None]]:
    """Each group with its results, in order, until the pool breaks; the groups in flight then come
    last with None (to be retried) and the caller starts a new pool for the ones never sent."""
    from concurrent.futures.process import BrokenProcessPool

    window: deque[tuple[list[Item], Future[list[Result]]]] = deque()
    pending = iter(groups)
    unfinished: list[tuple[list[Item], list[Result] | None]] = []
    with _executor(pool, pool.workers) as executor:
        broken = False
        while True:
            while not broken and len(window) < pool.workers * pool.window_per_worker:
                group = next(pending, None)
                if group is None:
                    break
                try:
                    window.append((group, executor.submit(_each_within, pool.task, pool.item_timeout_s, group)))
                except BrokenProcessPool:
                    broken = True  # this group was never sent: the next pool takes it
            if not window:
                break
            group, future = window.popleft()
            try:
                result: list[Result] | None = future.result(timeout=pool.timeout(len(group)))
            except BrokenProcessPool:
                broken, result = True, None
            except TimeoutError:
                _kill_workers(executor)  # a stuck worker cannot be interrupted: the pool goes, the file is found
                broken, result = True, None
            except Exception:  # noqa: BLE001 - whatever the task raised in its worker
                # raised by the task outside what it catches: MemoryError under the memory cap, or a native
                # library's SystemError ("error return without exception set") when an allocation fails.
                # That worker may be left half-initialised, so it goes like a dead one and its group is
                # retried file by file: the file that raises alone is rejected, never the run.
                _kill_workers(executor)
                broken, result = True, None
            if broken:
                unfinished.append((group, result))  # after the broken pool is gone, in order
            else:
                yield group, result
    yield from unfinished


def _retry(pool: WorkerPool[Item, Result], group: list[Item]) -> list[Result]:
    if pool.group > 1:
        return list(results_in_order(replace(pool, group=1), group))
    return [_alone(pool, item) for item in group]  # the file that breaks a pool alone is the one


def _executor(pool: WorkerPool[Item, Result], workers: int) -> ProcessPoolExecutor:
    """Spawned, not forked: the caller may hold threads and locks."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    _start_quiet_resource_tracker()
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_start_worker,
        initargs=(pool.initializer, pool.initargs),
    )


def _start_quiet_resource_tracker() -> None:
    """multiprocessing's resource tracker, started with its stderr on /dev/null. It is a process of its own
    that outlives a killed run by a moment: it then removes the semaphores of the run's pool and warns
    "resource_tracker: There appear to be 5 leaked semaphore objects to clean up at shutdown" on the stderr
    it inherited — the run's, where only ingest's own messages belong. (Started once per run; the pool's
    queues would start it with the run's stderr.)"""
    from multiprocessing import resource_tracker

    if getattr(resource_tracker._resource_tracker, "_fd", None) is not None:
        return  # running (ensure_running starts it again if it died)
    with contextlib.suppress(OSError):
        saved = os.dup(2)
        try:
            quiet = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(quiet, 2)
                resource_tracker.ensure_running()
            finally:
                os.dup2(saved, 2)
                os.close(quiet)
        finally:
            os.close(saved)


def _start_worker(initializer: Callable[..., None], initargs: tuple[object, ...]) -> None:
    """A parser process writes nothing to the run's stderr: what goes wrong in it reaches the run as
    that file's problem (``on_death``), and what multiprocessing prints of a worker that dies under the
    memory cap (its traceback, "Process SpawnProcess-7:") or a native library's chatter is no message
    for the user."""
    with contextlib.suppress(OSError):
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 2)
        os.close(quiet)
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # the per-file time limit ends this process (_each_within)
    initializer(*initargs)


ITEM_GRACE_S = 5.0  # the worker's own per-file limit comes after the run's, which names a file parsed alone


def _each_within(task: Callable[[list[Item]], list[Result]], limit_s: float | None, items: list[Item]) -> list[Result]:
    """``task`` over ``items`` one at a time, each within its own time limit: a native parser stuck on one
    file (pdfium spinning in a failing mmap loop under the memory cap) cannot hold the worker for the whole
    group's limit (files × limit). Past it, SIGALRM's default action ends this process: the pool breaks,
    its groups are retried file by file, and the stuck file, alone, meets the run's limit (WORKER_TIMED_OUT)."""
    timer = limit_s is not None and hasattr(signal, "setitimer")
    results: list[Result] = []
    try:
        for item in items:
            if timer:
                signal.setitimer(signal.ITIMER_REAL, float(limit_s or 0) + ITEM_GRACE_S)
            results.extend(task([item]))
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return results


def _alone(pool: WorkerPool[Item, Result], item: Item) -> Result:
    from concurrent.futures.process import BrokenProcessPool

    with _executor(pool, 1) as executor:
        try:
            return executor.submit(_each_within, pool.task, pool.item_timeout_s, [item]).result(
                timeout=pool.timeout(1)
            )[0]
        except BrokenProcessPool:
            return pool.on_death(item, WORKER_DIED)
        except MemoryError:
            _kill_workers(executor)
            return pool.on_death(item, WORKER_OUT_OF_MEMORY)
        except TimeoutError:
            _kill_workers(executor)
            return pool.on_death(item, WORKER_TIMED_OUT.format(seconds=pool.item_timeout_s))
        except Exception as error:  # noqa: BLE001 - raised by the task in its worker, outside what it catches
            _kill_workers(executor)
            return pool.on_death(item, WORKER_FAILED.format(error=f"{type(error).__name__}: {error}"[:200]))


def _kill_workers(executor: ProcessPoolExecutor) -> None:
    for process in list(getattr(executor, "_processes", {}).values()):
        with contextlib.suppress(OSError, ValueError):
            process.kill()


def limit_memory(limit_bytes: int | None) -> None:
    """Cap this process's writable memory (RLIMIT_DATA): past it, Python raises MemoryError and native
    code aborts — this process, not the machine's other ones, pays for a decompression bomb."""
    if not limit_bytes:
        return
    try:
        import resource
    except ImportError:  # not POSIX
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit_bytes = min(limit_bytes, hard)
    with contextlib.suppress(ValueError, OSError):  # a platform that refuses it keeps its own limits
        resource.setrlimit(resource.RLIMIT_DATA, (limit_bytes, hard))


def default_memory_limit(workers: int) -> int:
    """Per parser process: an even share of physical memory (the run's own process counts as one),
    between 1 GiB and 8 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2 << 30
    share = total // (max(workers, 1) + 1)
    return max(1 << 30, min(share, 8 << 30))


def die_with(parent: int) -> None:
    """A worker must not outlive the run that started it (a killed `ingest run` would leave
    it blocked forever): on Linux the kernel kills it when the parent dies (PR_SET_PDEATHSIG);
    everywhere, a watcher thread exits it once its parent is gone."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the watcher below is enough
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="ingest-parent-watch", daemon=True).start()
