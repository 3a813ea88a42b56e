"""The folder listed and every file hashed in a thread while a run waits on its store: a no-op run
then finds the hashes ready (see ``corpus.scan_corpus(ahead=…)``)."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

from ingest.listing import DOCUMENTS, Listing, list_documents, read_document
from ingest.model import UnreadableFile


class FolderAhead:
    """The folder listed and every file hashed in a thread, started as a run starts: the run waits
    on the store meanwhile (its lock, its records), and with nothing to do it then finds the hashes
    ready. A snapshot older than ``max_age_s`` when the scan asks for it (the run waited for
    another run's lock) is not used: the scan reads the folder itself, as without it."""

    def __init__(self, root: Path, max_age_s: float = 5.0) -> None:
        self.root = Path(root)
        self.max_age_s = max_age_s
        self._found: tuple[Listing, dict[str, str]] | None = None
        self._read_at = 0.0
        self._thread = threading.Thread(target=self._read, name="ingest-folder-ahead", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            if not (self.root / DOCUMENTS).is_dir():
                return  # the scan says what is wrong
            listing = list_documents(self.root)
            hashes: dict[str, str] = {}
            for source, path in zip(listing.sources, listing.paths, strict=True):
                try:
                    hashes[source] = hashlib.sha256(read_document(path)).hexdigest()
                except (OSError, UnreadableFile):
                    continue  # read again by the scan, which names the problem
            self._found, self._read_at = (listing, hashes), time.monotonic()
        except Exception:  # noqa: BLE001 - only a head start: the scan reads the folder itself
            self._found = None

    def give_back(self, found: tuple[Listing, dict[str, str]]) -> None:
        """Put back what :meth:`take` returned, for the next taker (its age counts from the first read)."""
        self._found = found

    def take(self) -> tuple[Listing, dict[str, str]] | None:
        """(listing, sha256 by source) when fresh enough, else None; once."""
        self._thread.join()
        found, self._found = self._found, None
        if found is None or time.monotonic() - self._read_at > self.max_age_s:
            return None
        return found
