"""Test-only: run the ingest CLI, SIGKILLed right after its N-th store write.

    python -m tests.crash_run N run CORPUS --store … --json

Crash injection lives here, not in the product: the store classes' write methods are
wrapped in this process only (the stores themselves stay real, no mock).
"""

from __future__ import annotations

import functools
import os
import signal
import sys

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

    for cls in (SQLiteStore, ElasticsearchStore):
        for name in WRITES:
            setattr(cls, name, wrap(getattr(cls, name)))


if __name__ == "__main__":
    arm(int(sys.argv[1]))
    sys.argv = ["ingest", *sys.argv[2:]]
    from ingest.cli import main

    main()
