"""Talking to Elasticsearch for one store: client calls under one deadline with retries, client errors
mapped to StoreError kinds, bounded bulk writes, searches and scans, and refreshing what was written."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from elasticsearch import (
    ApiError,
    AuthenticationException,
    AuthorizationException,
    ConflictError,
    ConnectionError,
    ConnectionTimeout,
    Elasticsearch,
    NotFoundError,
    TransportError,
)
from elasticsearch.serializer import JsonSerializer

from ingest.store.base import ItemError, QueryTooLarge, StoreError, StoreUnavailable
from ingest.store.elasticsearch.layout_rules import closed_message
from ingest.store.elasticsearch.names import IndexNames

BULK_MAX_BYTES = 5 * 1024 * 1024
BULK_MAX_ACTIONS = 500
RETRY_STATUSES = (429, 502, 503, 504)
# What a bulk response keeps of each item: all that streaming_bulk and _bulk_once read (a whole item,
# with its version, result and shard counts, is three times as long to send and decode).
BULK_ITEM_FIELDS = ["items.*._index", "items.*._id", "items.*.status", "items.*.error"]
PAGE = 1000  # hits per page when scrolling with search_after
# Document records are read whole on every run: few, large pages (each page is a sorted search,
# ~0.1 s on the node for 1,000 records; 5,000 records cost about as much as 1,000). At most
# index.max_result_window (10,000 by default).
RECORDS_PAGE = 5000
DEFAULT_TIMEOUT_S = 30.0
SHORT_TIMEOUT_S = 5.0  # check(), lock release and refresh after a failure: the lock expires anyway

T = TypeVar("T")
MISSING: Any = ...  # "no default": a 404 is an error

# A bulk action: {"_op_type", "_index", "_id", "_source"?} as elasticsearch.helpers takes it.
Action = dict[str, Any]


class Transport:
    """The client of one store, with its deadline per operation, retries and error mapping.

    ``before_write`` runs before every bulk attempt (the store's lock check), so a run that lost
    its write lock never sends another write."""

    def __init__(
        self,
        client: Elasticsearch,
        name: str,
        prefix: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 5,
        initial_backoff: float = 0.5,
        before_write: Callable[[], None] = lambda: None,
    ):
        self.client = client
        self.name = name
        self.prefix = prefix
        # The longest one store operation (a request and its retries, or a bulk write making no
        # progress) waits for a cluster that does not answer before StoreUnavailable.
        self.timeout = timeout
        self.max_retries = max_retries
        self.initial_backoff = initial_backoff
        self.before_write = before_write
        self.dirty: set[str] = set()  # indices written since the last refresh
        self._local = threading.local()  # the current operation's deadline (per thread)

    @property
    def where(self) -> str:
        return f"Elasticsearch at {self.name}"

    @property
    def es(self) -> Elasticsearch:
        """The client for one request: no client-side retries (ours are in call and bulk) and a
        request timeout bounded by what is left of the current operation's deadline."""
        return self.client.options(request_timeout=self._remaining(), max_retries=0)

    def quick(self, seconds: float = SHORT_TIMEOUT_S) -> Elasticsearch:
        """The client for one short request outside any deadline (health, cleanup, lock release)."""
        return self.client.options(request_timeout=min(seconds, self.timeout), max_retries=0)

    def _remaining(self) -> float:
        deadline = getattr(self._local, "deadline", None)
        return self.timeout if deadline is None else max(0.5, deadline - time.monotonic())

    @contextmanager
    def operation(self, seconds: float | None = None) -> Iterator[float]:
        """One deadline for an operation and every request nested in it."""
        outer = getattr(self._local, "deadline", None)
        if outer is None:
            self._local.deadline = time.monotonic() + (self.timeout if seconds is None else seconds)
        try:
            yield self._local.deadline
        finally:
            if outer is None:
                self._local.deadline = None

    def _backoff(self, attempt: int, exc: Exception) -> tuple[float, int]:
        """How long to wait before retry ``attempt`` and how many attempts this failure gets."""
        wait = min(5.0, self.initial_backoff * 2**attempt)
        return wait, (min(2, self.max_retries) if refused(exc) else self.max_retries)

    def call(self, fn: Callable[[], T], missing: Any = MISSING) -> T:
        """Run one client call; 404 gives ``missing`` when given, transport errors become StoreErrors.

        Connection failures and 429/502/503/504 are retried with backoff within the operation's
        deadline (``timeout``); each request waits at most what is left of it.
        """
        with self.operation() as deadline:
            attempt = 0
            while True:
                try:
                    return fn()
                except NotFoundError as exc:
                    if missing is not MISSING:
                        return missing  # type: ignore[no-any-return]
                    raise self.unavailable(exc) from None
                except ConflictError:
                    raise
                except (ApiError, TransportError) as exc:
                    transient = isinstance(exc, (ConnectionError, ConnectionTimeout)) or (
                        isinstance(exc, ApiError) and exc.status_code in RETRY_STATUSES
                    )
                    wait, limit = self._backoff(attempt, exc)
                    if not transient or attempt >= limit or time.monotonic() + wait >= deadline:
                        raise self.unavailable(exc) from None
                    time.sleep(wait)
                    attempt += 1

    def refresh(self) -> None:
        """Make everything written so far searchable."""
        if not self.dirty:
            return
        indices = ",".join(sorted(self.dirty))
        self.call(lambda: self.es.indices.refresh(index=indices, ignore_unavailable=True))
        self.dirty.clear()

    # --- bulk ------------------------------------------------------------------------------------
    def bulk(self, actions: list[Action]) -> tuple[int, list[ItemError]]:
        """Send actions in bounded requests; (how many succeeded, every item still refused).

        Per-item and per-request 429/502/503/504 are retried by streaming_bulk with backoff; an
        item still refused for overload after that stops the write (StoreUnavailable). A
        connection failure retries the items not yet answered, with backoff, until no item has
        been answered for ``timeout`` seconds, then gives up with StoreUnavailable. Any other
        refusal (a mapping error, an immense term, a 500 on the request) is an ItemError.
        Before every attempt ``before_write`` runs (the lock check).
        """
        pending = actions
        progress = _Progress()
        attempt = 0
        while pending:
            self.before_write()
            answered: set[tuple[str, str]] = set()
            try:
                return self._bulk_once(pending, answered, progress)
            except (ApiError, TransportError) as exc:
                if isinstance(exc, ApiError):
                    raise self.unavailable(exc) from None
                pending = [a for a in pending if (a["_index"], a["_id"]) not in answered]
                wait, limit = self._backoff(attempt, exc)
                if attempt >= limit or time.monotonic() - progress.last + wait >= self.timeout:
                    raise self.unavailable(exc) from None
                time.sleep(wait)
                attempt += 1
        return progress.done, progress.errors

    def _bulk_once(
        self, pending: list[Action], answered: set[tuple[str, str]], progress: _Progress
    ) -> tuple[int, list[ItemError]]:
        """One pass of streaming_bulk over ``pending``; what was answered is noted as it comes."""
        # Imported on the first write: the helpers (and the async client they pull in) cost a run
        # that writes nothing a noticeable share of its start-up.
        from elasticsearch.helpers import streaming_bulk

        for ok, item in streaming_bulk(
            self.es,
            pending,
            chunk_size=BULK_MAX_ACTIONS,
            max_chunk_bytes=BULK_MAX_BYTES,
            raise_on_error=False,
            raise_on_exception=False,
            max_retries=self.max_retries,
            initial_backoff=self.initial_backoff,
            max_backoff=max(1.0, min(30.0, self.timeout / 4)),
            retry_on_status=RETRY_STATUSES,
            expand_action_callback=_expanded,  # type: ignore[arg-type]  # takes what it returns
            filter_path=BULK_ITEM_FIELDS,
        ):
            op, info = next(iter(item.items()))
            answered.add((info.get("_index", ""), str(info.get("_id"))))
            progress.last = time.monotonic()
            if info.get("_index"):
                self.dirty.add(info["_index"])
            if ok or (op == "delete" and info.get("status") == 404):
                progress.done += 1 if ok else 0
                continue
            exc = info.get("exception")
            if isinstance(exc, TransportError) and not isinstance(exc, ApiError):
                raise exc
            if info.get("status") in RETRY_STATUSES:
                raise (
                    self.unavailable(exc)
                    if isinstance(exc, ApiError)
                    else StoreUnavailable(
                        f"{self.where}: overloaded or unavailable (status {info.get('status')} "
                        f"after {self.max_retries} retries: {item_reason(info)}); retry later"
                    )
                )
            progress.errors.append(ItemError(str(info.get("_id")), item_reason(info)))
        return progress.done, progress.errors

    # --- reads -----------------------------------------------------------------------------------
    def search_response(
        self, index: str, body: dict[str, Any], search_type: str | None = None
    ) -> dict[str, Any] | None:
        """The search response, or None when the indices do not exist yet. A shard that failed
        or timed out is an error with its reason, never fewer hits. What this store wrote is
        refreshed first, so a store reads its own writes."""
        self.refresh()
        resp: dict[str, Any] | None = self.call(
            lambda: self.es.search(index=index, body=body, search_type=search_type).body, missing=None
        )
        if resp is not None:
            shards = resp.get("_shards") or {}
            if shards.get("failed") or resp.get("timed_out"):
                raise StoreUnavailable(
                    f"{self.where}: {shards.get('failed', 0)} of {shards.get('total', '?')} shards "
                    f"failed for {index} ({_shard_failure(shards)}); results would be incomplete. `ingest run` "
                    "repairs the aliases if an index that is not ingest's was added to them."
                )
        return resp

    def search(self, index: str, body: dict[str, Any], search_type: str | None = None) -> list[dict[str, Any]]:
        resp = self.search_response(index, body, search_type)
        return resp["hits"]["hits"] if resp else []

    def scan(
        self, index: str, query: dict[str, Any], sort: list[dict[str, str]], source: Any = True, page: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every hit, in sort order, page by page with search_after (sort must be unique);
        ``page`` hits per request (None: PAGE)."""
        page = page or PAGE
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {"query": query, "size": page, "sort": sort, "_source": source}
            body["track_total_hits"] = False
            if after is not None:
                body["search_after"] = after
            hits = self.search(index, body)
            yield from hits
            if len(hits) < page:
                return
            after = hits[-1]["sort"]

    # --- errors ----------------------------------------------------------------------------------
    def unavailable(self, exc: Exception) -> StoreError:
        """The StoreError kind and one clear message for a client failure."""
        where = self.where
        if isinstance(exc, AuthenticationException):
            return StoreUnavailable(
                f"{where}: authentication failed (401); check ES_API_KEY or ES_USERNAME/ES_PASSWORD"
            )
        if isinstance(exc, AuthorizationException):
            return StoreUnavailable(
                f"{where}: not allowed (403): {reason(exc)}; check the privileges of the API key or user "
                f"on the {self.prefix}-* indices"
            )
        if isinstance(exc, ApiError):
            if root_type(exc).startswith("too_many"):
                return QueryTooLarge(f"{where}: the query is too large to run ({reason(exc)}); use fewer words")
            if exc.status_code in RETRY_STATUSES:
                return StoreUnavailable(
                    f"{where}: overloaded or unavailable ({exc.status_code}: {reason(exc)}); retry later"
                )
            closed = _closed_index(exc)
            if closed:
                return StoreError(closed_message(self.name, IndexNames(self.prefix), closed))
            return StoreError(f"{where}: {exc.status_code} {error_type(exc) or ''}: {reason(exc)}")
        if isinstance(exc, ConnectionTimeout):
            return StoreUnavailable(
                f"{where}: no answer within {self.timeout:g} s (the store timeout); check that it is running "
                "and not overloaded"
            )
        if isinstance(exc, TransportError):
            text = str(exc)
            hint = (
                "check ES_CA_CERTS and the https URL"
                if "SSL" in text or "certificate" in text
                else ("check that it is running and that --store / INGEST_STORE is right")
            )
            return StoreUnavailable(f"{where}: cannot connect ({type(exc).__name__}: {text}); {hint}")
        return StoreUnavailable(f"{where}: {type(exc).__name__}: {exc}; check that it is running and reachable")


# Bulk action lines are encoded here, once per action, instead of by the client's serializer (which
# makes a JSON encoder per line) after a copy of every action (0.1–0.2 CPU-s per 27,000 chunks).
_ENCODE_STRING = json.JSONEncoder(ensure_ascii=False).encode
_PLAIN_ACTION_KEYS = frozenset(("_op_type", "_index", "_id", "_source"))


class ActionLine(dict[str, Any]):
    """The header of one bulk action ({op: {"_index", "_id"}}), carrying its encoded line for
    :class:`BulkSerializer`; to anything else (the helpers' error paths) a plain dict."""

    __slots__ = ("line",)
    line: bytes


class BulkSerializer(JsonSerializer):
    """The client's JSON serializer, except that an :class:`ActionLine` is sent as already encoded."""

    def dumps(self, data: Any) -> bytes:
        if type(data) is ActionLine:
            return data.line
        encoded: bytes = super().dumps(data)
        return encoded


def _expanded(action: Action) -> tuple[Any, Any]:
    """(header, source) of one action for streaming_bulk, as its own ``expand_action`` makes them, the
    header of ours (index with a source, delete) with its line encoded (see BulkSerializer)."""
    op, index, doc_id = action.get("_op_type", "index"), action.get("_index"), action.get("_id")
    plain = (op == "index" and "_source" in action) or (op == "delete" and "_source" not in action)
    if plain and isinstance(index, str) and isinstance(doc_id, str) and action.keys() <= _PLAIN_ACTION_KEYS:
        header = ActionLine({op: {"_index": index, "_id": doc_id}})
        header.line = f'{{"{op}":{{"_index":{_ENCODE_STRING(index)},"_id":{_ENCODE_STRING(doc_id)}}}}}'.encode(
            "utf-8", "surrogatepass"
        )
        return header, action.get("_source")
    from elasticsearch.helpers import expand_action

    return expand_action(action)


class _Progress:
    """What one bulk write has achieved so far, across its retries."""

    def __init__(self) -> None:
        self.done = 0
        self.errors: list[ItemError] = []
        self.last = time.monotonic()  # when an item was last answered


def connect(url: str, request_timeout: float) -> Elasticsearch:
    """The client for ``url`` with credentials and TLS from the environment (ingest.config is the
    one place that reads them; ingest.store.es_connection builds the client). ``open_store``
    passes a client built from the command's full configuration instead."""
    from ingest.config import from_url
    from ingest.store.es_connection import connect as connect_config

    return connect_config(from_url(url), request_timeout)


def without_credentials(url: str) -> str:
    return re.sub(r"//[^/@]+@", "//", url)


def _error_body(exc: ApiError) -> Any:
    body = exc.body if isinstance(exc.body, dict) else {}
    return body.get("error")


def _closed_index(exc: ApiError) -> str | None:
    """The index an ``index_closed_exception`` names (an index closed outside ingest), else None."""
    error = _error_body(exc)
    if not isinstance(error, dict):
        return None
    for cause in [*(error.get("root_cause") or []), error]:
        if isinstance(cause, dict) and cause.get("type") == "index_closed_exception" and cause.get("index"):
            return str(cause["index"])
    return None


def error_type(exc: ApiError) -> str | None:
    error = _error_body(exc)
    return error.get("type") if isinstance(error, dict) else None


def root_type(exc: ApiError) -> str:
    error = _error_body(exc)
    if isinstance(error, dict):
        return str(((error.get("root_cause") or [error])[0]).get("type") or error.get("type") or "")
    return ""


def reason(exc: ApiError) -> str:
    error = _error_body(exc)
    if isinstance(error, dict):
        cause = (error.get("root_cause") or [error])[0]
        return str(cause.get("reason") or error.get("reason") or error.get("type"))
    return str(error or exc.message)


def refused(exc: Exception) -> bool:
    """Nothing listens there (a wrong URL, a stopped node): retried briefly only, to fail fast."""
    text = f"{exc!r} {exc.__cause__!r}".lower()
    return "refused" in text or "failed to establish a new connection" in text


def item_reason(info: dict[str, Any]) -> str:
    error = info.get("error")
    if isinstance(error, dict):
        text = f"{error.get('type')}: {error.get('reason')}"
        cause = error.get("caused_by")
        if isinstance(cause, dict) and cause.get("reason"):
            text += f" ({cause.get('reason')})"
        return text
    return f"status {info.get('status')}: {error}"


def _shard_failure(shards: dict[str, Any]) -> str:
    failures = shards.get("failures") or [{}]
    first = failures[0] if isinstance(failures[0], dict) else {}
    why = first.get("reason") or {}
    return f"{first.get('index', '?')}: {why.get('type', 'timed out')}: {why.get('reason', '')}"
