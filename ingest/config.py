"""Configuration, resolved once at the edge (the CLI, the Python API) and passed down as arguments.

The only module in ``ingest`` that reads the environment, and only when called (never at import).
Precedence: command-line flags / API arguments > environment > the corpus's ``ingest.toml``
(chunking and search, read by :mod:`ingest.settings`) > defaults. :class:`Config` carries the
connection (:class:`ConnectionConfig`) and the tuning knobs (workers, write batch size, debug).

Which store, first match wins (documented in the README, "Connections"):

1. ``--store URL`` (or ``--cloud-id ID``) on the command line / ``url=`` in the API
2. ``INGEST_STORE``
3. ``ELASTIC_CLOUD_ID`` (Elastic Cloud)
4. ``ELASTICSEARCH_URL``
5. the embedded default ``sqlite:///.ingest/index.sqlite``

Credentials: ``ES_API_KEY`` (else ``ELASTIC_API_KEY``), else ``ES_USERNAME``/``ES_PASSWORD``; a
``user:password@`` in the URL also works, and wins over those variables (a warning names them).
TLS: ``ES_CA_CERTS`` / ``--ca-certs``,
``--ssl-assert-fingerprint`` (``ES_SSL_ASSERT_FINGERPRINT``), ``--no-verify-certs`` (loud).
Tuning: ``INGEST_WORKERS`` (parser processes), ``INGEST_WRITE_BATCH_CHUNKS`` (chunks per write
batch), ``INGEST_PARSER_MEMORY_MB`` / ``INGEST_PARSER_TIMEOUT`` (per parser process / per file),
``INGEST_ES_ANALYZER`` (the BM25 analyzer), ``INGEST_TIMEOUT``, ``INGEST_DEBUG``.

Connections are deliberately not read from a corpus's ``ingest.toml``: a corpus folder is
content, it moves between machines and clusters, and credentials do not belong in it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

DEFAULT_SQLITE = ".ingest/index.sqlite"
DEFAULT_PREFIX = "ingest"
MAX_SECONDS = 86_400.0  # a timeout or lock wait over a day is a typo (and past what sockets take)

# Built-in analyzers that exist in every distribution the mappings can name without extra
# settings (language analyzers need the analysis-common module: present in the default
# distribution, absent from the integ-test one).
BUILTIN_ANALYZERS = frozenset(
    ["standard", "simple", "whitespace", "stop", "keyword", "pattern", "fingerprint"]
    + [
        "arabic",
        "armenian",
        "basque",
        "bengali",
        "brazilian",
        "bulgarian",
        "catalan",
        "cjk",
        "czech",
        "danish",
        "dutch",
        "english",
        "estonian",
        "finnish",
        "french",
        "galician",
        "german",
        "greek",
        "hindi",
        "hungarian",
        "indonesian",
        "irish",
        "italian",
        "latvian",
        "lithuanian",
        "norwegian",
        "persian",
        "portuguese",
        "romanian",
        "russian",
        "serbian",
        "sorani",
        "spanish",
        "swedish",
        "turkish",
        "thai",
    ]
)

# Whole-number tuning variables and their minimum: a typo is a configuration error naming the
# variable (exit 2), never a traceback.
INTEGER_VARIABLES = {
    "INGEST_WRITE_BATCH_CHUNKS": 1,
    "INGEST_WORKERS": 1,
    "INGEST_PARSER_MEMORY_MB": 0,  # 0: no cap
    "INGEST_PARSER_TIMEOUT": 0,  # seconds per file; 0: no limit
}

# Every variable the commands read, for help texts and the README.
STORE_VARIABLES = (
    "INGEST_STORE",
    "ELASTIC_CLOUD_ID",
    "ELASTICSEARCH_URL",
    "INGEST_INDEX_PREFIX",
    "ES_API_KEY",
    "ELASTIC_API_KEY",
    "ES_USERNAME",
    "ES_PASSWORD",
    "ES_CA_CERTS",
    "ES_SSL_ASSERT_FINGERPRINT",
    "INGEST_ES_ANALYZER",
    "INGEST_TIMEOUT",
)


class ConfigError(ValueError):
    """A setting has a value that cannot work (exit 2); the message names the key and the value."""


@dataclass(frozen=True)
class ConnectionRequest:
    """The connection a caller asked for (command-line flags, API arguments), before resolving:
    what it leaves None the environment, then the defaults decide (:func:`resolve`)."""

    store: str | None = None  # sqlite:///PATH or http(s)://host:port
    index_prefix: str | None = None
    cloud_id: str | None = None
    ca_certs: str | None = None
    ssl_assert_fingerprint: str | None = None
    verify_certs: bool = True
    timeout: float | None = None  # seconds per request


@dataclass(frozen=True)
class ConnectionConfig:
    """How to reach one store. ``source`` says where ``url``/``cloud_id`` came from."""

    url: str  # sqlite:///PATH or http(s)://host:port; "" when cloud_id names the cluster
    source: str = "default"
    index_prefix: str = DEFAULT_PREFIX
    cloud_id: str | None = None
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    ca_certs: str | None = None
    ssl_assert_fingerprint: str | None = None
    verify_certs: bool = True
    analyzer: str | None = None
    timeout: float | None = None  # seconds per request; None: the store's default
    ignored: tuple[str, ...] = ()  # Elasticsearch variables set while the store is SQLite
    overridden: tuple[str, ...] = ()  # credential variables set while the URL carries user:password@

    @property
    def warnings(self) -> list[str]:
        found = []
        if self.ignored:
            found.append(
                f"{', '.join(self.ignored)} set, but no Elasticsearch store is configured (--store, INGEST_STORE, "
                f"ELASTIC_CLOUD_ID or ELASTICSEARCH_URL): using {self.display}"
            )
        if self.overridden:
            found.append(
                f"{', '.join(self.overridden)} set, but the store URL carries its own user and password "
                f"({self.source}): the URL's are used"
            )
        return found

    @property
    def kind(self) -> str:
        return "sqlite" if self.url.startswith("sqlite:///") else "elasticsearch"

    @property
    def sqlite_path(self) -> str:
        return self.url[len("sqlite:///") :]

    @property
    def display(self) -> str:
        """The store as printed: never a password."""
        if self.cloud_id:
            return f"elastic-cloud:{self.cloud_id.split(':', 1)[0]}"
        return without_credentials(self.url)

    def describe(self) -> str:
        """One line for stderr: which store, and why this one."""
        where = self.display
        if self.kind == "elasticsearch":
            where += f" (index prefix {self.index_prefix})"
        return f"store: {where}  [from {self.source}]"


def without_credentials(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host.rsplit('@', 1)[-1]}{slash}{path}"


def _reader(environ: Mapping[str, str] | None) -> Callable[[str], str | None]:
    """A variable's stripped value, None when unset or blank; the environment read when called."""
    env = os.environ if environ is None else environ

    def var(name: str) -> str | None:
        value = env.get(name)
        return value.strip() if value and value.strip() else None

    return var


