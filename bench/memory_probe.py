"""Where the memory of one `ingest` command goes, sampled over time (issue 11, item 5: isolating a peak).

    .venv/bin/python bench/memory_probe.py --out /tmp/probe.jsonl -- run CORPUS --store sqlite:////tmp/x.sqlite --json
    .venv/bin/python bench/memory_probe.py --tracemalloc 10 --snapshot-every 15 -- run CORPUS ...   # slow: 2-3x

Runs the CLI in this process with a sampler thread (every --every seconds, default 0.1) recording:
VmRSS / VmHWM / RssAnon / RssFile (/proc/self/status); SQLite's own allocations
(``sqlite3_memory_used`` / ``sqlite3_memory_highwater`` of the libsqlite3 that ``_sqlite3`` links,
through ctypes: page cache, FTS5 pending terms, sorter); glibc's heap (``mallinfo2``: arena, mmap,
in use, free, summed over every thread's arena); "python" = RssAnon - glibc heap (pymalloc arenas:
Python objects); and where the run's main thread and writer thread are (innermost ``ingest``
frames). With ``--tracemalloc N``: the traced peak, and the largest snapshot grouped by the
innermost ``ingest`` frame (what holds the memory). Prints a summary: the peak sample and the
samples at each tenth of the run; ``--out`` keeps every sample as JSON lines.
Parser worker processes are not sampled (see memory_scale.py for the whole tree).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import time
from collections import Counter
from typing import Any


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
    ]


def _status() -> dict[str, int]:
    found = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile")):
                key, value = line.split(":")
                found[key] = int(value.split()[0]) // 1024
    return found


def _where(frame: Any) -> str:
    names = []
    while frame is not None and len(names) < 3:
        if "/ingest/" in frame.f_code.co_filename:
            names.append(f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}")
        frame = frame.f_back
    return "<".join(names)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--every", type=float, default=0.1)
    parser.add_argument("--out", default="")
    parser.add_argument("--tracemalloc", type=int, default=0, help="frames per traceback (0: off)")
    parser.add_argument("--snapshot-every", type=float, default=15.0)
    parser.add_argument("args", nargs=argparse.REMAINDER, help="-- then the ingest command line")
    args = parser.parse_args()
    command = args.args[1:] if args.args[:1] == ["--"] else args.args

    import _sqlite3  # noqa: F401 - loads the libsqlite3 the stores use

    sqlite = ctypes.CDLL("libsqlite3.so.0")
    sqlite.sqlite3_memory_used.restype = ctypes.c_int64
    sqlite.sqlite3_memory_highwater.restype = ctypes.c_int64
    sqlite.sqlite3_memory_highwater.argtypes = [ctypes.c_int]
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    import tracemalloc

    if args.tracemalloc:
        tracemalloc.start(args.tracemalloc)
    samples: list[dict[str, Any]] = []
    snapshots: list[tuple[int, float, Any]] = []
    main_thread = threading.get_ident()
    stop = threading.Event()

    def sample() -> None:
        start = time.monotonic()
        while not stop.is_set():
            heap = libc.mallinfo2()
            frames = sys._current_frames()
            writer = next((t.ident for t in threading.enumerate() if t.name == "ingest-writer"), None)
            row: dict[str, Any] = {"t": round(time.monotonic() - start, 2), **_status()}
            row.update(
                sqlite_kib=sqlite.sqlite3_memory_used() // 1024,
                sqlite_high_kib=sqlite.sqlite3_memory_highwater(0) // 1024,
                heap_mib=(heap.arena + heap.hblkhd) >> 20,
                heap_used_mib=heap.uordblks >> 20,
                heap_free_mib=heap.fordblks >> 20,
            )
            row["python_mib"] = row.get("RssAnon", 0) - row["heap_mib"]
            if args.tracemalloc:
                row["traced_mib"], row["traced_peak_mib"] = (x >> 20 for x in tracemalloc.get_traced_memory())
                if row["t"] - (snapshots[-1][1] if snapshots else 0.0) > args.snapshot_every:
                    snapshots.append((tracemalloc.get_traced_memory()[0], row["t"], tracemalloc.take_snapshot()))
            row["main"] = _where(frames.get(main_thread))
            row["writer"] = _where(frames.get(writer)) if writer else ""
            samples.append(row)
            stop.wait(args.every)

    thread = threading.Thread(target=sample, name="memory-probe", daemon=True)
    thread.start()
    sys.argv = ["ingest", *command]
    from ingest.__main__ import main as ingest_main

    code: object = 0
    try:
        ingest_main()
    except SystemExit as exc:
        code = exc.code
    finally:
        stop.set()
        thread.join()
    report(samples, snapshots, args.out)
    sys.exit(code if isinstance(code, int) else 1)


def report(samples: list[dict[str, Any]], snapshots: list[tuple[int, float, Any]], out: str) -> None:
    if out:
        with open(out, "w") as f:
            f.writelines(json.dumps(s) + "\n" for s in samples)
    if not samples:
        return
    cols = ("t", "VmRSS", "RssAnon", "python_mib", "heap_mib", "heap_used_mib", "sqlite_kib", "sqlite_high_kib")
    print("  ".join(f"{c:>10}" for c in cols) + "  main thread", file=sys.stderr)
    tenth = max(1, len(samples) // 10)
    peak = max(samples, key=lambda s: s.get("VmRSS", 0))
    for s in [*samples[::tenth], samples[-1], peak]:
        mark = "  <- peak" if s is peak else ""
        print("  ".join(f"{s.get(c, ''):>10}" for c in cols) + f"  {s['main'][:60]}{mark}", file=sys.stderr)
    if snapshots:
        size, t, snapshot = max(snapshots, key=lambda x: x[0])
        held: Counter[str] = Counter()
        for stat in snapshot.statistics("traceback"):
            ours = [f for f in stat.traceback if "/ingest/" in f.filename]
            where = ours[-1] if ours else stat.traceback[-1]
            held[f"{os.path.basename(where.filename)}:{where.lineno}"] += stat.size
        print(f"largest tracemalloc snapshot: t={t} s, {size / 2**20:.1f} MiB traced; by innermost ingest frame:",
              file=sys.stderr)
        for where, n in held.most_common(20):
            print(f"{n / 1024:10.0f} KiB  {where}", file=sys.stderr)


if __name__ == "__main__":
    main()
