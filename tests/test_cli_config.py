"""Which store a command uses and how it connects: ingest.config's documented precedence
(flag > INGEST_STORE > ELASTIC_CLOUD_ID > ELASTICSEARCH_URL > SQLite default) and its checks."""

from __future__ import annotations

import base64

import pytest

from ingest.config import ConfigError, ConnectionRequest, check_environment, resolve

CLOUD_ID = "prod-eu:" + base64.b64encode(b"eu-west-1.aws.found.io:443$abc123$def456").decode()


@pytest.mark.parametrize(
    "flag, env, url, source",
    [
        ("sqlite:///flag.sqlite", {"INGEST_STORE": "http://a:9200", "ELASTICSEARCH_URL": "http://b:9200"}, "sqlite:///flag.sqlite", "--store"),
        (None, {"INGEST_STORE": "http://a:9200", "ELASTIC_CLOUD_ID": CLOUD_ID, "ELASTICSEARCH_URL": "http://b:9200"}, "http://a:9200", "INGEST_STORE"),
        (None, {"ELASTIC_CLOUD_ID": CLOUD_ID, "ELASTICSEARCH_URL": "http://b:9200"}, "", "ELASTIC_CLOUD_ID"),
        (None, {"ELASTICSEARCH_URL": "http://b:9200"}, "http://b:9200", "ELASTICSEARCH_URL"),
        (None, {}, "sqlite:///.ingest/index.sqlite", "default"),
        (None, {"INGEST_STORE": "  "}, "sqlite:///.ingest/index.sqlite", "default"),
    ],
)
def test_precedence(flag, env, url, source):
    config = resolve(flag, environ=env)
    assert (config.url, config.source) == (url, source)


def test_cloud_id_flag_and_display():
    config = resolve(ConnectionRequest(cloud_id=CLOUD_ID), environ={"ELASTICSEARCH_URL": "http://b:9200"})
    assert config.kind == "elasticsearch" and config.cloud_id == CLOUD_ID
    assert config.display == "elastic-cloud:prod-eu" and "[from --cloud-id]" in config.describe()
    with pytest.raises(ConfigError, match="both given"):
        resolve(ConnectionRequest("http://a:9200", cloud_id=CLOUD_ID), environ={})


def test_api_key_falls_back_to_elastic_api_key():
    assert resolve("http://a:9200", environ={"ELASTIC_API_KEY": "k2"}).api_key == "k2"
    assert resolve("http://a:9200", environ={"ES_API_KEY": "k1", "ELASTIC_API_KEY": "k2"}).api_key == "k1"


def test_the_printed_store_never_shows_a_password():
    config = resolve("https://user:secret@es.example.org:9243", environ={})
    assert "secret" not in config.display and "secret" not in config.describe()
    assert config.display == "https://es.example.org:9243"


def test_flags_win_over_environment_for_tls_and_prefix():
    env = {"ES_CA_CERTS": "/env/ca.pem", "INGEST_INDEX_PREFIX": "envprefix"}
    config = resolve(ConnectionRequest("https://a:9200", index_prefix="flagprefix", ca_certs="/flag/ca.pem"), environ=env)
    assert (config.ca_certs, config.index_prefix) == ("/flag/ca.pem", "flagprefix")
    assert resolve("https://a:9200", environ=env).ca_certs == "/env/ca.pem"
    assert resolve(ConnectionRequest("https://a:9200", verify_certs=False), environ={}).verify_certs is False


def test_es_variables_with_a_sqlite_store_are_reported():
    config = resolve(None, environ={"ES_API_KEY": "k", "ES_CA_CERTS": "/ca.pem"})
    assert config.kind == "sqlite" and config.ignored == ("ES_API_KEY", "ES_CA_CERTS")
    assert "no Elasticsearch store is configured" in config.warnings[0]


@pytest.mark.parametrize("url", ["http://[::1", "http://h:99999", "http://h:port", "http://", "sqlite://rel.db", "sqlite:///", "mysql://h", "http://h:9200/?x=1"])
def test_malformed_store_urls_are_config_errors_naming_the_value(url):
    with pytest.raises(ConfigError) as raised:
        resolve(url, environ={})
    assert "--store=" in str(raised.value)


@pytest.mark.parametrize(
    "name, value",
    [
        ("INGEST_WRITE_BATCH_CHUNKS", "abc"),
        ("INGEST_WRITE_BATCH_CHUNKS", "0"),
        ("INGEST_WORKERS", "-2"),
        ("INGEST_WORKERS", "\uff15"),  # a full-width 5: int() takes it, the README's "whole number" does not
        ("INGEST_WRITE_BATCH_CHUNKS", "1_000"),
    ],
)
def test_integer_variables_are_checked(name, value):
    with pytest.raises(ConfigError, match=f"{name}='{value}'"):
        check_environment({name: value})
    check_environment({name: "4"})


@pytest.mark.parametrize("value", ["1e10", "nan", "inf", "0", "-1"])
def test_timeouts_out_of_range_are_config_errors_not_unreachable_nodes(value):
    with pytest.raises(ConfigError, match="INGEST_TIMEOUT"):
        resolve("http://a:9200", environ={"INGEST_TIMEOUT": value})
    with pytest.raises(ConfigError, match="--timeout"):
        resolve(ConnectionRequest("http://a:9200", timeout=float(value)), environ={})


@pytest.mark.parametrize("prefix", ["", "  "])
def test_an_empty_index_prefix_flag_is_refused_not_taken_for_the_default(prefix):
    with pytest.raises(ConfigError, match="--index-prefix"):
        resolve(ConnectionRequest("http://a:9200", index_prefix=prefix), environ={})