def resolve(
    request: ConnectionRequest | str | None = None,
    *,
    index_prefix: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ConnectionConfig:
    """The request (or just a store URL; None: the environment decides) > environment > defaults,
    checked: a bad value raises ConfigError. ``index_prefix`` overrides the request's."""
    if not isinstance(request, ConnectionRequest):
        request = ConnectionRequest(request)
    if index_prefix:
        request = replace(request, index_prefix=index_prefix)
    if request.index_prefix is not None and not request.index_prefix.strip():
        # "--index-prefix $UNSET" must not quietly mean the default prefix (another deployment's data)
        raise ConfigError(f"--index-prefix {request.index_prefix!r} is empty: give a prefix, or leave the option out")
    var = _reader(environ)
    url, source, cloud_id = _which_store(request.store, request.cloud_id, var)
    if url:
        check_url(url, source)
    if cloud_id is not None:
        check_cloud_id(cloud_id, source)
    timeout = request.timeout
    if timeout is not None:
        timeout = _positive_float("--timeout", str(timeout))
    elif var("INGEST_TIMEOUT"):
        timeout = _positive_float("INGEST_TIMEOUT", var("INGEST_TIMEOUT") or "")
    fingerprint = request.ssl_assert_fingerprint or var("ES_SSL_ASSERT_FINGERPRINT")
    config = ConnectionConfig(
        url=url,
        source=source,
        index_prefix=request.index_prefix or var("INGEST_INDEX_PREFIX") or DEFAULT_PREFIX,
        cloud_id=cloud_id,
        api_key=var("ES_API_KEY") or var("ELASTIC_API_KEY"),
        username=var("ES_USERNAME"),
        password=(os.environ if environ is None else environ).get("ES_PASSWORD"),  # kept as typed
        ca_certs=request.ca_certs or var("ES_CA_CERTS"),
        ssl_assert_fingerprint=_checked_fingerprint(fingerprint),
        verify_certs=request.verify_certs,
        analyzer=_checked_analyzer(var("INGEST_ES_ANALYZER")),
        timeout=timeout,
    )
    if config.kind == "sqlite" and config.cloud_id:
        raise ConfigError("a cloud ID names an Elasticsearch cluster, not an SQLite file")
    if config.kind == "sqlite":
        ignored = tuple(n for n in ("ES_API_KEY", "ELASTIC_API_KEY", "ES_USERNAME", "ES_CA_CERTS") if var(n))
        if ignored:
            config = replace(config, ignored=ignored)
    elif url_has_credentials(config.url):
        # Explicit beats ambient: credentials typed into the URL are meant for this store, while the
        # variables may be left over from another one (the client would let them win, silently).
        names = ("ES_API_KEY", "ELASTIC_API_KEY", "ES_USERNAME", "ES_PASSWORD")
        config = replace(
            config, api_key=None, username=None, password=None, overridden=tuple(n for n in names if var(n))
        )
    return config


def url_has_credentials(url: str) -> bool:
    """Whether ``url`` carries ``user[:password]@`` before its host."""
    return "@" in url.partition("://")[2].split("/", 1)[0]


def _which_store(
    store: str | None, cloud_id: str | None, var: Callable[[str], str | None]
) -> tuple[str, str, str | None]:
    """(url, where it came from, cloud ID): the first of the documented sources that is set."""
    if store and cloud_id:
        raise ConfigError("--store and --cloud-id both given: use one")
    if store:
        return store.strip(), "--store", None
    if cloud_id:
        return "", "--cloud-id", cloud_id
    for name in ("INGEST_STORE", "ELASTIC_CLOUD_ID", "ELASTICSEARCH_URL"):
        value = var(name)
        if value:
            return ("", name, value) if name == "ELASTIC_CLOUD_ID" else (value, name, None)
    return f"sqlite:///{DEFAULT_SQLITE}", "default", None


def _checked_analyzer(analyzer: str | None) -> str | None:
    if analyzer is not None and analyzer not in BUILTIN_ANALYZERS:
        raise ConfigError(
            f"INGEST_ES_ANALYZER={analyzer!r} is not a built-in Elasticsearch analyzer "
            f"(e.g. standard, english, german; see the README)"
        )
    return analyzer


def _checked_fingerprint(fingerprint: str | None) -> str | None:
    if fingerprint is not None:
        digits = fingerprint.replace(":", "").lower()
        if len(digits) != 64 or any(c not in "0123456789abcdef" for c in digits):
            raise ConfigError(
                f"--ssl-assert-fingerprint {fingerprint!r}: expected the certificate's SHA-256 fingerprint "
                "(64 hex digits, colons allowed)"
            )
    return fingerprint


def from_url(url: str, index_prefix: str | None = None, environ: Mapping[str, str] | None = None) -> ConnectionConfig:
    """The configuration of an explicit URL, with credentials and TLS from the environment."""
    return resolve(url, index_prefix=index_prefix, environ=environ)


def with_store(config: ConnectionConfig, **changes: Any) -> ConnectionConfig:
    return replace(config, **changes)


def check_url(url: str, source: str) -> None:
    """sqlite:///PATH or http(s)://host[:port][/path]; anything else names the key and value."""
    if url.startswith("sqlite:///"):
        if not url[len("sqlite:///") :]:
            raise ConfigError(f"{source}={url!r}: no file path after sqlite:///")
        return
    if url.startswith("sqlite:"):
        raise ConfigError(f"{source}={url!r}: write sqlite:///relative/path or sqlite:////absolute/path")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"{source}={url!r}: unknown store; use sqlite:///PATH or http(s)://host:9200")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError when out of range or not a number
    except ValueError as exc:
        raise ConfigError(f"{source}={without_credentials(url)!r}: malformed URL ({exc})") from None
    if not parts.hostname:
        raise ConfigError(f"{source}={without_credentials(url)!r}: no host name")
    if port == 0:
        raise ConfigError(f"{source}={without_credentials(url)!r}: port 0 is not a port")
    if parts.query or parts.fragment:
        raise ConfigError(f"{source}={without_credentials(url)!r}: unexpected ?query or #fragment")


