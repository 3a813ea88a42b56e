"""Test-only: run the ingest CLI, SIGKILLed right after its N-th store write, or paused
before its first chunk write until a file appears.

    python -m tests.crash_run N run CORPUS --store … --json
    python -m tests.crash_run --pause-until FILE run CORPUS --store … --json

Crash injection lives here, not in the product: the store classes' write methods are
wrapped in this process only (the stores themselves stay real, no mock).
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import time

from ingest.store.elasticsearch import ElasticsearchStore
from ingest.store.sqlite import SQLiteStore

WRITES = ("write_chunks", "put_documents", "delete_chunks", "delete_documents")


def arm(after: int) -> None:
    left = [after]

    def wrap(method):
        @functools.wraps(method)
        def written(self, *args, **kwargs):
            outcome = method(self, *args, **kwargs)
            left[0] -= 1
            if left[0] == 0:
                os.kill(os.getpid(), signal.SIGKILL)
            return outcome

        return written

    # INGEST_TEST_CRASH_COUNTS=put_documents: count only those writes (e.g. die after the first record)
    counted = [n for n in os.environ.get("INGEST_TEST_CRASH_COUNTS", "").split(",") if n] or WRITES
    for cls in (SQLiteStore, ElasticsearchStore):
        for name in counted:
            setattr(cls, name, wrap(getattr(cls, name)))


def pause_until(path: str) -> None:
    """Hold the run (lock taken, nothing written yet) until ``path`` exists."""
    for cls in (SQLiteStore, ElasticsearchStore):
        method = cls.write_chunks

        def waiting(self, *args, _method=method, **kwargs):
            while not os.path.exists(path):
                time.sleep(0.05)
            return _method(self, *args, **kwargs)

        cls.write_chunks = waiting


if __name__ == "__main__":
    if sys.argv[1] == "--pause-until":
        pause_until(sys.argv[2])
        rest = sys.argv[3:]
    else:
        arm(int(sys.argv[1]))
        rest = sys.argv[2:]
    sys.argv = ["ingest", *rest]
    from ingest.cli import main

    main()
