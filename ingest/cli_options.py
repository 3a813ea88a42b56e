"""The command line's shared options (store and report options, declared once), the configuration of
an invocation (built here at the edge), and the library's exceptions mapped to one line and an exit code.
"""

from __future__ import annotations

import functools
import gc
import inspect
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
import typer.core

from ingest import __version__
from ingest import config as configuration
from ingest.cli_output import emit_json, err, printable, safe
from ingest.config import Config, ConfigError, ConnectionConfig, ConnectionRequest
from ingest.settings import Settings, SettingsError

if TYPE_CHECKING:
    from ingest.junit import Suite
    from ingest.store.base import Store

OK, FAILED, USAGE, UNREACHABLE, INTERNAL = 0, 1, 2, 3, 4  # the documented exit codes
_debug = False  # --debug or INGEST_DEBUG=1, set once per invocation by the root callback


def set_debug(value: bool) -> None:
    global _debug
    _debug = value


STORE_ENV = (
    "Store: --store > INGEST_STORE > ELASTIC_CLOUD_ID > ELASTICSEARCH_URL > sqlite:///.ingest/index.sqlite. "
    "Environment: INGEST_STORE, ELASTIC_CLOUD_ID, ELASTICSEARCH_URL, INGEST_INDEX_PREFIX, ES_API_KEY "
    "(or ELASTIC_API_KEY), ES_USERNAME/ES_PASSWORD, ES_CA_CERTS, ES_SSL_ASSERT_FINGERPRINT, INGEST_ES_ANALYZER, "
    "INGEST_TIMEOUT, INGEST_DEBUG."
)
CORPUS_ENV = "Environment: INGEST_WORKERS (parser processes), INGEST_DEBUG."
RUN_ENV = "Also: INGEST_WORKERS, INGEST_WRITE_BATCH_CHUNKS (chunks per write batch)."

JsonOpt = typer.Option(False, "--json", help="One JSON object on stdout, nothing else.")
QuietOpt = typer.Option(False, "--quiet", "-q", help="Counts only.")
VerboseOpt = typer.Option(False, "--verbose", "-v", help="Every document on its own line, and timings.")
JunitOpt = typer.Option(
    None, "--junit", help="Also write a JUnit XML report to this file.", show_default=False, dir_okay=False
)


NO_FLAGS = ConnectionRequest()  # the default of a command's ``flags`` (the wrapper always passes real ones)


# Declared once, added to every store command by @store_options: (type, typer option).
STORE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "store": (
        str | None,
        typer.Option(
            None,
            "--store",
            help="sqlite:///PATH or http(s)://host:9200 "
            "(env INGEST_STORE, ELASTICSEARCH_URL; default sqlite:///.ingest/index.sqlite).",
            show_default=False,
        ),
    ),
    "index_prefix": (
        str | None,
        typer.Option(
            None,
            "--index-prefix",
            help="Elasticsearch index prefix (env INGEST_INDEX_PREFIX; default ingest).",
            show_default=False,
        ),
    ),
    "cloud_id": (
        str | None,
        typer.Option(
            None, "--cloud-id", help="Elastic Cloud deployment ID (env ELASTIC_CLOUD_ID).", show_default=False
        ),
    ),
    "ca_certs": (
        str | None,
        typer.Option(
            None, "--ca-certs", help="CA certificate (PEM) of the cluster (env ES_CA_CERTS).", show_default=False
        ),
    ),
    "ssl_assert_fingerprint": (
        str | None,
        typer.Option(
            None,
            "--ssl-assert-fingerprint",
            help="Accept only the certificate with this SHA-256 fingerprint (env ES_SSL_ASSERT_FINGERPRINT).",
            show_default=False,
        ),
    ),
    "no_verify_certs": (
        bool,
        typer.Option(
            False, "--no-verify-certs", help="Do NOT check the cluster's TLS certificate (insecure; prints a warning)."
        ),
    ),
    "timeout": (
        float | None,
        typer.Option(
            None,
            "--timeout",
            help="Seconds before a store that stops answering is given up (env INGEST_TIMEOUT).",
            show_default=False,
        ),
    ),
}


