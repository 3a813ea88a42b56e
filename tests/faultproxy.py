"""A small HTTP-aware TCP fault proxy for tests: loopback only, threads, bounded in time.

It sits between ingest and a real Elasticsearch node and, for requests whose ``METHOD path``
matches a rule, injects one fault instead of (or after) forwarding:

- ``status``: answer with an HTTP error (429/503 storms) without forwarding;
- ``reset``: forward the request (Elasticsearch applies it), then reset the connection before
  the answer (a connection reset mid-bulk);
- ``reset_before``: reset without forwarding;
- ``truncate``: forward, then send only half of the answer's body and close;
- ``stall``: never answer (until the proxy closes, at most ``MAX_STALL_S``).

Everything else is forwarded unchanged. Rules can be added and cleared while a run goes on.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import struct
import threading
from dataclasses import dataclass, field
from urllib.parse import urlparse

MAX_STALL_S = 60.0
REASONS = {429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


@dataclass
class Rule:
    pattern: str  # regex searched in "METHOD /path?query"
    action: str  # status | reset | reset_before | truncate | stall
    times: int | None = None  # None: every match
    status: int = 503
    hits: int = 0

    def matches(self, request_line: str) -> bool:
        return (self.times is None or self.hits < self.times) and re.search(self.pattern, request_line) is not None


@dataclass
class FaultProxy:
    upstream: str
    rules: list[Rule] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # "METHOD path -> action" of every request

    def __post_init__(self) -> None:
        parsed = urlparse(self.upstream)
        self._target = (parsed.hostname or "127.0.0.1", parsed.port or 9200)
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._threads: list[threading.Thread] = []
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()
        self._threads.append(accept)

    # --- control -------------------------------------------------------------------------
    def add(self, pattern: str, action: str, times: int | None = None, status: int = 503) -> Rule:
        rule = Rule(pattern, action, times, status)
        with self._lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def close(self) -> None:
        self._closed.set()
        self._server.close()
        for thread in self._threads:
            thread.join(2)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- serving -------------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._server.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _rule_for(self, request_line: str) -> Rule | None:
        with self._lock:
            for rule in self.rules:
                if rule.matches(request_line):
                    rule.hits += 1
                    return rule
        return None

    def _serve(self, conn: socket.socket) -> None:
        upstream = http.client.HTTPConnection(*self._target, timeout=MAX_STALL_S)
        reader = conn.makefile("rb")
        try:
            while not self._closed.is_set():
                request = _read_request(reader)
                if request is None:
                    return
                method, path, headers, body = request
                line = f"{method} {path}"
                rule = self._rule_for(line)
                self.log.append(f"{line} -> {rule.action if rule else 'forward'}")
                if rule and rule.action == "status":
                    conn.sendall(_error_response(rule.status))
                    continue
                if rule and rule.action == "reset_before":
                    _reset(conn)
                    return
                if rule and rule.action == "stall":
                    self._closed.wait(MAX_STALL_S)
                    return
                status, reason, resp_headers, resp_body = _forward(upstream, method, path, headers, body)
                if rule and rule.action == "reset":
                    _reset(conn)
                    return
                raw = _response(status, reason, resp_headers, resp_body)
                if rule and rule.action == "truncate":
                    conn.sendall(raw[: len(raw) - len(resp_body) // 2 - 1])
                    return
                conn.sendall(raw)
        except OSError:
            return
        finally:
            upstream.close()
            try:
                conn.close()
            except OSError:
                pass


def _read_request(reader) -> tuple[str, str, list[tuple[str, str]], bytes] | None:
    first = reader.readline()
    if not first:
        return None
    method, path, _ = first.decode("latin-1").split(" ", 2)
    headers: list[tuple[str, str]] = []
    length = 0
    while True:
        line = reader.readline().decode("latin-1")
        if line in ("\r\n", "\n", ""):
            break
        name, value = line.split(":", 1)
        headers.append((name.strip(), value.strip()))
        if name.strip().lower() == "content-length":
            length = int(value)
    body = reader.read(length) if length else b""
    return method, path, headers, body


def _forward(upstream: http.client.HTTPConnection, method: str, path: str, headers, body: bytes):
    skip = {"host", "connection", "content-length"}
    upstream.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in headers:
        if name.lower() not in skip:
            upstream.putheader(name, value)
    upstream.putheader("Host", "%s:%d" % (upstream.host, upstream.port))
    upstream.putheader("Content-Length", str(len(body)))
    upstream.endheaders(body)
    resp = upstream.getresponse()
    data = resp.read()
    kept = [(k, v) for k, v in resp.getheaders() if k.lower() not in ("transfer-encoding", "connection", "content-length")]
    return resp.status, resp.reason, kept, data


def _response(status: int, reason: str, headers, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += f"Content-Length: {len(body)}\r\n\r\n"
    return head.encode("latin-1") + body


def _error_response(status: int) -> bytes:
    kind = "es_rejected_execution_exception" if status == 429 else "unavailable_shards_exception"
    body = json.dumps({"error": {"type": kind, "reason": f"injected by the fault proxy ({status})"}, "status": status}).encode()
    headers = [("Content-Type", "application/json"), ("X-Elastic-Product", "Elasticsearch")]
    return _response(status, REASONS.get(status, "Error"), headers, body)


def _reset(conn: socket.socket) -> None:
    """Close with RST (SO_LINGER 0): the client sees 'connection reset by peer'."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()
