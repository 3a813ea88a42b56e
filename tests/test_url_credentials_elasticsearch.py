"""Credentials in the store URL (`--store http://user:pass@host:9200`) are meant for that store: they win
over ES_USERNAME/ES_PASSWORD (and an API key) left in the environment, with a warning naming those, on the
fast unchanged-run check and the full path alike. A wrong password in the URL is named as such."""

from __future__ import annotations

import os

import pytest

from tests.conftest import drop_prefix
from tests.corpus_builder import make_corpus
from tests.test_noop_http import ingest

pytestmark = pytest.mark.elasticsearch


def with_credentials(url: str, user: str, password: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{user}:{password}@{rest}"


def test_the_urls_credentials_win_over_the_environments(tmp_path, es_secure):
    corpus = make_corpus(tmp_path / "corpus")
    prefix = f"t-urlcred-{os.getpid()}"
    url = with_credentials(es_secure.url, es_secure.username, es_secure.password)
    args = ("run", corpus, "--store", url, "--index-prefix", prefix, "--json")
    ambient = {"ES_USERNAME": es_secure.username, "ES_PASSWORD": "left-over-from-another-cluster"}
    try:
        first = ingest(*args, env=ambient)
        assert first.code == 0, first.stdout
        assert first.data["documents"]["new"] == 6
        assert "ES_USERNAME, ES_PASSWORD set, but the store URL carries its own user and password" in first.stderr
        fast, full = ingest(*args, env=ambient), ingest(*args, env=ambient, full_path=True)
        assert fast.code == full.code == 0 and fast.comparable() == full.comparable()
        assert fast.data["documents"]["unchanged"] == 6
        assert es_secure.password not in first.stdout + first.stderr + fast.stdout + fast.stderr

        wrong = with_credentials(es_secure.url, es_secure.username, "not-the-password")
        good_env = {"ES_USERNAME": es_secure.username, "ES_PASSWORD": es_secure.password}
        refused = ingest("run", corpus, "--store", wrong, "--index-prefix", prefix, "--json", env=good_env)
        assert refused.code == 3 and "check the user and password in the store URL" in refused.stdout, refused.stdout
    finally:
        drop_prefix(es_secure.url, prefix, basic_auth=(es_secure.username, es_secure.password))
