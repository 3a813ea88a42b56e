"""Building the Elasticsearch client from a :class:`ingest.config.ConnectionConfig`, and naming
the real cause when a connection fails (TLS and authentication problems hide deep in the
client's exception chain: urllib3 → elastic_transport → elasticsearch)."""

from __future__ import annotations

import os
import ssl
import sys
from typing import Any

from elasticsearch import AuthenticationException, AuthorizationException, Elasticsearch

from ingest.config import ConfigError, ConnectionConfig, url_has_credentials
from ingest.store.elasticsearch.transport import BulkSerializer

_warned_no_verify = False


def connect(config: ConnectionConfig, request_timeout: float = 30.0) -> Elasticsearch:
    """The client for ``config``; a missing CA file or an unusable option is a ConfigError."""
    kwargs: dict[str, Any] = {
        "request_timeout": config.timeout or request_timeout,
        "max_retries": 3,
        "retry_on_timeout": True,
        # JSON as the client's own serializer writes it; bulk action lines made by the store are sent as encoded
        "serializers": {"application/json": BulkSerializer()},
    }
    if config.api_key:
        kwargs["api_key"] = config.api_key
    elif config.username:
        kwargs["basic_auth"] = (config.username, config.password or "")
    https = bool(config.cloud_id) or config.url.startswith("https://")
    if config.ca_certs:
        _check_ca_file(config.ca_certs)  # also over http://: a CA file named but missing is a mistake worth naming
        if https:
            kwargs["ca_certs"] = config.ca_certs
    if config.ssl_assert_fingerprint and https:
        kwargs["ssl_assert_fingerprint"] = config.ssl_assert_fingerprint
    if not config.verify_certs and https:
        kwargs["verify_certs"] = False
        kwargs["ssl_show_warn"] = False  # one loud warning of our own instead of one per request
        _warn_no_verify(config)
    try:
        if config.cloud_id:
            return Elasticsearch(cloud_id=config.cloud_id, **kwargs)
        return Elasticsearch(config.url, **kwargs)
    except (ValueError, OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot set up the connection to {config.display}: {exc}") from None


def _check_ca_file(path: str) -> None:
    """A CA file that does not exist or holds no PEM certificate: a ConfigError naming it (else the
    failure surfaces later as a bare "TLS handshake failed")."""
    if os.path.isdir(path):
        raise ConfigError(f"ES_CA_CERTS / --ca-certs {path!r}: a folder, not a file (the CA certificate in PEM format)")
    if not os.path.isfile(path):
        raise ConfigError(f"ES_CA_CERTS / --ca-certs {path!r}: no such file (the CA certificate in PEM format)")
    try:
        ssl.create_default_context(cafile=path)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise ConfigError(f"ES_CA_CERTS / --ca-certs {path!r}: not a CA certificate in PEM format ({exc})") from None


def _warn_no_verify(config: ConnectionConfig) -> None:
    global _warned_no_verify
    if _warned_no_verify:
        return
    _warned_no_verify = True
    sys.stderr.write(
        f"WARNING: --no-verify-certs: the certificate of {config.display} is NOT checked; anyone on the "
        "network path can read and change what is sent (credentials included). Use ES_CA_CERTS or "
        "--ssl-assert-fingerprint instead.\n"
    )


def _chain(exc: BaseException) -> list[BaseException]:
    """exc, its causes and contexts, and the errors elastic_transport keeps in ``.errors``."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        current = todo.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        todo.extend([current.__cause__, current.__context__])  # type: ignore[list-item]
        todo.extend(e for e in getattr(current, "errors", ()) or () if isinstance(e, BaseException))
        todo.extend(a for a in getattr(current, "args", ()) if isinstance(a, BaseException))
        reason = getattr(current, "reason", None)
        if isinstance(reason, BaseException):
            todo.append(reason)
    return seen


def explain(exc: BaseException, config: ConnectionConfig | None, where: str) -> str | None:
    """One line naming the cause of a failed connection, or None when nothing specific is found."""
    chain = _chain(exc)
    text = " | ".join(f"{type(e).__name__}: {e}" for e in chain)
    return _tls_problem(chain, text, config, where) or _access_problem(chain, text, config, where)


def _tls_problem(chain: list[BaseException], text: str, config: ConnectionConfig | None, where: str) -> str | None:
    for e in chain:
        # urllib3 checks host names itself (ssl_match_hostname.CertificateError, a ValueError)
        if type(e).__name__ == "CertificateError" and "match" in str(e):
            return (
                f"{where}: TLS hostname mismatch: {e}; connect with a name the certificate lists "
                "(or have the cluster's certificate include this one)"
            )
    for e in chain:
        if isinstance(e, ssl.SSLCertVerificationError):
            message = (e.verify_message or str(e)).strip()
            if "Hostname mismatch" in message or "IP address mismatch" in message or "doesn't match" in message:
                return (
                    f"{where}: TLS hostname mismatch: the server's certificate is not valid for this host name "
                    f"({message}); connect with a name the certificate lists"
                )
            if "self-signed" in message or "self signed" in message or "unable to get local issuer" in message:
                hint = (
                    "the CA in ES_CA_CERTS did not sign it"
                    if config and config.ca_certs
                    else "set ES_CA_CERTS (or --ca-certs) to the cluster's CA certificate, or --ssl-assert-fingerprint"
                )
                return f"{where}: TLS certificate not trusted ({message}); {hint}"
            if "expired" in message:
                return f"{where}: TLS certificate expired ({message})"
            return f"{where}: TLS certificate verification failed ({message})"
    if "Fingerprints did not match" in text or "fingerprint" in text.lower() and "match" in text.lower():
        return f"{where}: TLS certificate fingerprint does not match --ssl-assert-fingerprint"
    if "WRONG_VERSION_NUMBER" in text or "wrong version number" in text:
        return f"{where}: TLS handshake failed: the server does not speak TLS on this port (use http://)"
    for e in chain:
        if isinstance(e, ssl.SSLError) or type(e).__name__ in ("SSLError", "TlsError"):
            return f"{where}: TLS handshake failed ({e})"
    return None


def _access_problem(chain: list[BaseException], text: str, config: ConnectionConfig | None, where: str) -> str | None:
    for e in chain:
        if isinstance(e, AuthenticationException):
            if config and config.api_key:
                how = "check the API key (ES_API_KEY / ELASTIC_API_KEY)"
            elif config and config.username:
                how = "check ES_USERNAME / ES_PASSWORD"
            elif config and url_has_credentials(config.url):
                how = "check the user and password in the store URL"
            else:
                how = "no credentials were given: set ES_API_KEY or ES_USERNAME/ES_PASSWORD"
            return f"{where}: authentication failed (401): {how}"
        if isinstance(e, AuthorizationException):
            return f"{where}: not allowed (403): {_privilege_reason(e)}"
    if "Connection refused" in text or "ECONNREFUSED" in text:
        return f"{where}: connection refused: nothing listens there; check that it is running and the URL"
    if "Name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
        return f"{where}: unknown host name; check the URL"
    if "http://" in where and ("RemoteDisconnected" in text or "Connection aborted" in text):
        return f"{where}: the server closed the connection: does it expect https:// (TLS)?"
    return None


def _privilege_reason(exc: AuthorizationException) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        cause = (error.get("root_cause") or [error])[0]
        return str(cause.get("reason") or error.get("reason"))
    return str(exc.message)
