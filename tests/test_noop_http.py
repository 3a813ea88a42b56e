"""An unchanged run on Elasticsearch is decided over plain HTTP without importing the client
(ingest.store.elasticsearch.unchanged_check), prints exactly what the full path prints, and every
doubt falls back to the full path, which then does and says what it always did. Real nodes only:
the plain one, the secured one (INGEST_TEST_ES_SECURE_URL) and the TLS one (INGEST_TEST_ES_TLS_URL)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from ingest.journal import JOURNAL
from ingest.settings import Settings
from tests.corpus_builder import make_corpus, write_doc

from tests.conftest import CONNECTION_ENV, drop_prefix

pytestmark = pytest.mark.elasticsearch

ROOT = Path(__file__).resolve().parents[1]
# The console entry point in-process; at exit it says whether the Elasticsearch client was imported.
PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write(f\"\\nCLIENT_IMPORTED={'elasticsearch' in sys.modules}\\n\"))\n"
    "from ingest.cli import main\n"
    "sys.argv = ['ingest', *sys.argv[1:]]\n"
    "main()\n"
)


class Ran:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.code = done.returncode
        lines = done.stderr.rstrip("\n").splitlines()
        assert lines and lines[-1].startswith("CLIENT_IMPORTED="), done.stderr
        self.client_imported = lines[-1] == "CLIENT_IMPORTED=True"
        self.stderr = "\n".join(lines[:-1]).rstrip("\n")
        self.stdout = done.stdout

    @property
    def data(self) -> dict:
        return json.loads(self.stdout)

    def comparable(self) -> tuple[int, str, str]:
        """Exit code and both streams, timings blanked."""
        blank = (lambda text: re.sub(r'"elapsed_s": [0-9.]+|\([0-9.]+s\)|time="[0-9.]+"|timing: .*', "T", text))
        return self.code, blank(self.stdout), blank(self.stderr)


def ingest(*args: object, env: dict[str, str] | None = None, full_path: bool = False) -> Ran:
    clean = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    clean.update(env or {})
    if full_path:
        clean["INGEST_NO_FAST_NOOP"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)], env=clean, capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    return Ran(done)


@pytest.fixture
def built(tmp_path, es_url, es_prefix):
    corpus = make_corpus(tmp_path / "corpus")
    args = ("run", corpus, "--store", es_url, "--index-prefix", es_prefix)
    first = ingest(*args, "--json")
    assert first.code == 0 and first.data["documents"]["new"] == 6, first.stderr
    return corpus, args


def test_an_unchanged_run_imports_no_client_and_prints_what_the_full_path_prints(built, tmp_path):
    corpus, args = built
    for extra in (["--json"], [], ["--verbose"], ["--quiet"]):
        fast = ingest(*args, *extra, "--junit", tmp_path / "fast.xml")
        full = ingest(*args, *extra, "--junit", tmp_path / "full.xml", full_path=True)
        assert not fast.client_imported and full.client_imported, extra
        assert fast.comparable() == full.comparable(), extra
        assert fast.code == 0
        junit = [re.sub(r'time="[0-9.]+"', "", (tmp_path / f"{n}.xml").read_text()) for n in ("fast", "full")]
        assert junit[0] == junit[1]
    assert ingest(*args, "--json").data["documents"]["unchanged"] == 6


def test_a_rejected_document_is_reported_the_same_way_without_the_client(built):
    corpus, args = built
    write_doc(corpus, "folder0/bad.md", "Not A Slug")
    assert ingest(*args, "--json").code == 1  # the full path: the new file is read
    fast, full = ingest(*args, "--json"), ingest(*args, "--json", full_path=True)
    assert not fast.client_imported and fast.code == 1
    assert fast.comparable() == full.comparable()
    assert fast.data["documents"]["rejected"] == 1 and fast.data["problems"]


def test_a_changed_file_falls_back_and_is_written(built):
    corpus, args = built
    write_doc(corpus, "folder0/doc0.md", "doc-0", version="2", salt="new text")
    ran = ingest(*args, "--json")
    assert ran.client_imported and ran.code == 0
    assert ran.data["documents"]["new"] == 1 and ran.data["documents"]["removed"] == 1
    assert not ingest(*args, "--json").client_imported  # and the next run is unchanged again


def test_a_deleted_file_falls_back_and_is_removed(built):
    corpus, args = built
    (corpus / "documents" / "folder1" / "doc1.md").unlink()
    ran = ingest(*args, "--json")
    assert ran.client_imported and ran.code == 0 and ran.data["documents"]["removed"] == 1


def test_a_pending_journal_falls_back_and_is_repaired(built, make_es_store):
    corpus, args = built
    store = make_es_store(Settings())
    with store.lock("a run killed after recording its journal"):
        store.set_meta({JOURNAL: json.dumps([["doc-1", "1"]])})
    ran = ingest(*args, "--json")
    assert ran.client_imported and ran.code == 0
    assert ran.data["repaired"] == {"orphan_chunks": 0, "incomplete_documents": 0}
    assert make_es_store(Settings()).get_meta()[JOURNAL] == ""
    assert not ingest(*args, "--json").client_imported


def test_a_tampered_role_alias_falls_back_and_is_repaired(built, es_url, es_prefix):
    corpus, args = built
    client = Elasticsearch(es_url)
    try:
        alias = f"{es_prefix}-chunks-public"
        (index,) = client.indices.get_alias(name=alias)
        client.indices.update_aliases(actions=[{"remove": {"index": index, "alias": alias}}])
        ran = ingest(*args, "--json")
        assert ran.client_imported and ran.code == 0
        assert ran.data["access_repaired"] == [f"added {index} to alias {alias}"]
        assert index in client.indices.get_alias(name=alias)
    finally:
        client.close()
    assert not ingest(*args, "--json").client_imported


def test_changed_roles_fall_back_and_are_followed(built, es_url, es_prefix):
    corpus, args = built
    (corpus / "ingest.toml").write_text(
        '[roles]\npublic = ["public"]\npartner = ["public", "partner"]\nstaff = ["public", "partner", "staff"]\n'
        'auditor = ["public", "partner"]\n'
    )
    ran = ingest(*args, "--json")
    assert ran.client_imported and ran.code == 0
    assert any(f"{es_prefix}-chunks-auditor" in change for change in ran.data["access_repaired"])
    stats = ingest("stats", "--store", es_url, "--index-prefix", es_prefix, "--json")
    assert stats.data["meta"]["roles"]["auditor"] == ["public", "partner"]
    again = ingest(*args, "--json")
    assert not again.client_imported and again.data["access_repaired"] == []


def test_a_lock_held_by_another_run_falls_back_to_its_message(built, make_es_store):
    corpus, args = built
    store = make_es_store(Settings())
    with store.lock("another run"):
        fast, full = ingest(*args, "--json"), ingest(*args, "--json", full_path=True)
    assert fast.client_imported and fast.code == full.code != 0
    assert fast.comparable() == full.comparable()
    assert "another run" in fast.stdout + fast.stderr


def test_a_wrong_password_on_the_secured_node_is_todays_error(tmp_path, es_secure):
    corpus = make_corpus(tmp_path / "corpus")
    prefix = f"t-noop-{os.getpid()}"
    args = ("run", corpus, "--store", es_secure.url, "--index-prefix", prefix, "--json")
    good = {"ES_USERNAME": es_secure.username, "ES_PASSWORD": es_secure.password}
    try:
        assert ingest(*args, env=good).code == 0
        unchanged = ingest(*args, env=good)
        assert not unchanged.client_imported and unchanged.code == 0
        wrong = {**good, "ES_PASSWORD": "not-the-password"}
        fast, full = ingest(*args, env=wrong), ingest(*args, env=wrong, full_path=True)
        assert fast.client_imported and fast.code == 3
        assert fast.comparable() == full.comparable()
        assert "401" in fast.stdout
    finally:
        drop_prefix(es_secure.url, prefix, basic_auth=(es_secure.username, es_secure.password))


def test_an_api_key_is_sent_as_the_client_sends_it(tmp_path, es_secure):
    if os.environ.get("INGEST_TEST_ES_API_KEYS") != "1":  # as tests/test_security_elasticsearch.py
        pytest.skip("API keys are opt-in: INGEST_TEST_ES_API_KEYS=1 on a node that can create them")
    corpus = make_corpus(tmp_path / "corpus")
    prefix = f"t-noop-key-{os.getpid()}"
    args = ("run", corpus, "--store", es_secure.url, "--index-prefix", prefix, "--json")
    admin = Elasticsearch(es_secure.url, basic_auth=(es_secure.username, es_secure.password))
    try:
        key = admin.security.create_api_key(name=prefix, expiration="1h")["encoded"]
        assert ingest(*args, env={"ES_API_KEY": key}).code == 0
        unchanged = ingest(*args, env={"ES_API_KEY": key})
        assert not unchanged.client_imported and unchanged.code == 0
        assert unchanged.data["documents"]["unchanged"] == 6
        wrong = {"ES_API_KEY": "bm90LWEta2V5"}
        fast, full = ingest(*args, env=wrong), ingest(*args, env=wrong, full_path=True)
        assert fast.client_imported and fast.code == 3 and fast.comparable() == full.comparable()
    finally:
        admin.security.invalidate_api_key(name=prefix)
        admin.close()
        drop_prefix(es_secure.url, prefix, basic_auth=(es_secure.username, es_secure.password))


def test_the_tls_node_with_its_ca_and_without(tmp_path):
    url, ca = os.environ.get("INGEST_TEST_ES_TLS_URL"), os.environ.get("INGEST_TEST_ES_TLS_CA")
    if not url or not ca:
        pytest.skip("no TLS node (INGEST_TEST_ES_TLS_URL, INGEST_TEST_ES_TLS_CA)")
    from tests.conftest import SECURE_DEFAULT_PASSWORD, SECURE_USER

    password = os.environ.get("INGEST_TEST_ES_TLS_PASSWORD") or SECURE_DEFAULT_PASSWORD
    corpus = make_corpus(tmp_path / "corpus")
    prefix = f"t-noop-tls-{os.getpid()}"
    args = ("run", corpus, "--store", url, "--index-prefix", prefix, "--json")
    auth = {"ES_USERNAME": SECURE_USER, "ES_PASSWORD": password}
    try:
        assert ingest(*args, env={**auth, "ES_CA_CERTS": ca}).code == 0
        fast = ingest(*args, env={**auth, "ES_CA_CERTS": ca})
        full = ingest(*args, env={**auth, "ES_CA_CERTS": ca}, full_path=True)
        assert not fast.client_imported and fast.comparable() == full.comparable() and fast.code == 0
        fast, full = ingest(*args, env=auth), ingest(*args, env=auth, full_path=True)  # the CA not given
        assert fast.client_imported and fast.code == 3
        assert fast.comparable() == full.comparable()
        assert "not trusted" in fast.stdout
    finally:
        drop_prefix(url, prefix, ca_certs=ca, basic_auth=(SECURE_USER, password))


@pytest.mark.parametrize(
    "credentials",
    [{"api_key": "aWQ6a2V5"}, {"username": "elastic", "password": "p:ss w0rd"}, {"username": "reader"}],
    ids=["api key", "user and password", "user without password"],
)
def test_the_authorization_header_is_the_clients(credentials):
    from ingest.config import ConnectionConfig
    from ingest.store.elasticsearch.unchanged_check import _Http
    from ingest.store.es_connection import connect

    connection = ConnectionConfig("http://127.0.0.1:9200", **credentials)
    client = connect(connection)
    try:
        assert _Http(connection).headers["authorization"] == client._headers["authorization"]
    finally:
        client.close()


def test_a_password_the_client_cannot_send_is_left_to_the_client(tmp_path, es_url, es_prefix):
    corpus = make_corpus(tmp_path / "corpus")
    args = ("run", corpus, "--store", es_url, "--index-prefix", es_prefix, "--json")
    assert ingest(*args).code == 0
    env = {"ES_USERNAME": "elastic", "ES_PASSWORD": "pässword"}  # the client encodes credentials as ASCII
    fast, full = ingest(*args, env=env), ingest(*args, env=env, full_path=True)
    assert fast.client_imported and fast.comparable() == full.comparable()


# At exit: which of the modules only a run that writes needs were loaded (one line, after the run's output).
LOADED_PROBE = (
    "import atexit, sys\n"
    "WRITING = ('ingest.chunk', 'ingest.sync', 'ingest.pipeline', 'elasticsearch')\n"
    "atexit.register(lambda: sys.stderr.write('\\nLOADED=' + ','.join(m for m in WRITING if m in sys.modules) + '\\n'))\n"
    "from ingest.__main__ import main\n"
    "sys.argv = ['ingest', *sys.argv[1:]]\n"
    "main()\n"
)


def loaded_by(*args: object) -> tuple[int, list[str]]:
    clean = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    done = subprocess.run(
        [sys.executable, "-c", LOADED_PROBE, *map(str, args)], env=clean, capture_output=True, text=True, timeout=300
    )
    last = done.stderr.rstrip("\n").splitlines()[-1]
    assert last.startswith("LOADED="), done.stderr
    return done.returncode, [m for m in last.removeprefix("LOADED=").split(",") if m]


def test_an_unchanged_run_loads_neither_the_chunker_nor_the_writing_side_of_a_run(built, tmp_path):
    """Start-up is most of an unchanged run: what only writing needs stays unloaded."""
    corpus, args = built
    assert loaded_by(*args, "--json") == (0, [])
    write_doc(corpus, "folder0/extra.md", "doc-extra")
    code, loaded = loaded_by(*args, "--json")  # a run that writes loads them, as it always did
    assert code == 0 and set(loaded) == {"ingest.chunk", "ingest.sync", "ingest.pipeline", "elasticsearch"}


def test_the_store_is_read_while_the_folder_is_still_being_hashed(built, es_url, es_prefix):
    """The node's answers are waited for while the folder's bytes are hashed, not after: the
    folder's hashing here does not finish until the store's records have been asked for."""
    from ingest import api
    from ingest.config import resolve
    from ingest.corpus import FolderAhead
    from ingest.settings import load_settings
    from tests.faultproxy import FaultProxy

    corpus, _ = built
    settings = load_settings(corpus)
    with FaultProxy(es_url) as proxy:

        class HashedOnceRecordsAsked(FolderAhead):
            asked_first = False

            def _read(self) -> None:
                for _ in range(500):  # at most 10 s: then hashed anyway, and the test fails below
                    if any("/_search" in line for line in proxy.log):
                        HashedOnceRecordsAsked.asked_first = True
                        break
                    time.sleep(0.02)
                super()._read()

        connection = resolve(proxy.url, index_prefix=es_prefix, environ={})
        ahead = HashedOnceRecordsAsked(corpus)
        result = api.unchanged_run(corpus, connection, settings, settings.chunking, api.RunOptions(), ahead)
    assert result is not None and result.to_json()["documents"]["unchanged"] == 6  # the no-op, reported
    assert HashedOnceRecordsAsked.asked_first