def store_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command`` (which takes ``flags: ConnectionRequest``) the connection options, written
    once here instead of in every command; they stand before its --quiet/--json options."""
    return _with_options(command, "flags", STORE_OPTIONS, _connection_request, before=("quiet", "as_json"))


def _connection_request(*, no_verify_certs: bool, **flags: Any) -> ConnectionRequest:
    return ConnectionRequest(verify_certs=not no_verify_certs, **flags)


@dataclass(frozen=True)
class ReportFlags:
    """How a command that reports on many documents was asked to report, as typed."""

    junit_file: Path | None = None
    quiet: bool = False
    verbose: bool = False
    as_json: bool = False


NO_REPORT = ReportFlags()  # the default of a command's ``report`` (the wrapper always passes real ones)

REPORT_OPTIONS: dict[str, tuple[Any, Any]] = {
    "junit_file": (Path | None, JunitOpt),
    "quiet": (bool, QuietOpt),
    "verbose": (bool, VerboseOpt),
    "as_json": (bool, JsonOpt),
}


def report_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command`` (which takes ``report: ReportFlags``) --junit, --quiet, --verbose and --json,
    as its last options."""
    return _with_options(command, "report", REPORT_OPTIONS, ReportFlags)


def _with_options(
    command: Callable[..., None],
    name: str,
    options: dict[str, tuple[Any, Any]],
    build: Callable[..., Any],
    before: tuple[str, ...] = (),
) -> Callable[..., None]:
    """``command`` with its parameter ``name`` replaced by ``options`` (typer reads the signature
    this sets), placed before the first parameter named in ``before`` (else last); the wrapper
    builds the value of ``name`` from them."""
    signature = inspect.signature(command, eval_str=True)
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in signature.parameters.values() if p.name != name]
    at = next((n for n, p in enumerate(params) if p.name in before), len(params))
    params[at:at] = [
        inspect.Parameter(option, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
        for option, (kind, default) in options.items()
    ]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        value = build(**{option: kwargs.pop(option) for option in options})
        command(**{name: value}, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


_WHOLE = re.compile(r"0|[1-9][0-9]{0,17}")  # a plain whole number, as every parser reads it alike
_DECIMAL = re.compile(r"(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")
_UNDECIDED = object()


class _PlainCoercion:
    """typer's coercion of one parameter, minus its cost where a value needs no checking.

    typer (0.2x) coerces every value of an option that is not a flag through a pydantic
    ``TypeAdapter`` it builds on first use, given or not: importing pydantic and building the
    adapters costs a short command (an unchanged ``ingest run``) about 0.1 CPU-s. A value that is
    absent, already of its type (a default), a plain string for a ``str``, a plain number within
    the option's bounds or a path is taken here as typer would take it; anything else (a typo, a
    value out of bounds) goes to typer's own coercion, so every error message stays typer's."""

    def __init__(self, param: Any) -> None:
        self._typer: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        plain = _plain_value(param, value)
        if plain is not _UNDECIDED:
            return plain
        if self._typer is None:
            from typer._coercion import build_runtime_param

            self._typer = build_runtime_param(param.type_descriptor)
        return self._typer.coerce(value, param=param, ctx=ctx)


def _plain_value(param: Any, value: Any) -> Any:
    """``value`` as typer's coercion would return it, or _UNDECIDED when it takes checking."""
    if param.multiple or param.nargs != 1:
        return _UNDECIDED
    if value is None:
        return None
    descriptor = param.type_descriptor
    kind, info = descriptor.annotation, descriptor.parameter_info
    if kind is str:
        return value if type(value) is str else _UNDECIDED
    if kind in (int, float) and not info.clamp:
        if type(value) is str:
            if not (_WHOLE if kind is int else _DECIMAL).fullmatch(value):
                return _UNDECIDED
            value = kind(value)
        if type(value) is not kind:
            return _UNDECIDED
        inside = (info.min is None or value >= info.min) and (info.max is None or value <= info.max)
        return value if inside else _UNDECIDED
    if kind is Path and descriptor.is_path and info.path_type is None and type(value) is str:
        if not value or "\0" in value:
            return _UNDECIDED
        from typer._param_types import coerce_cli_path

        # typer's own checks (exists, file_okay, dir_okay, readable …) and messages, given a Path
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=None)
    return _UNDECIDED


def _plain_coercion_available() -> bool:
    try:
        from typer._coercion import build_runtime_param  # noqa: F401
        from typer._param_types import coerce_cli_path  # noqa: F401
        from typer.core import _TyperParameter
    except ImportError:  # pragma: no cover - a typer without pydantic coercion: nothing to spare
        return False
    return hasattr(_TyperParameter, "get_runtime_param")


def _spare_coercion(params: list[Any]) -> None:
    """Give typer's parameters the plain coercion (their --help option and the root's too)."""
    if not _plain_coercion_available():  # pragma: no cover
        return
    from typer.core import _TyperParameter

    for param in params:
        if isinstance(param, _TyperParameter) and getattr(param, "_runtime_param", None) is None:
            param._runtime_param = _PlainCoercion(param)  # type: ignore[assignment]


def pause_collector() -> None:
    """Start-up of the console script: imports allocate much and free little, and every full
    collection walks all of it again; the collector waits until the command's imports are done."""
    gc.disable()


def resume_collector() -> None:
    """After the imports (or at the end): what start-up made lives as long as the process, so it
    is frozen out of later collections (a run reading thousands of records would walk it again at
    each: 0.03–0.15 CPU-s of an unchanged run), and the collector runs again. Nothing to do when
    the collector was not paused (the app called in-process, e.g. by tests)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


class Command(typer.core.TyperCommand):
    """A command whose parameters skip typer's pydantic coercion where a value needs none (see
    :class:`_PlainCoercion`); parsing, --help and error messages are typer's. The cycle collector
    resumes when the command starts (:class:`RunCommand`: once its imports are done)."""

    resumes_collector = True

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _spare_coercion(self.get_params(ctx))
        rest: list[str] = super().parse_args(ctx, args)
        if ctx.params.get("quiet") and ctx.params.get("verbose"):
            # contradictory: neither is picked silently (exit 2, as typer's own usage errors)
            raise _click_exceptions().UsageError("--quiet and --verbose cannot be used together", ctx=ctx)
        return rest

    def invoke(self, ctx: Any) -> Any:
        if self.resumes_collector:
            resume_collector()
        return super().invoke(ctx)


class RunCommand(Command):
    """``ingest run``: the collector resumes once the store and the pipeline are imported."""

    resumes_collector = False


class Group(typer.core.TyperGroup):
    """The root command, with the same plain coercion as :class:`Command`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _spare_coercion(self.get_params(ctx))
        return super().parse_args(ctx, args)


class CommandError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def error_code(exc: Exception, connection: ConnectionConfig | None) -> tuple[int, str]:
    """The SPEC's exit code and one line for a library exception; anything else is a bug (exit 4)."""
    from ingest.api import QueryTooLarge, UnknownRole
    from ingest.corpus import CorpusError
    from ingest.evaluate import QuestionsError
    from ingest.store.base import (
        AmbiguousPrefix,
        ChunkNotFound,
        StoreConfigError,
        StoreError,
        StoreLocked,
        StoreUnavailable,
    )

    usage = (SettingsError, QuestionsError, CorpusError, StoreConfigError, StoreLocked, AmbiguousPrefix)
    if isinstance(exc, CommandError):
        return exc.code, exc.message
    if isinstance(exc, StoreUnavailable):
        return UNREACHABLE, cause(exc, connection) or str(exc)
    if isinstance(exc, (*usage, ConfigError, UnknownRole, QueryTooLarge)):
        return USAGE, str(exc)
    if isinstance(exc, ChunkNotFound):
        return FAILED, str(exc)
    if isinstance(exc, StoreError):
        return UNREACHABLE, cause(exc, connection) or str(exc)
    if _debug:
        traceback.print_exc(file=sys.stderr)
    hint = "" if _debug else "; rerun with --debug (or INGEST_DEBUG=1) for the traceback and report it"
    return INTERNAL, f"internal error (a bug in ingest {__version__}): {type(exc).__name__}: {exc}{hint}"


@contextmanager
def handled(as_json: bool, connection: ConnectionConfig | None = None) -> Iterator[None]:
    """Turn the library's exceptions into one clear line and the SPEC's exit code; anything
    unexpected is an internal error (exit 4), with its traceback only under --debug."""
    try:
        yield
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - sorted by error_code; a bug is one line, never a wall in CI
        code, message = error_code(exc, connection)
        if as_json:
            emit_json({"error": message, "exit_code": code})
        err.print(f"[red]error:[/red] {safe(message)}")
        raise typer.Exit(code) from None


def cause(exc: BaseException, connection: ConnectionConfig | None) -> str | None:
    """The real cause of a failed connection (TLS, 401, 403), dug out of the client's exception chain."""
    from ingest.store.base import StoreError

    original = exc.__cause__ or exc.__context__
    if original is None or isinstance(original, StoreError) and original is exc:
        return None
    try:
        from ingest.store.es_connection import explain
    except ImportError:  # pragma: no cover - elasticsearch not installed
        return None
    where = f"Elasticsearch at {connection.display}" if connection else "Elasticsearch"
    found: str | None = explain(original, connection, where)
    if found and "not allowed (403)" in found and "not allowed (403)" in str(exc):
        return str(exc)  # the store's own 403 line already names the index and privilege
    return found


def file_total(corpus: Path) -> int | None:
    """How many files the reading phase will see (for the bar's total and ETA)."""
    from ingest.corpus import discover

    try:
        return len(discover(corpus))
    except Exception:  # noqa: BLE001 - the scan itself reports what cannot be read
        return None


def command_config(flags: ConnectionRequest | None = None) -> Config:
    """The configuration of this invocation: flags > environment > defaults (ingest.config)."""
    connection = configuration.resolve(flags) if flags is not None else None
    return configuration.load(connection, debug=_debug)


@contextmanager
def store_command(flags: ConnectionRequest, as_json: bool) -> Iterator[tuple[Config, ConnectionConfig]]:
    """The body of a store command: its configuration (a bad value: exit 2), its store announced,
    and the library's exceptions turned into one line and the exit code (:func:`handled`)."""
    config, connection = store_config(flags, as_json)
    with handled(as_json, connection):
        yield config, connection


def store_config(flags: ConnectionRequest, as_json: bool) -> tuple[Config, ConnectionConfig]:
    """The configuration of a store command, its store announced on stderr (a bad value: exit 2)."""
    with handled(as_json):
        config = command_config(flags)
    assert config.connection is not None
    for warning in config.connection.warnings:
        err.print(f"[yellow]warning:[/yellow] {safe(warning)}")
    if not as_json:
        err.print(safe(config.connection.describe()), style="dim")
    return config, config.connection


def open_store(config: Config, settings: Settings | None = None, *, create: bool = True) -> Store:
    """``create=False`` for commands that only read: a mistyped SQLite path is an error, not a new empty index."""
    from ingest.store import open_store

    return open_store(config.connection, settings=settings, create=create)


def corpus_dir(corpus: Path) -> Path:
    if not corpus.is_dir():
        raise CommandError(USAGE, f"{printable(str(corpus))}: not a folder (expected CORPUS/documents/…)")
    if not (corpus / "documents").is_dir():
        raise CommandError(USAGE, f"{printable(str(corpus))}: has no documents/ folder (see the README: corpus layout)")
    return corpus


def one_doc_id(doc_ids: list[str] | None) -> str | None:
    """The one ``--doc-id``, or None. ``--doc-id a --doc-id b`` is a usage error: one would be dropped
    unseen (click keeps the last). ``--doc-id ''`` (an unset variable, ``--doc-id "$ID"``) is one too,
    never every document."""
    if not doc_ids:
        return None
    if len(doc_ids) > 1:
        given = " ".join(f"--doc-id {d!r}" for d in doc_ids)
        raise CommandError(USAGE, f"{given}: search takes one --doc-id (search each document on its own)")
    if doc_ids[0] == "":
        raise CommandError(USAGE, "--doc-id '' is not a doc_id (leave --doc-id out to search every document)")
    return doc_ids[0]


def day_of(value: str | None) -> date | None:
    from ingest.api import parse_as_of

    try:
        return parse_as_of(value)
    except ValueError:
        raise CommandError(
            USAGE, f"--as-of {value!r} is not a YYYY-MM-DD date, 'today' or 'any' (lower case)"
        ) from None


def write_junit(path: Path | None, *suites: Suite) -> None:
    if path is None:
        return
    from ingest import junit

    try:
        junit.write(path, *suites)
    except OSError as exc:
        raise CommandError(
            USAGE, f"--junit {printable(str(path))}: cannot write the report: {exc.strerror or exc}"
        ) from None


def _click_exceptions() -> Any:
    """typer >= 0.20 carries its own click; older ones use click itself."""
    import importlib

    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:  # pragma: no cover
        return importlib.import_module("click.exceptions")


def click_exception_class() -> type[Exception]:
    found: type[Exception] = _click_exceptions().ClickException
    return found
