"""A large corpus is parsed in worker processes: the scan must be exactly the serial one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest.corpus import PARALLEL_MIN_FILES, scan_corpus
from ingest.settings import load_settings
from tests.corpus_builder import make_corpus, write_doc


def test_parallel_scan_equals_serial_scan(tmp_path, monkeypatch):
    corpus = make_corpus(tmp_path / "corpus", n=PARALLEL_MIN_FILES + 6)
    write_doc(corpus, "bad/slug.md", "Not A Slug")
    (corpus / "documents" / "bad" / "empty.txt").write_bytes(b"")
    settings = load_settings(corpus)
    serial = scan_corpus(corpus, settings, workers=1)
    seen: list[str] = []
    parallel = scan_corpus(corpus, settings, on_file=seen.append, workers=2)
    assert parallel == serial
    assert len(parallel.documents) == PARALLEL_MIN_FILES + 6 and len(parallel.rejected) == 2
    assert seen == sorted(seen) and len(seen) == parallel.seen


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found |= {int(c) for c in open(f"/proc/{pid}/task/{task}/children").read().split()}
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc to find the workers")
def test_workers_die_when_the_run_is_killed(tmp_path):
    corpus = tmp_path / "corpus"
    for i in range(400):  # enough parsing that the workers are busy when the run is killed
        write_doc(corpus, f"f{i % 4}/doc{i}.md", f"doc-{i}", extra="\n\n".join(f"Paragraph {j} " + "word " * 300 for j in range(20)))
    run = subprocess.Popen(
        [sys.executable, "-m", "ingest.cli", "run", str(corpus), "--store", f"sqlite:///{tmp_path / 'i.sqlite'}", "--json"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "INGEST_WORKERS": "2"},
    )
    workers: set[int] = set()
    while len(workers) < 2 and run.poll() is None:
        workers |= _children(run.pid)
        time.sleep(0.02)
    assert run.poll() is None, "the run ended before its workers could be seen"
    time.sleep(0.5)  # let the workers start parsing (widens the window; not an assertion)
    workers |= _children(run.pid)
    run.send_signal(signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 30  # a guard against waiting forever, not a speed check
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [w for w in workers if _alive(w)] == []
