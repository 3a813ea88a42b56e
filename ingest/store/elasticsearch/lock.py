"""The write lock of one prefix: a lease document in the meta index with a random token, renewed by a
keeper thread with retries, checked before every write batch, released (or left to expire) at the end.

One lock document per prefix (``P-meta``, _id ``lock``), created with op_type=create (one winner).
The keeper renews the lease every third of the TTL, retrying with backoff until the lease would run
out; before every write batch the store calls :meth:`WriteLock.check`, which raises StoreLocked
when the document no longer carries this run's token or the lease ran out. A lost lock stays lost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from elasticsearch import ConflictError, Elasticsearch, NotFoundError

from ingest.store.base import StoreLocked, poll_until
from ingest.store.elasticsearch.layout import LOCK_ID
from ingest.store.elasticsearch.transport import SHORT_TIMEOUT_S, Transport

LOCK_TTL_S = 600.0


@dataclasses.dataclass
class LockGuard:
    """The write lock one run took, as its writes see it (shared with the rebuild's store)."""

    owner: str
    token: str  # random, in the lock document: "still ours" means "still this token"
    acquired_at: datetime
    held: dict[str, int]  # seq_no / primary_term of our lock document (for conditional writes)
    lease_until: float  # time.monotonic() by which the lease runs out (with a margin) unless renewed
    expires_at: str  # the lease end written in the lock document
    lost: str | None = None  # why the run no longer holds it; never reset


class WriteLock:
    """Takes, keeps, checks and releases the lock of one prefix (``guard`` while held)."""

    def __init__(self, transport: Transport, meta_index: str, prefix: str, ttl_s: float = LOCK_TTL_S):
        self.t = transport
        self.meta_index = meta_index
        self.prefix = prefix
        self.ttl_s = ttl_s
        self.guard: LockGuard | None = None
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None
        self._holder: dict[str, Any] = {}  # the lock document of the run we wait for

    # --- taking it -------------------------------------------------------------------------------
    def acquire(self, owner: str, wait_s: float) -> LockGuard:
        """Take the lock (waiting up to ``wait_s`` for another run) and start renewing it."""
        token = secrets.token_hex(8)
        guard = poll_until(lambda: self._try_take(owner, token), wait_s, self._held_elsewhere)
        self._stop = threading.Event()
        self._keeper = threading.Thread(target=self._keep, args=(guard, self._stop), daemon=True)
        self._keeper.start()
        self.guard = guard
        return guard

    def _try_take(self, owner: str, token: str) -> LockGuard | None:
        """One attempt: the guard when the lock is ours now, None when someone else holds it."""
        while True:
            now = datetime.now(UTC)
            doc = self._lock_doc(owner, token, now)
            started = time.monotonic()
            try:
                resp = self._create(doc)
                return self._guard(owner, token, now, resp, started, doc["expires_at"])
            except ConflictError:
                pass
            current = self._read()
            if current is None:
                continue  # released in between: try again at once
            src = current["_source"]
            if (src.get("values") or {}).get("token") == token:
                # Our create landed but its answer was lost (a retried request): it is ours.
                return self._guard(owner, token, now, current, started, src["expires_at"])
            if not (_parse_iso(src["expires_at"]) <= now or _holder_is_dead(src)):
                self._holder = src
                return None
            # Expired, or its process is gone (killed on this host): take it over, but only if
            # nobody else did in between.
            with contextlib.suppress(ConflictError, NotFoundError):
                self._delete_if_unchanged(current)

    def _create(self, doc: dict[str, Any]) -> Any:
        return self.t.call(lambda: self.t.es.create(index=self.meta_index, id=LOCK_ID, document=doc))

    def _delete_if_unchanged(self, current: Any) -> None:
        seq_no, primary_term = current["_seq_no"], current["_primary_term"]
        self.t.call(
            lambda: self.t.es.delete(index=self.meta_index, id=LOCK_ID, if_seq_no=seq_no, if_primary_term=primary_term)
        )

    def _guard(self, owner: str, token: str, now: datetime, seq: Any, started: float, expires_at: str) -> LockGuard:
        held = {"seq_no": seq["_seq_no"], "primary_term": seq["_primary_term"]}
        return LockGuard(owner, token, now, held, started + self.ttl_s * 0.9, expires_at)

    def _held_elsewhere(self) -> StoreLocked:
        src = self._holder
        return StoreLocked(
            f"{self.t.where} (index prefix {self.prefix!r}) is being written by "
            f"{src.get('owner', 'another run')} (since {src.get('acquired_at')}); wait for it to finish "
            f"(or run with --wait SECONDS). The lock expires at {src.get('expires_at')} if that run died "
            "on another host."
        )

    def _read(self) -> Any:
        return self.t.call(lambda: self.t.es.get(index=self.meta_index, id=LOCK_ID), missing=None)

    def _lock_doc(self, owner: str, token: str, acquired_at: datetime) -> dict[str, Any]:
        expires = datetime.now(UTC) + timedelta(seconds=self.ttl_s)
        return {
            "owner": owner,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "acquired_at": _iso(acquired_at),
            "expires_at": _iso(expires),
            "values": {"token": token},
        }

    # --- keeping it ------------------------------------------------------------------------------
    def _keep(self, guard: LockGuard, stop: threading.Event) -> None:
        """Push expires_at forward every third of the TTL; retry a failed renewal with backoff
        until the lease would run out, then mark the lock lost (the next write batch stops)."""
        client = self.t.client.options(request_timeout=max(1.0, min(self.t.timeout, self.ttl_s / 3)), max_retries=0)
        while not stop.wait(self.ttl_s / 3):
            backoff = min(1.0, self.ttl_s / 20)
            while guard.lost is None:
                try:
                    self._renew(client, guard)
                    break
                except ConflictError:
                    if self._still_ours(client, guard):
                        continue
                except Exception as exc:  # noqa: BLE001 - any failure is retried until the lease runs out
                    if stop.is_set():
                        return
                    if time.monotonic() + backoff >= guard.lease_until:
                        guard.lost = (
                            f"its lease could not be renewed ({type(exc).__name__}: {exc}) "
                            f"and ran out at {guard.expires_at}"
                        )
                    elif stop.wait(backoff):
                        return
                    backoff = min(backoff * 2, max(1.0, self.ttl_s / 6))
            if guard.lost is not None:
                return

    def _renew(self, client: Elasticsearch, guard: LockGuard) -> None:
        doc = self._lock_doc(guard.owner, guard.token, guard.acquired_at)
        started = time.monotonic()
        resp = client.index(
            index=self.meta_index,
            id=LOCK_ID,
            document=doc,
            if_seq_no=guard.held["seq_no"],
            if_primary_term=guard.held["primary_term"],
        )
        guard.held.update(seq_no=resp["_seq_no"], primary_term=resp["_primary_term"])
        guard.lease_until, guard.expires_at = started + self.ttl_s * 0.9, doc["expires_at"]

    def _still_ours(self, client: Elasticsearch, guard: LockGuard) -> bool:
        """After a conflicting renewal: our own earlier renewal may have landed with its answer
        lost. True (and the guard updated) when the document still carries our token; else the
        lock is marked lost."""
        try:
            current: Any = client.get(index=self.meta_index, id=LOCK_ID)
        except Exception:  # noqa: BLE001 - gone or unreachable: decided below
            current = None
        if current is not None and (current["_source"].get("values") or {}).get("token") == guard.token:
            guard.held.update(seq_no=current["_seq_no"], primary_term=current["_primary_term"])
            return True
        owner = current["_source"].get("owner") if current is not None else None
        guard.lost = f"it was taken over by {owner}" if owner else "the lock document changed under this run"
        return False

    def check(self) -> None:
        """Before every write batch: is the lock this run took still ours (same token, lease not
        run out)? Else stop for good with StoreLocked. No-op when no lock is held (tests)."""
        guard = self.guard
        if guard is None:
            return
        if guard.lost is None and time.monotonic() >= guard.lease_until:
            guard.lost = f"its lease ran out at {guard.expires_at} without a successful renewal"
        if guard.lost is None:
            current = self._read()
            src = current["_source"] if current is not None else None
            if src is None:
                guard.lost = "the lock document is gone (expired and taken, or deleted by hand)"
            elif (src.get("values") or {}).get("token") != guard.token:
                guard.lost = f"it was taken over by {src.get('owner')} (since {src.get('acquired_at')})"
        if guard.lost is not None:
            raise StoreLocked(
                f"lost the write lock on prefix {self.prefix!r} at {self.t.name}: {guard.lost}. This run stopped "
                "before its next write and writes nothing more; run again (the next run repairs what it left)."
            )

    # --- giving it back --------------------------------------------------------------------------
    def stop_keeping(self) -> None:
        """Stop renewing; the writes of this run are over."""
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join(SHORT_TIMEOUT_S + 1)
        self._keeper = None
        self.guard = None

    def release(self, guard: LockGuard, warnings: list[str]) -> None:
        """Delete our lock document; a failure is a warning (the lease runs out by itself)."""
        client = self.t.quick()
        give_up = time.monotonic() + min(SHORT_TIMEOUT_S, self.t.timeout)
        for attempt in range(3):
            try:
                client.delete(
                    index=self.meta_index,
                    id=LOCK_ID,
                    if_seq_no=guard.held["seq_no"],
                    if_primary_term=guard.held["primary_term"],
                )
                return
            except (ConflictError, NotFoundError):
                return  # taken over after expiry: not ours to delete
            except Exception as exc:  # noqa: BLE001 - reported as a warning below
                if attempt == 2 or time.monotonic() + 0.2 * 2**attempt >= give_up:
                    warnings.append(
                        f"could not release the write lock on prefix {self.prefix!r} ({self.t.unavailable(exc)}); "
                        f"it expires by itself at {guard.expires_at} (at once for a run on this host once this "
                        "process ends)"
                    )
                    return
                time.sleep(0.2 * 2**attempt)


def _holder_is_dead(lock: dict[str, Any]) -> bool:
    """True when the lock's process ran on this host and is gone (or a zombie): a killed run.

    A lock from another host can only expire (its TTL), since its process cannot be checked here.
    """
    pid = lock.get("pid")
    if lock.get("host") != socket.gethostname() or not isinstance(pid, int) or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
