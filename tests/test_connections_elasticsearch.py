"""Connections as Elasticsearch users make them, against a real node with HTTP TLS and security:
each failure is one line naming its cause, with the documented exit code.

The node: ``INGEST_ES_SECURITY=1 INGEST_ES_TLS=1 scripts/elasticsearch-local start`` (a self-signed
CA and a certificate for 127.0.0.1/localhost, made by elasticsearch-certutil). Tests read
``INGEST_TEST_ES_TLS_URL`` (its https URL) and ``INGEST_TEST_ES_TLS_CA`` (its CA file); without
them they are skipped (failed under ``INGEST_REQUIRE_ES=1``). ``INGEST_TEST_ES_TLS_PASSWORD``
when the password is not the script's default.

The hostname-mismatch case connects through a plain TCP relay on 127.0.0.2 (an address the
certificate does not list), so the TLS handshake is the node's own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import pytest

from tests.corpus_builder import make_corpus
from tests.conftest import SECURE_DEFAULT_PASSWORD, SECURE_USER, _no_elasticsearch
from tests.corpus_builder import make_corpus

pytestmark = pytest.mark.elasticsearch

ROOT = Path(__file__).resolve().parents[1]
# Everything the product reads for its connection: cleared so the developer's shell cannot leak in.
CONNECTION_ENV = (
    "INGEST_STORE", "ELASTIC_CLOUD_ID", "ELASTICSEARCH_URL", "INGEST_INDEX_PREFIX", "ES_API_KEY", "ELASTIC_API_KEY",
    "ES_USERNAME", "ES_PASSWORD", "ES_CA_CERTS", "ES_SSL_ASSERT_FINGERPRINT", "INGEST_ES_ANALYZER", "INGEST_TIMEOUT",
)
HOW_TO = (
    "no TLS Elasticsearch for tests: start one with `INGEST_ES_SECURITY=1 INGEST_ES_TLS=1 "
    "INGEST_ES_STATE=/tmp/tls.state INGEST_ES_PORT=9420 scripts/elasticsearch-local start` and set "
    "INGEST_TEST_ES_TLS_URL (its https URL) and INGEST_TEST_ES_TLS_CA (`scripts/elasticsearch-local ca`)"
)


@dataclass(frozen=True)
class TlsNode:
    url: str
    ca: str
    password: str

    @property
    def admin_env(self) -> dict[str, str]:
        return {"ES_USERNAME": SECURE_USER, "ES_PASSWORD": self.password}


@pytest.fixture(scope="module")
def tls_node() -> TlsNode:
    url, ca = os.environ.get("INGEST_TEST_ES_TLS_URL"), os.environ.get("INGEST_TEST_ES_TLS_CA")
    if not url or not ca:
        _no_elasticsearch(HOW_TO)
    node = TlsNode(url.rstrip("/"), ca, os.environ.get("INGEST_TEST_ES_TLS_PASSWORD") or SECURE_DEFAULT_PASSWORD)
    from elasticsearch import Elasticsearch

    client = Elasticsearch(node.url, ca_certs=node.ca, basic_auth=(SECURE_USER, node.password), request_timeout=10, max_retries=0)
    try:
        client.cluster.health(wait_for_status="yellow", timeout="30s")
    except Exception as exc:  # noqa: BLE001
        _no_elasticsearch(f"INGEST_TEST_ES_TLS_URL={url} does not answer with CA {ca}: {exc}")
    finally:
        client.close()
    return node


@pytest.fixture(scope="module")
def indexed(tls_node: TlsNode, tmp_path_factory) -> Iterator[str]:
    """A prefix holding a small corpus, indexed over TLS by the CLI as the superuser."""
    prefix = "tls-" + uuid.uuid4().hex[:10]
    corpus = make_corpus(tmp_path_factory.mktemp("corpus"), n=3)
    done = ingest("run", corpus, "--store", tls_node.url, "--index-prefix", prefix, "--json",
                  env={**tls_node.admin_env, "ES_CA_CERTS": tls_node.ca})
    assert done.returncode == 0, done.stderr
    yield prefix
    from elasticsearch import Elasticsearch

    client = Elasticsearch(tls_node.url, ca_certs=tls_node.ca, basic_auth=(SECURE_USER, tls_node.password))
    names = list(client.indices.get(index=f"{prefix}-*", expand_wildcards="all"))
    if names:
        client.indices.delete(index=",".join(names), ignore_unavailable=True)
    client.close()


def ingest(*args, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The CLI in a subprocess (its real exit code and streams), with only ``env`` for the connection."""
    clean = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    clean.update(env or {})
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], env=clean, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The error line; and no traceback anywhere."""
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def test_a_ca_file_that_does_not_exist_is_a_configuration_error(tls_node, indexed):
    done = ingest("stats", "--store", tls_node.url, "--index-prefix", indexed,
                  env={**tls_node.admin_env, "ES_CA_CERTS": "/nonexistent/ca.pem"})
    assert done.returncode == 2
    assert "'/nonexistent/ca.pem': no such file" in one_error_line(done)


def test_a_ca_file_that_is_not_pem_is_named_as_such(tls_node, indexed, tmp_path):
    garbage = tmp_path / "ca.pem"
    garbage.write_text("this is not a certificate\n")
    done = ingest("stats", "--store", tls_node.url, "--index-prefix", indexed,
                  env={**tls_node.admin_env, "ES_CA_CERTS": str(garbage)})
    assert done.returncode == 2
    assert f"{str(garbage)!r}: not a CA certificate in PEM format" in one_error_line(done)


def test_a_ca_file_that_does_not_exist_is_named_over_http_too(es_url, es_prefix, tmp_path):
    # Over plain HTTP a CA file serves nothing, but naming a missing one is a mistake: said on every run,
    # an unchanged one included (its no-op check must not answer first).
    corpus = make_corpus(tmp_path / "corpus", n=2)
    assert ingest("run", corpus, "--store", es_url, "--index-prefix", es_prefix).returncode == 0
    done = ingest("run", corpus, "--store", es_url, "--index-prefix", es_prefix,
                  env={"ES_CA_CERTS": "/nonexistent/ca.pem"})
    assert done.returncode == 2
    assert "'/nonexistent/ca.pem': no such file" in one_error_line(done)
    garbage = tmp_path / "ca.pem"
    garbage.write_text("not a pem\n")
    for ca, said in ((garbage, "not a CA certificate in PEM format"), (tmp_path, "a folder, not a file")):
        done = ingest("run", corpus, "--store", es_url, "--index-prefix", es_prefix, env={"ES_CA_CERTS": str(ca)})
        assert done.returncode == 2, done.stdout
        assert said in one_error_line(done)


def test_a_self_signed_certificate_without_its_ca_is_not_trusted(tls_node, indexed):
    done = ingest("stats", "--store", tls_node.url, "--index-prefix", indexed, env=tls_node.admin_env)
    assert done.returncode == 3
    line = one_error_line(done)
    assert "TLS certificate not trusted" in line and "ES_CA_CERTS" in line


def test_a_ca_that_did_not_sign_the_certificate_is_named(tls_node, indexed, tmp_path):
    other_ca = make_self_signed_ca(tmp_path)
    done = ingest("stats", "--store", tls_node.url, "--index-prefix", indexed, env={**tls_node.admin_env, "ES_CA_CERTS": other_ca})
    assert done.returncode == 3
    assert "TLS certificate not trusted" in (line := one_error_line(done)) and "did not sign it" in line


def test_with_the_ca_the_index_answers(tls_node, indexed):
    done = ingest("search", "overview", "--as-of", "any", "--store", tls_node.url, "--index-prefix", indexed, "--json",
                  env={**tls_node.admin_env, "ES_CA_CERTS": tls_node.ca})
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["hits"] and data["store"] == tls_node.url


def test_a_wrong_password_is_a_401_naming_the_variables(tls_node, indexed):
    done = ingest("stats", "--store", tls_node.url, "--index-prefix", indexed,
                  env={"ES_USERNAME": SECURE_USER, "ES_PASSWORD": "wrong-password", "ES_CA_CERTS": tls_node.ca})
    assert done.returncode == 3
    assert "authentication failed (401)" in (line := one_error_line(done)) and "ES_USERNAME / ES_PASSWORD" in line


def test_a_reader_that_writes_is_refused_with_the_missing_privilege(tls_node, indexed, tmp_path):
    corpus = make_corpus(tmp_path / "corpus", n=3)
    done = ingest("run", corpus, "--store", tls_node.url, "--index-prefix", indexed,
                  env={"ES_USERNAME": "ingest-public", "ES_PASSWORD": tls_node.password, "ES_CA_CERTS": tls_node.ca})
    assert done.returncode == 3
    line = one_error_line(done)
    assert "not allowed (403)" in line and "ingest-public" in line and "privileges" in line


def test_a_host_name_the_certificate_does_not_list_is_a_hostname_mismatch(tls_node, indexed):
    port = urlsplit(tls_node.url).port
    with tcp_relay("127.0.0.2", ("127.0.0.1", port)) as relay_port:
        done = ingest("stats", "--store", f"https://127.0.0.2:{relay_port}", "--index-prefix", indexed,
                      env={**tls_node.admin_env, "ES_CA_CERTS": tls_node.ca})
    assert done.returncode == 3
    assert "hostname mismatch" in one_error_line(done)


def test_the_certificate_fingerprint_pins_the_node(tls_node, indexed):
    fingerprint = certificate_fingerprint(tls_node.url)
    good = ingest("stats", "--store", tls_node.url, "--index-prefix", indexed, "--ssl-assert-fingerprint", fingerprint,
                  "--json", env=tls_node.admin_env)
    assert good.returncode == 0, good.stderr
    wrong = "00" + fingerprint[2:] if not fingerprint.startswith("00") else "11" + fingerprint[2:]
    bad = ingest("stats", "--store", tls_node.url, "--index-prefix", indexed, "--ssl-assert-fingerprint", wrong, env=tls_node.admin_env)
    assert bad.returncode == 3
    assert "fingerprint does not match" in one_error_line(bad)


def test_no_verify_certs_works_and_warns_loudly(tls_node, indexed):
    done = ingest("stats", "--store", tls_node.url, "--index-prefix", indexed, "--no-verify-certs", "--json", env=tls_node.admin_env)
    assert done.returncode == 0, done.stderr
    assert "WARNING: --no-verify-certs" in done.stderr and "NOT checked" in done.stderr
    assert json.loads(done.stdout)["totals"]["documents"] == 3


def test_http_on_a_tls_port_says_so(tls_node, indexed):
    plain = tls_node.url.replace("https://", "http://")
    done = ingest("stats", "--store", plain, "--index-prefix", indexed, env=tls_node.admin_env)
    assert done.returncode == 3
    assert "https://" in one_error_line(done)


def test_a_prefix_never_indexed_is_exit_3_not_an_empty_answer(tls_node, indexed):
    env = {**tls_node.admin_env, "ES_CA_CERTS": tls_node.ca}
    missing = "never-" + uuid.uuid4().hex[:8]
    for args in (("search", "overview"), ("stats",), ("chunks", "doc-0"), ("show", "0123456789ab")):
        done = ingest(*args, "--store", tls_node.url, "--index-prefix", missing, env=env)
        assert done.returncode == 3, (args, done.stderr)
        assert f"no ingest index at prefix '{missing}' on {tls_node.url}" in one_error_line(done)


def test_elasticsearch_url_is_used_and_said(tls_node, indexed):
    done = ingest("stats", "--index-prefix", indexed, "--json",
                  env={**tls_node.admin_env, "ES_CA_CERTS": tls_node.ca, "ELASTICSEARCH_URL": tls_node.url})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["store"] == tls_node.url
    human = ingest("stats", "--index-prefix", indexed, env={**tls_node.admin_env, "ES_CA_CERTS": tls_node.ca, "ELASTICSEARCH_URL": tls_node.url})
    assert f"store: {tls_node.url} (index prefix {indexed})  [from ELASTICSEARCH_URL]" in human.stderr


def test_ingest_store_wins_over_elasticsearch_url(tls_node, indexed, tmp_path):
    sqlite = f"sqlite:///{tmp_path / 'none.sqlite'}"
    done = ingest("stats", "--index-prefix", indexed,
                  env={**tls_node.admin_env, "ES_CA_CERTS": tls_node.ca, "ELASTICSEARCH_URL": tls_node.url, "INGEST_STORE": sqlite})
    assert done.returncode == 3  # the SQLite file does not exist: INGEST_STORE was used
    assert "[from INGEST_STORE]" in done.stderr and "no index here yet" in one_error_line(done)


# --- helpers -----------------------------------------------------------------------------------


def certificate_fingerprint(url: str) -> str:
    import hashlib
    import ssl

    parts = urlsplit(url)
    pem = ssl.get_server_certificate((parts.hostname, parts.port))
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest().upper()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def make_self_signed_ca(folder: Path) -> str:
    """A CA certificate that signed nothing the node presents."""
    path = folder / "other-ca.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(folder / "other-ca.key"),
         "-out", str(path), "-days", "2", "-subj", "/CN=not the node's CA"],
        check=True, capture_output=True,
    )
    return str(path)


class tcp_relay:
    """Forward every connection on ``host``:(free port) to ``target`` byte for byte."""

    def __init__(self, host: str, target: tuple[str, int]):
        self.server = socket.create_server((host, 0))
        self.target = target
        self.threads: list[threading.Thread] = []
        self.open: list[socket.socket] = []

    def __enter__(self) -> int:
        threading.Thread(target=self._accept, daemon=True).start()
        return self.server.getsockname()[1]

    def __exit__(self, *exc) -> None:
        self.server.close()
        for sock in self.open:
            try:
                sock.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass
