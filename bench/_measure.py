"""Shared measuring helpers of the benches: wall time, CPU (children included) and peak RSS."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INGEST = ROOT / ".venv" / "bin" / "ingest"


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _reset_peak_rss() -> None:
    """Linux: writing 5 to clear_refs resets VmHWM, so each stage reports its own peak."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _peak_rss_mib() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Measured:
    wall_s: float
    cpu_s: float  # user + system, this process and its waited-for children (worker pools)
    peak_rss_mib: float  # the largest single process (this one, or a child for subprocesses)
    tree_rss_mib: float = 0.0  # subprocesses only: peak of the summed RSS of the child's process tree
    value: object = field(default=None, repr=False)


def measure(fn) -> Measured:
    """One in-process stage: wall, CPU with children, and its own peak RSS (VmHWM reset first).
    Worker processes' memory is not in VmHWM; their CPU is (RUSAGE_CHILDREN once joined)."""
    _reset_peak_rss()
    cpu = _cpu_now()
    started = time.perf_counter()
    value = fn()
    wall = time.perf_counter() - started
    return Measured(wall, _cpu_now() - cpu, _peak_rss_mib(), value=value)


def _tree_rss_kib(pid: int) -> int:
    """Summed VmRSS of pid and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        ppid = kib = 0
        for line in status.splitlines():
            if line.startswith("PPid:"):
                ppid = int(line.split()[1])
            elif line.startswith("VmRSS:"):
                kib = int(line.split()[1])
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = kib
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, ()))
    return total


def _become_subreaper() -> bool:
    """Descendants orphaned by the child (a multiprocessing fork server that outlives its run by a
    moment, say) become ours, so that their CPU is counted: Linux PR_SET_CHILD_SUBREAPER."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


_SUBREAPER = _become_subreaper()


def _children() -> set[int]:
    """This process's live children (from /proc)."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                found.add(int(entry))
    return found


def _reap_orphans(timeout_s: float = 10.0, own: frozenset[int] = frozenset()) -> float:
    """CPU of every orphaned descendant, waited for (at most ``timeout_s``). ``own``: children this
    process had before (e.g. multiprocessing's resource tracker): not waited for, they outlive the run."""
    cpu, deadline = 0.0, time.monotonic() + timeout_s
    while _SUBREAPER and time.monotonic() < deadline:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if not _children() - own:
                break  # only our own long-lived children are left: no orphan to wait for
            time.sleep(0.01)
            continue
        cpu += usage.ru_utime + usage.ru_stime
    return cpu


def run_child(argv: list[str], *, env: dict | None = None, sample_tree: bool = False, check: bool = True,
              ok_codes: tuple[int, ...] = (0,)) -> tuple[Measured, str]:
    """A subprocess's wall time, CPU and ru_maxrss (from wait4: the largest process of its tree),
    optionally sampling the summed RSS of its whole tree every 0.2 s."""
    own = frozenset(_children())
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    peak_tree = [0]
    stop = threading.Event()

    def sampler() -> None:
        while not stop.wait(0.2):
            peak_tree[0] = max(peak_tree[0], _tree_rss_kib(proc.pid))

    thread = threading.Thread(target=sampler, daemon=True)
    if sample_tree:
        thread.start()
    out_chunks = []
    # Read output while it runs (a full pipe would stall the child), then reap with wait4.
    assert proc.stdout is not None
    for line in proc.stdout:
        out_chunks.append(line)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    cpu = usage.ru_utime + usage.ru_stime + _reap_orphans(own=own)
    stop.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    output = b"".join(out_chunks).decode(errors="replace")
    if check and proc.returncode not in ok_codes:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{output[-3000:]}")
    return Measured(wall, cpu, usage.ru_maxrss / 1024, peak_tree[0] / 1024, value=proc.returncode), output


def python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable
