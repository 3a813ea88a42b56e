"""A run killed while its parser processes work leaves stderr to ingest: multiprocessing's resource tracker
(a process that outlives the run by a moment, removing the semaphores of its pool) must not print
"resource_tracker: There appear to be 5 leaked semaphore objects to clean up at shutdown" on the stderr it
inherited (outside pass). Its clean-up itself still happens."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CONNECTION_ENV

ROOT = Path(__file__).resolve().parents[1]

POOL_SCRIPT = """
import os
from tests.test_killed_run_stderr import kill_parent
from tests.test_parser_stderr import dead
from ingest.workers import WorkerPool, die_with, results_in_order
pool = WorkerPool(task=kill_parent, on_death=dead, workers=2, group=1, window_per_worker=1,
                  initializer=die_with, initargs=(os.getpid(),))
print(list(results_in_order(pool, ["a.pdf", "b.pdf", "c.pdf"])))
"""


def kill_parent(items: list[str]) -> list[str]:
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(0.5)
    return items


def test_a_pool_whose_parent_is_killed_leaves_nothing_on_stderr():
    done = subprocess.run([sys.executable, "-c", POOL_SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == -signal.SIGKILL
    assert done.stderr == ""  # (captured until the tracker, holding the same stderr, has exited)


def children(pid: int) -> list[str]:
    found = subprocess.run(["ps", "-ww", "-o", "args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return found.splitlines()


@pytest.mark.skipif(shutil.which("ps") is None, reason="needs ps to find the parser processes")
def test_a_run_killed_while_parsing_leaves_only_its_own_lines_on_stderr(tmp_path, store_args):
    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus", corpus)  # with PDFs: parsed in a worker process even in a small run
    for n in range(300):
        extra = corpus / "documents" / "extra" / f"n{n}.md"
        extra.parent.mkdir(parents=True, exist_ok=True)
        words = " ".join(f"word{(n * 7 + i) % 97}" for i in range(400))
        extra.write_text(f"---\ndoc_id: n{n}\nversion: '1'\ntitle: N{n}\naccess: public\n---\n# N\n\n{words}\n")
    env = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    run = subprocess.Popen(
        [sys.executable, "-m", "ingest.cli", "run", str(corpus), *store_args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not any("spawn_main" in line for line in children(run.pid)):
        assert run.poll() is None, "the run ended before a parser process started"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.3)  # the pool's queues exist once a worker runs
    run.kill()
    _, stderr = run.communicate(timeout=120)

    assert run.returncode == -signal.SIGKILL
    assert all(line.startswith("store: ") for line in stderr.splitlines()), stderr