def check_cloud_id(cloud_id: str, source: str) -> None:
    """``name:base64(host$es_uuid$kibana_uuid)`` as shown in the Elastic Cloud console."""
    import base64
    import binascii

    _, _, encoded = cloud_id.rpartition(":")
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        decoded = ""
    if "$" not in decoded:
        raise ConfigError(f"{source}={cloud_id!r}: not an Elastic Cloud ID (name:base64 from the Cloud console)")


@dataclass(frozen=True)
class Config:
    """Everything a command takes from outside its own arguments, resolved once at the edge and
    handed down as keyword arguments (never re-read from the environment below)."""

    connection: ConnectionConfig | None = None  # None: the command uses no store
    workers: int | None = None  # parser processes; None: one per core (at most 8)
    write_batch_chunks: int | None = None  # chunks per write batch; None: the pipeline's default
    debug: bool = False  # tracebacks for internal errors
    parser_memory_mb: int | None = None  # per parser process; None: a share of the machine's; 0: no cap
    parser_timeout_s: int | None = None  # per file; None: the scan's default; 0: no limit

    @property
    def analyzer(self) -> str | None:
        """The BM25 analyzer override (INGEST_ES_ANALYZER); None: the one of [search] language."""
        return self.connection.analyzer if self.connection else None


def load(
    connection: ConnectionConfig | None = None,
    *,
    workers: int | None = None,
    write_batch_chunks: int | None = None,
    debug: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Arguments > environment > defaults for the tuning knobs, each checked (ConfigError names it)."""
    var = _reader(environ)
    return Config(
        connection=connection,
        workers=workers if workers is not None else _whole_number("INGEST_WORKERS", var("INGEST_WORKERS")),
        write_batch_chunks=write_batch_chunks
        if write_batch_chunks is not None
        else _whole_number("INGEST_WRITE_BATCH_CHUNKS", var("INGEST_WRITE_BATCH_CHUNKS")),
        debug=debug or debug_enabled(environ),
        parser_memory_mb=_whole_number("INGEST_PARSER_MEMORY_MB", var("INGEST_PARSER_MEMORY_MB")),
        parser_timeout_s=_whole_number("INGEST_PARSER_TIMEOUT", var("INGEST_PARSER_TIMEOUT")),
    )


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """The integer variables: a bad one is a ConfigError (exit 2) naming the variable and value."""
    var = _reader(environ)
    for name in INTEGER_VARIABLES:
        _whole_number(name, var(name))


def _whole_number(name: str, value: str | None) -> int | None:
    if value is None:
        return None
    minimum = INTEGER_VARIABLES[name]
    try:
        if not re.fullmatch(r"\s*[+-]?[0-9]+\s*", value):  # int() would also take "５" or "1_000"
            raise ValueError(value)
        number = int(value)
    except ValueError:
        raise ConfigError(
            f"{name}={value!r} is not a whole number ({name} must be a whole number ≥ {minimum})"
        ) from None
    if number < minimum:
        raise ConfigError(f"{name}={value!r} must be at least {minimum}")
    return number


def debug_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """INGEST_DEBUG=1 (or true, yes, on)."""
    return (_reader(environ)("INGEST_DEBUG") or "").lower() in ("1", "true", "yes", "on")


def _positive_float(key: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{key}={value!r} is not a number of seconds") from None
    if not 0 < number <= MAX_SECONDS:  # nan and inf included
        raise ConfigError(f"{key}={value!r} must be a positive number of seconds, at most {MAX_SECONDS:g}")
    return number
