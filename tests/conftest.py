"""Shared fixtures. Elasticsearch tests run against a real node:

- ``INGEST_TEST_ES_URL`` if set (e.g. from ``scripts/elasticsearch-local start``);
- else a testcontainers container where a Docker engine answers;
- else they are skipped with a message, or fail under ``INGEST_REQUIRE_ES=1`` (as in .ci/run).
"""

from __future__ import annotations

import os
import uuid
from typing import Callable, Iterator

import pytest

ES_IMAGE = "docker.elastic.co/elasticsearch/elasticsearch:9.5.4"  # same version as scripts/elasticsearch-local
HOW_TO_ENABLE = (
    "no Elasticsearch for tests: set INGEST_TEST_ES_URL (e.g. "
    "export INGEST_TEST_ES_URL=$(scripts/elasticsearch-local start)) or run a Docker engine"
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "elasticsearch: needs a real Elasticsearch (INGEST_TEST_ES_URL, testcontainers, else skipped)"
    )


def _no_elasticsearch(reason: str) -> None:
    if os.environ.get("INGEST_REQUIRE_ES") == "1":
        pytest.fail(f"INGEST_REQUIRE_ES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def _docker_answers() -> bool:
    try:
        import docker

        return bool(docker.from_env(timeout=3).ping())
    except Exception:  # noqa: BLE001 - no engine, no socket, no package: all mean "no Docker"
        return False


@pytest.fixture(scope="session")
def es_url() -> Iterator[str]:
    """The URL of a real Elasticsearch 9 node for this test session."""
    url = os.environ.get("INGEST_TEST_ES_URL")
    if url:
        from elasticsearch import Elasticsearch

        client = Elasticsearch(url, request_timeout=5, max_retries=0)
        try:
            client.cluster.health(wait_for_status="yellow", timeout="30s")
        except Exception as exc:  # noqa: BLE001
            _no_elasticsearch(f"INGEST_TEST_ES_URL={url} does not answer: {exc}")
        finally:
            client.close()
        yield url.rstrip("/")
        return
    if not _docker_answers():
        _no_elasticsearch(HOW_TO_ENABLE)
    try:
        from testcontainers.community.elasticsearch import ElasticSearchContainer
    except ImportError:  # older testcontainers
        from testcontainers.elasticsearch import ElasticSearchContainer

    container = (
        ElasticSearchContainer(ES_IMAGE, mem_limit="1g")
        .with_env("discovery.type", "single-node")
        .with_env("ES_JAVA_OPTS", "-Xms512m -Xmx512m")
        .with_env("cluster.routing.allocation.disk.threshold_enabled", "false")
    )
    with container:
        yield f"http://{container.get_container_host_ip()}:{container.get_exposed_port(container.port)}"


@pytest.fixture
def es_prefix(es_url: str) -> Iterator[str]:
    """A unique index prefix for one test; every index with it is deleted afterwards."""
    prefix = "t-" + uuid.uuid4().hex[:12]
    yield prefix
    drop_prefix(es_url, prefix, request_timeout=30)


def drop_prefix(url: str, prefix: str, **client_options: object) -> None:
    """Delete every index of ``prefix`` (client options: e.g. the CA and credentials of a secured node)."""
    from elasticsearch import Elasticsearch

    client = Elasticsearch(url, **client_options)  # type: ignore[arg-type]
    try:
        # Explicit names: deleting by wildcard is refused by default (action.destructive_requires_name).
        names = list(client.indices.get(index=f"{prefix}-*", expand_wildcards="all"))
        if names:
            client.indices.delete(index=",".join(names), ignore_unavailable=True)
    finally:
        client.close()


@pytest.fixture(params=["sqlite", pytest.param("elasticsearch", marks=pytest.mark.elasticsearch)])
def store_args(request, tmp_path) -> list[str]:
    """The --store (and --index-prefix) arguments of a fresh store: once SQLite, once Elasticsearch."""
    if request.param == "sqlite":
        return ["--store", f"sqlite:///{tmp_path / 'index.sqlite'}"]
    return ["--store", request.getfixturevalue("es_url"), "--index-prefix", request.getfixturevalue("es_prefix")]


# Every variable that names a store or its connection: cleared for tests that pass their own.
CONNECTION_ENV = (
    "INGEST_STORE", "ELASTIC_CLOUD_ID", "ELASTICSEARCH_URL", "INGEST_INDEX_PREFIX", "ES_API_KEY", "ELASTIC_API_KEY",
    "ES_USERNAME", "ES_PASSWORD", "ES_CA_CERTS", "ES_SSL_ASSERT_FINGERPRINT", "INGEST_ES_ANALYZER", "INGEST_TIMEOUT",
    "INGEST_NO_FAST_NOOP",
)  # fmt: skip


@pytest.fixture
def make_es_store(es_url: str, es_prefix: str) -> Iterator[Callable[..., object]]:
    """Build ElasticsearchStore objects for this test's prefix (closed afterwards)."""
    from ingest.store.elasticsearch import ElasticsearchStore

    made: list[ElasticsearchStore] = []

    def make(settings=None, **kwargs) -> ElasticsearchStore:
        store = ElasticsearchStore(es_url, prefix=kwargs.pop("prefix", es_prefix), settings=settings, **kwargs)
        made.append(store)
        return store

    yield make
    for store in made:
        try:
            store.close()
        except Exception:  # noqa: BLE001 - a test may have closed it or deleted its indices
            pass


# --- a second node with security enabled (access tests with restricted credentials) ----------

from dataclasses import dataclass  # noqa: E402 - appended section

SECURE_USER = "elastic"
SECURE_DEFAULT_PASSWORD = "ingest-test-password"  # scripts/elasticsearch-local's default
HOW_TO_ENABLE_SECURE = (
    "no secured Elasticsearch for tests: set INGEST_TEST_ES_SECURE_URL (e.g. export "
    "INGEST_TEST_ES_SECURE_URL=$(INGEST_ES_SECURITY=1 scripts/elasticsearch-local start)) and, when "
    "not the default, INGEST_TEST_ES_SECURE_PASSWORD"
)


@dataclass(frozen=True)
class SecureElasticsearch:
    """A node with ``xpack.security.enabled: true`` and the superuser's credentials."""

    url: str
    username: str
    password: str


@pytest.fixture(scope="session")
def es_secure() -> SecureElasticsearch:
    """The secured node of this session (INGEST_TEST_ES_SECURE_URL), else skipped (or failed
    under INGEST_REQUIRE_ES=1)."""
    url = os.environ.get("INGEST_TEST_ES_SECURE_URL")
    if not url:
        _no_elasticsearch(HOW_TO_ENABLE_SECURE)
    node = SecureElasticsearch(
        url.rstrip("/"), SECURE_USER, os.environ.get("INGEST_TEST_ES_SECURE_PASSWORD") or SECURE_DEFAULT_PASSWORD
    )
    from elasticsearch import Elasticsearch

    client = Elasticsearch(node.url, basic_auth=(node.username, node.password), request_timeout=5, max_retries=0)
    try:
        client.cluster.health(wait_for_status="yellow", timeout="30s")
    except Exception as exc:  # noqa: BLE001
        _no_elasticsearch(f"INGEST_TEST_ES_SECURE_URL={url} does not answer as {SECURE_USER}: {exc}")
    finally:
        client.close()
    return node
