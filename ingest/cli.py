"""The `ingest` command line: a thin shell over the library (parse, corpus, pipeline, stores).

Owns the commands, their options, printing and exit codes: 0 all fine · 1 some documents rejected
or a check failed (the rest done) · 2 usage or configuration error · 3 store unreachable or
refused · 4 internal error (a bug: one line; the traceback with --debug or INGEST_DEBUG=1).
With --json, stdout carries exactly one JSON object; messages go to stderr.
Configuration (flags > environment > ingest.toml > defaults) is resolved once by ingest.config
and passed down as arguments; nothing below reads the environment.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import sys
import time
import traceback
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ingest import __version__
from ingest import config as configuration
from ingest.config import Config, ConfigError, ConnectionConfig, debug_enabled
from ingest.model import MIN_PREFIX, Chunk, DocumentProblems, UnreadableFile
from ingest.settings import Settings, SettingsError, chunking_with, load_settings

if TYPE_CHECKING:
    from ingest.api import Index
    from ingest.corpus import CorpusScan
    from ingest.evaluate import EvalResult, Question
    from ingest.junit import Suite
    from ingest.model import Hit, ParsedDocument
    from ingest.pipeline import RunResult, VerifyResult
    from ingest.store.base import Store

app = typer.Typer(
    help=(
        "Parse, validate, chunk and index company documents for RAG: SQLite (default) or Elasticsearch.\n\n"
        "Exit codes: 0 fine, 1 documents rejected or a check failed, 2 usage or configuration, "
        "3 store unreachable or refused, 4 internal error (a bug; --debug or INGEST_DEBUG=1 shows the traceback)."
    ),
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
)
# emoji=False: ":x:" in a document must print as ":x:", never as an emoji (citations quote exactly).
# soft_wrap: a pipe or a CI log gets whole lines, never text hard-wrapped at 80 columns.
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)

OK, FAILED, USAGE, UNREACHABLE, INTERNAL = 0, 1, 2, 3, 4
_debug = False  # --debug or INGEST_DEBUG=1, set once per invocation by the root callback

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

PLAN_LINES = 50  # more planned changes than this: a summary, unless --verbose


@dataclass(frozen=True)
class StoreFlags:
    """The connection options of a store command, as typed (resolved by :func:`_config`)."""

    store: str | None = None
    index_prefix: str | None = None
    cloud_id: str | None = None
    ca_certs: str | None = None
    fingerprint: str | None = None
    no_verify_certs: bool = False
    timeout: float | None = None


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
    "fingerprint": (
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
    """Give ``command`` (which takes ``flags: StoreFlags``) the connection options, written once
    here instead of in every command: typer reads the signature this sets."""
    signature = inspect.signature(command, eval_str=True)
    params = [p for p in signature.parameters.values() if p.name != "flags"]
    json_at = next((n for n, p in enumerate(params) if p.name in ("quiet", "as_json")), len(params))
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
        for name, (kind, option) in STORE_OPTIONS.items()
    ]
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    params[json_at:json_at] = added

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        flags = StoreFlags(**{name: kwargs.pop(name) for name in STORE_OPTIONS})
        command(flags=flags, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


class CommandError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def emit_json(data: Any) -> None:
    text = json.dumps(data, ensure_ascii=False, default=_json_default)
    # A file name that is not UTF-8 reaches us with lone surrogates (surrogateescape): written as
    # \udcXX escapes, the JSON stays valid and json.loads + os.fsencode give back the exact bytes.
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    sys.stdout.write(text + "\n")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_default(value: Any) -> Any:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)


def _error_code(exc: Exception, connection: ConnectionConfig | None) -> tuple[int, str]:
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
        return UNREACHABLE, _cause(exc, connection) or str(exc)
    if isinstance(exc, (*usage, ConfigError, UnknownRole, QueryTooLarge)):
        return USAGE, str(exc)
    if isinstance(exc, ChunkNotFound):
        return FAILED, str(exc)
    if isinstance(exc, StoreError):
        return UNREACHABLE, _cause(exc, connection) or str(exc)
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
    except Exception as exc:  # noqa: BLE001 - sorted by _error_code; a bug is one line, never a wall in CI
        code, message = _error_code(exc, connection)
        if as_json:
            emit_json({"error": message, "exit_code": code})
        err.print(f"[red]error:[/red] {safe(message)}")
        raise typer.Exit(code) from None


def _cause(exc: BaseException, connection: ConnectionConfig | None) -> str | None:
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


_CONTROL = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def printable(text: str, keep_newlines: bool = False) -> str:
    """Control and format characters as repr-style escapes: a file name cannot move the cursor,
    recolour the terminal or forge a report line. JSON output keeps the exact text."""
    if all(unicodedata.category(ch) not in _CONTROL or (keep_newlines and ch in "\n\t") for ch in text):
        return text
    return "".join(
        ch if unicodedata.category(ch) not in _CONTROL or (keep_newlines and ch in "\n\t") else repr(ch)[1:-1]
        for ch in text
    )


def safe(text: object, keep_newlines: bool = False) -> str:
    """Escaped for the terminal and for rich markup."""
    return escape(printable(str(text), keep_newlines))


class Bar:
    """A rich progress bar with a total and an ETA on a terminal; does nothing in --json mode or when piped."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress

    def __bool__(self) -> bool:
        return self.progress is not None

    def task(self, label: str, total: int | None) -> TaskID | None:
        return self.progress.add_task(label, total=total) if self.progress else None

    def advancer(self, task: TaskID | None) -> Callable[[str], None] | None:
        """``on_file`` for the library: advances ``task`` by one per file read."""
        progress = self.progress
        if progress is None or task is None:
            return None
        return lambda _source: progress.advance(task)

    def ticker(self, label: str, total: int | None) -> Callable[[str], None] | None:
        return self.advancer(self.task(label, total))

    def remove(self, task: TaskID | None) -> None:
        if self.progress is not None and task is not None:
            self.progress.remove_task(task)


@contextmanager
def progress_bar(enabled: bool, label: str) -> Iterator[Bar]:
    if not enabled or not err.is_terminal:
        yield Bar(None)
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as progress:
        yield Bar(progress)


def _file_total(corpus: Path) -> int | None:
    """How many files the reading phase will see (for the bar's total and ETA)."""
    from ingest.corpus import discover

    try:
        return len(discover(corpus))
    except Exception:  # noqa: BLE001 - the scan itself reports what cannot be read
        return None


def _config(flags: StoreFlags | None = None) -> Config:
    """The configuration of this invocation: flags > environment > defaults (ingest.config)."""
    connection = None
    if flags is not None:
        connection = configuration.resolve(
            flags.store,
            index_prefix=flags.index_prefix,
            cloud_id=flags.cloud_id,
            ca_certs=flags.ca_certs,
            ssl_assert_fingerprint=flags.fingerprint,
            verify_certs=not flags.no_verify_certs,
            timeout=flags.timeout,
        )
    return configuration.load(connection, debug=_debug)


def _store_config(flags: StoreFlags, as_json: bool) -> tuple[Config, ConnectionConfig]:
    """The configuration of a store command, its store announced on stderr (a bad value: exit 2)."""
    with handled(as_json):
        config = _config(flags)
    assert config.connection is not None
    for warning in config.connection.warnings:
        err.print(f"[yellow]warning:[/yellow] {safe(warning)}")
    if not as_json:
        err.print(safe(config.connection.describe()), style="dim")
    return config, config.connection


def _open_store(config: Config, settings: Settings | None = None, *, create: bool = True) -> Store:
    """``create=False`` for commands that only read: a mistyped SQLite path is an error, not a new empty index."""
    from ingest.store import open_store

    return open_store(config.connection, settings=settings, create=create)


def _corpus_dir(corpus: Path) -> Path:
    if not corpus.is_dir():
        raise CommandError(USAGE, f"{printable(str(corpus))}: not a folder (expected CORPUS/documents/…)")
    if not (corpus / "documents").is_dir():
        raise CommandError(USAGE, f"{printable(str(corpus))}: has no documents/ folder (see the README: corpus layout)")
    return corpus


def _as_of(value: str | None) -> date | None:
    from ingest.pipeline import parse_as_of

    try:
        return parse_as_of(value)
    except ValueError:
        raise CommandError(USAGE, f"--as-of {value!r} is not a YYYY-MM-DD date (or 'any')") from None


def _version_callback(value: bool) -> None:
    if value:
        out.print(f"ingest {__version__}")
        raise typer.Exit()


def _debug_callback(value: bool) -> None:
    global _debug
    _debug = value or debug_enabled()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version."
    ),
    debug: bool = typer.Option(
        False,
        "--debug",
        callback=_debug_callback,
        is_eager=True,
        help="Tracebacks for internal errors (env INGEST_DEBUG=1).",
    ),
) -> None:
    """ingest: every answer traceable to its passage, version and page."""


# --- parse -------------------------------------------------------------------


@app.command()
def parse(
    file: Path = typer.Argument(..., help="A .md, .html, .txt or .pdf file."),
    as_json: bool = JsonOpt,
    show_text: bool = typer.Option(True, "--text/--no-text", help="Print the parsed text after the blocks."),
) -> None:
    """Show the parsed text, its blocks (kind, section, pages, start–end) and the metadata found."""
    from ingest.parse import format_of, parse_file

    with handled(as_json):
        if not file.exists():
            raise CommandError(USAGE, f"{printable(str(file))}: no such file")
        if not file.is_file():
            raise CommandError(USAGE, f"{file}: not a file")
        if format_of(file) is None:
            raise CommandError(USAGE, f"{file}: unsupported file type (use .md .markdown .html .htm .txt .pdf)")
        try:
            doc = parse_file(file)
        except UnreadableFile as exc:
            raise CommandError(FAILED, f"{file}: unreadable file: {exc}") from None
        blocks = _blocks_json(doc)
        if as_json:
            emit_json(
                {
                    "source": str(file),
                    "format": doc.format,
                    "metadata": dict(doc.metadata),
                    "text": doc.text,
                    "blocks": blocks,
                    "page_starts": list(doc.page_starts),
                }
            )
            return
        _print_parsed(file, doc, blocks, show_text)


def _blocks_json(doc: ParsedDocument) -> list[dict[str, Any]]:
    return [
        {
            "kind": b.kind,
            "level": b.level,
            "section": b.section,
            "heading_path": list(b.heading_path),
            "start": b.start,
            "end": b.end,
            "pages": list(b.pages),
            "text": doc.text[b.start : b.end],
        }
        for b in doc.blocks
    ]


def _print_parsed(file: Path, doc: ParsedDocument, blocks: list[dict[str, Any]], show_text: bool) -> None:
    out.print(f"[bold]{safe(file)}[/bold]  format {doc.format}, {len(doc.text)} characters, {len(blocks)} blocks")
    out.print("[bold]metadata[/bold]")
    for key, value in sorted(doc.metadata.items()):
        out.print(f"  {key}: {escape(str(value))}")
    out.print("[bold]blocks[/bold]")
    for n, b in enumerate(blocks):
        pages: list[int] = b["pages"]
        span = (f" p{pages[0]}" + (f"-{pages[-1]}" if len(pages) > 1 else "")) if pages else ""
        path = " › ".join(b["heading_path"])
        text: str = b["text"]
        first = text.splitlines()[0] if text else ""
        out.print(
            f"  {n:>3} {b['kind']:<9} {b['start']:>6}-{b['end']:<6}{span:<7} {escape(path)}"
            f"  [dim]{escape(first[:60])}[/dim]"
        )
    if show_text:
        out.print("[bold]text[/bold]")
        out.print(escape(doc.text))


# --- validate -----------------------------------------------------------------


def _print_problems(problems: Iterable[DocumentProblems]) -> None:
    for p in problems:
        out.print(f"[red]✗ rejected[/red] {safe(p.source)}" + (f"  ({safe(p.doc_id)})" if p.doc_id else ""))
        for line in p.problems:
            out.print(f"    - {safe(line)}")


def _write_junit(path: Path | None, *suites: Suite) -> None:
    if path is None:
        return
    from ingest import junit

    try:
        junit.write(path, *suites)
    except OSError as exc:
        raise CommandError(
            USAGE, f"--junit {printable(str(path))}: cannot write the report: {exc.strerror or exc}"
        ) from None


@app.command(epilog=CORPUS_ENV)
def validate(
    corpus: Path = typer.Argument(
        ..., help="The corpus folder (with documents/, optional inventory.yaml and ingest.toml)."
    ),
    junit_file: Path | None = JunitOpt,
    quiet: bool = QuietOpt,
    verbose: bool = VerboseOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Check every document's metadata and readability; list every problem; write nothing."""
    from ingest import junit
    from ingest.corpus import scan_corpus

    with handled(as_json):
        config = _config()
        corpus = _corpus_dir(corpus)
        settings = load_settings(corpus)
        started = time.perf_counter()
        with progress_bar(not as_json and not quiet, "validating") as bar:
            on_file = bar.ticker("reading", _file_total(corpus) if bar else None)
            scan = scan_corpus(corpus, settings, on_file=on_file, **config.tuning_for(scan_corpus))
        _write_junit(
            junit_file,
            junit.documents_suite("validate", [(d.source, d.meta.key) for d in scan.documents], scan.problems),
        )
        if as_json:
            emit_json(scan.to_json())
        else:
            _print_scan(scan, quiet, verbose)
            if verbose:
                out.print(f"({time.perf_counter() - started:.2f}s)")
        if not scan.ok:
            raise typer.Exit(FAILED)


def _print_scan(scan: CorpusScan, quiet: bool, verbose: bool) -> None:
    if not quiet:
        _print_problems(scan.problems)
    if verbose:
        for d in scan.documents:
            out.print(f"  [green]✓[/green] {safe(d.source)}  {safe(d.meta.key)}  {d.meta.access}")
    formats = ", ".join(f"{n} {f}" for f, n in sorted(scan.formats.items()))
    access = ", ".join(f"{n} {a}" for a, n in sorted(scan.access_counts().items()))
    out.print(f"documents: {scan.seen} ({formats})")
    out.print(f"valid: {len(scan.documents)}   rejected: {len(scan.rejected)}")
    if not quiet:
        out.print(f"access (valid): {access or '-'}")
        if scan.defaulted_access:
            out.print(f"access defaulted from ingest.toml: {scan.defaulted_access} document(s)")


# --- run ------------------------------------------------------------------------


def _run_suite(result: RunResult) -> Suite:
    """One case per document the run saw: rejected ones and those with chunks the store refused fail."""
    from ingest import junit

    suite = junit.Suite("run")
    refused: dict[str, list[str]] = {}
    chunk_source = {c.chunk_id: doc.source for doc, chunks, _ in result.plan.to_write for c in chunks}
    for e in result.errors:
        refused.setdefault(chunk_source.get(e.id, "(unknown document)"), []).append(
            f"chunk {e.id} refused by the store: {e.reason}"
        )
    for item in result.plan.items:
        if item.action == "removed":
            continue
        reasons = refused.pop(item.source, [])
        suite.add(item.source, f"ingest.run.{item.action}", reasons)
    junit.add_problems(suite, result.plan.problems, "ingest.run.rejected")
    for source, reasons in refused.items():
        suite.add(source, "ingest.run.refused", reasons)
    return suite


def _print_plan(result: RunResult, dry_run: bool, verbose: bool) -> None:
    items = [i for i in result.plan.items if verbose or dry_run or i.action != "unchanged"]
    if dry_run:
        out.print("[bold]plan[/bold] (dry run: nothing written)")
    if len(items) > PLAN_LINES and not verbose:
        counts = Counter(item.action for item in result.plan.items)
        summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items()))
        out.print(f"  plan: {summary}  ({len(items)} lines with --verbose or in --json)")
        return
    for item in items:
        counts_text = f"+{item.write} −{item.delete}" if item.write or item.delete else ""
        reason = f"  {safe(item.reason)}" if item.reason else ""
        out.print(f"  {item.action:<9} {safe(item.key):<40} {counts_text:<10}{reason}")


@dataclass(frozen=True)
class RunOptions:
    """What ``ingest run`` was asked to do, beyond where (the corpus) and which store."""

    full: bool = False
    dry_run: bool = False
    strict: bool = False
    accept_edits: bool = False
    wait: float = 0.0
    allow_empty: bool = False


@app.command(epilog=STORE_ENV + " " + RUN_ENV)
@store_options
def run(
    corpus: Path = typer.Argument(..., help="The corpus folder."),
    chunker: str | None = typer.Option(
        None, "--chunker", help="structure (default), fixed or overlap; default from ingest.toml."
    ),
    size: int | None = typer.Option(None, "--size", help="Chunk size in words (default from ingest.toml, else 200)."),
    overlap: int | None = typer.Option(
        None, "--overlap", help="Words shared by consecutive windows (overlap chunker)."
    ),
    full: bool = typer.Option(False, "--full", help="Rebuild everything and swap it in atomically."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the plan (new, changed, unchanged, removed, rejected); write nothing."
    ),
    strict: bool = typer.Option(False, "--strict", help="All or nothing: write nothing when any document is rejected."),
    accept_edits: bool = typer.Option(
        False, "--accept-edits", help="Replace documents whose content changed without a version bump."
    ),
    wait: float = typer.Option(0.0, "--wait", help="Seconds to wait for another run's lock before giving up."),
    allow_empty: bool = typer.Option(
        False, "--allow-empty", help="Allow an empty documents/ folder to remove every stored document."
    ),
    junit_file: Path | None = JunitOpt,
    flags: StoreFlags = StoreFlags(),
    quiet: bool = QuietOpt,
    verbose: bool = VerboseOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Validate, chunk and write to the store: only what changed; what left the folder is deleted."""
    options = RunOptions(full, dry_run, strict, accept_edits, wait, allow_empty)
    config, connection = _store_config(flags, as_json)
    with handled(as_json, connection):
        corpus = _corpus_dir(corpus)
        settings = load_settings(corpus)
        chunking = chunking_with(settings.chunking, chunker, size, overlap, "options")
        target = _open_store(config, settings)
        try:
            with progress_bar(not as_json and not quiet, "indexing") as bar:
                total_files = _file_total(corpus) if bar else None
                result = _execute(corpus, target, settings, chunking, config, options, bar, total_files)
                strict_refused = strict and not dry_run and bool(result.plan.problems)
                if strict and not dry_run and not strict_refused:
                    result = _execute(
                        corpus, target, settings, chunking, config, options, bar, total_files, dry_run=False
                    )
        finally:
            target.close()
        _write_junit(junit_file, _run_suite(result))
        data = result.to_json()
        if strict_refused:
            data["strict"] = "refused: documents rejected, nothing written"
        if as_json:
            emit_json(data)
        else:
            _print_run(result, data, dry_run=dry_run, strict_refused=strict_refused, quiet=quiet, verbose=verbose)
        if not result.ok:
            raise typer.Exit(FAILED)


def _execute(
    corpus: Path,
    target: Store,
    settings: Settings,
    chunking: Any,
    config: Config,
    options: RunOptions,
    bar: Bar,
    total_files: int | None,
    dry_run: bool | None = None,
) -> RunResult:
    """One pipeline run with progress (``dry_run`` None: a dry run for --dry-run and for --strict's first pass)."""
    from ingest import pipeline

    write_task: TaskID | None = None

    def on_progress(done: int, total: int) -> None:
        nonlocal write_task
        if bar.progress is None:
            return
        if write_task is None:
            write_task = bar.progress.add_task("writing", total=total)
        bar.progress.update(write_task, completed=done, total=total)

    scan_task = bar.task("reading", total_files)
    try:
        return pipeline.run(
            corpus,
            target,
            settings,
            chunking,
            full=options.full,
            dry_run=(options.dry_run or options.strict) if dry_run is None else dry_run,
            accept_edits=options.accept_edits,
            lock_wait_s=options.wait,
            allow_empty=options.allow_empty,
            on_file=bar.advancer(scan_task),
            progress=on_progress,
            **config.tuning_for(pipeline.run),
        )
    finally:
        bar.remove(scan_task)


def _print_run(
    result: RunResult, data: dict[str, Any], *, dry_run: bool, strict_refused: bool, quiet: bool, verbose: bool
) -> None:
    _print_problems(result.plan.problems)
    for e in result.errors:
        out.print(f"[red]✗ refused by the store[/red] chunk {e.id}: {safe(e.reason)}")
    for warning in getattr(result, "warnings", None) or ():
        err.print(f"[yellow]warning:[/yellow] {safe(warning)}")
    if not quiet:
        for line in result.plan.overrides:
            out.print(f"[yellow]! override[/yellow] {safe(line)}")
        if not strict_refused:
            _print_plan(result, dry_run, verbose)
    for change in data.get("access_repaired") or ():
        out.print(f"[yellow]access repaired:[/yellow] {safe(change)}")
    d, c = data["documents"], data["chunks"]
    repaired = data["repaired"]
    if repaired and any(repaired.values()):
        out.print(
            f"repaired an interrupted run: {repaired['orphan_chunks']} orphan chunks deleted, "
            f"{repaired['incomplete_documents']} incomplete documents redone"
        )
    if d["defaulted_access"] and not quiet:
        out.print(f"access defaulted from ingest.toml: {d['defaulted_access']} document(s)")
    if strict_refused:
        out.print(f"[red]--strict:[/red] {d['rejected']} document(s) rejected; nothing written")
    verb = "would be" if dry_run else ""
    out.print(
        f"documents: {d['seen']} seen, {d['indexed']} indexed, {d['unchanged']} unchanged, "
        f"{d['rejected']} rejected, {d['removed']} removed"
    )
    out.print(f"chunks: {c['written']} written, {c['deleted']} deleted, {c['total']} total {verb}".rstrip())
    if not quiet:
        out.print(f"store: {safe(result.store)}   ({data['elapsed_s']:.2f}s)")
    if verbose and d["seen"]:
        out.print(
            f"timing: {data['elapsed_s'] / d['seen'] * 1000:.1f} ms per document, "
            f"{c['written'] / max(data['elapsed_s'], 1e-9):.0f} chunks/s written"
        )


# --- search -------------------------------------------------------------------

HIT_KEYS = ("chunk_id", "doc_id", "version", "title", "section", "sections", "pages", "start", "end", "access")


@app.command(epilog=STORE_ENV)
@store_options
def search(
    query: str = typer.Argument(..., help="Words to search for (BM25)."),
    top: int = typer.Option(5, "--top", "-k", min=1, max=1000, help="How many hits."),
    role: str = typer.Option(
        "public", "--role", help="Whose eyes: public, partner, staff (or a role from ingest.toml)."
    ),
    as_of: str | None = typer.Option(
        None, "--as-of", help="Only chunks in force on this date (YYYY-MM-DD; default today; 'any' for no date filter)."
    ),
    doc_id: str | None = typer.Option(None, "--doc-id", help="Only this document."),
    flags: StoreFlags = StoreFlags(),
    as_json: bool = JsonOpt,
) -> None:
    """BM25 search with the role's access and the as-of date applied inside the store."""
    from ingest.api import Index

    config, connection = _store_config(flags, as_json)
    with handled(as_json, connection):
        day = _as_of(as_of)
        index = Index(_open_store(config, create=False), connection)
        try:
            index.store.check()
            hits = index.search(query, role=role, as_of=day, top=top, doc_id=doc_id)
        finally:
            index.close()
        if as_json:
            keys = (*HIT_KEYS, "score", "text")
            emit_json(
                {
                    "query": query,
                    "role": role,
                    "as_of": day.isoformat() if day else None,
                    "store": connection.display,
                    "hits": [{k: h.to_json()[k] for k in keys} for h in hits],
                }
            )
            return
        _print_hits(hits, query, role, day)


def _print_hits(hits: list[Hit], query: str, role: str, day: date | None) -> None:
    if not hits:
        out.print(f"no hits for {safe(repr(query))} (role {safe(role)}, as of {day or 'any date'})")
        return
    for n, hit in enumerate(hits, start=1):
        c = hit.chunk
        pages = f"  pages {c.pages[0]}-{c.pages[-1]}" if c.pages else ""
        out.print(
            f"[bold]{n}. {c.short_id}[/bold]  {safe(c.title)}  v{safe(c.version)}  § {safe(c.section or '-')}{pages}"
            f"  score {hit.score:.2f}"
        )
        out.print(f"   {safe(_snippet(c.text))}")


def _listing(values: list[str], most: int = 10) -> str:
    return ", ".join(values[:most]) + (f", … ({len(values) - most} more)" if len(values) > most else "")


def _snippet(text: str, width: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# --- chunks / show --------------------------------------------------------------


def chunk_line(c: Chunk) -> str:
    pages = ",".join(str(p) for p in c.pages) if c.pages else "-"
    return (
        f"{c.short_id} v{c.version} #{c.position} chars {c.start}-{c.end} pages {pages} | {c.word_count} words"
        f" | {c.section}"
    )


@app.command(epilog=STORE_ENV)
@store_options
def chunks(
    doc_id: str = typer.Argument(..., help="The document's doc_id."),
    version: str | None = typer.Option(None, "--version", help="Only this version (default: every stored version)."),
    flags: StoreFlags = StoreFlags(),
    as_json: bool = JsonOpt,
) -> None:
    """A document's chunks in order: short_id vV #pos chars S-E pages P | N words | section."""
    from ingest.store import require_ingest_index

    config, connection = _store_config(flags, as_json)
    with handled(as_json, connection):
        target = _open_store(config, create=False)
        try:
            target.check()
            found = target.document_chunks(doc_id, version)
            if not found:
                require_ingest_index(target)
        finally:
            target.close()
        if not found:
            raise CommandError(
                FAILED, f"no chunks for doc_id {doc_id!r}" + (f" version {version!r}" if version else "")
            )
        if as_json:
            emit_json({"doc_id": doc_id, "store": connection.display, "chunks": [c.to_json() for c in found]})
            return
        for c in found:
            out.print(safe(chunk_line(c)))


@app.command(epilog=STORE_ENV)
@store_options
def show(
    chunk_id: str = typer.Argument(..., help="A chunk ID or any unique prefix of 8+ characters."),
    context: int = typer.Option(
        0, "--context", "-C", min=0, help="Also show N neighbours each side (same document version)."
    ),
    flags: StoreFlags = StoreFlags(),
    as_json: bool = JsonOpt,
) -> None:
    """The full record of a chunk and its citation; --context N adds its neighbours."""
    from ingest.store import require_ingest_index
    from ingest.store.base import ChunkNotFound

    config, connection = _store_config(flags, as_json)
    with handled(as_json, connection):
        if len(chunk_id.strip()) < MIN_PREFIX or not all(ch in "0123456789abcdefABCDEF" for ch in chunk_id.strip()):
            raise CommandError(
                USAGE,
                f"{printable(repr(chunk_id))} is not a chunk ID: "
                f"give the ID or a prefix of {MIN_PREFIX}+ hex characters",
            )
        target = _open_store(config, create=False)
        try:
            target.check()
            try:
                chunk = target.get_chunk(chunk_id)
            except ChunkNotFound:
                require_ingest_index(target)
                raise
            before, after = target.neighbours(chunk, context)
        finally:
            target.close()
        if as_json:
            emit_json(
                {
                    "chunk": chunk.to_json(),
                    "citation": chunk.citation(),
                    "store": connection.display,
                    "before": [c.to_json() for c in before],
                    "after": [c.to_json() for c in after],
                }
            )
            return
        _print_chunk(chunk, before, after)


def _print_chunk(chunk: Chunk, before: list[Chunk], after: list[Chunk]) -> None:
    out.print(f"[bold]{safe(chunk.citation())}[/bold]")
    for key, value in chunk.to_json().items():
        if key != "text":
            shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else str(value)
            out.print(f"  {key}: {safe(shown)}")
    for c in before:
        _print_neighbour(c)
    out.print(f"[bold]── #{chunk.position} {chunk.short_id} § {safe(chunk.section)}[/bold]")
    out.print(safe(chunk.text, keep_newlines=True))
    for c in after:
        _print_neighbour(c)


def _print_neighbour(c: Chunk) -> None:
    out.print(f"[dim]── #{c.position} {c.short_id} § {safe(c.section)}[/dim]")
    out.print(f"[dim]{safe(c.text, keep_newlines=True)}[/dim]")


# --- verify / eval / stats -------------------------------------------------------

VERIFY_CHECKS = (
    "untraceable",
    "missing_in_store",
    "stale_in_store",
    "orphan_chunks",
    "incomplete_documents",
    "metadata_mismatch",
    "access_layout",
)


@app.command(epilog=STORE_ENV + " " + CORPUS_ENV)
@store_options
def verify(
    corpus: Path = typer.Argument(..., help="The corpus folder the store was built from."),
    flags: StoreFlags = StoreFlags(),
    quiet: bool = QuietOpt,
    verbose: bool = VerboseOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Re-parse every source: every stored chunk must equal its characters; store and folder agree."""
    from ingest import pipeline

    config, connection = _store_config(flags, as_json)
    with handled(as_json, connection):
        corpus = _corpus_dir(corpus)
        settings = load_settings(corpus)
        target = _open_store(config, settings, create=False)
        started = time.perf_counter()
        try:
            with progress_bar(not as_json and not quiet, "verifying") as bar:
                on_file = bar.ticker("re-reading", _file_total(corpus) if bar else None)
                result = pipeline.verify(
                    corpus, target, settings, on_file=on_file, **config.tuning_for(pipeline.verify)
                )
        finally:
            target.close()
        data = result.to_json()
        if as_json:
            emit_json({**data, "store": connection.display})
        else:
            _print_verify(result, data, quiet, verbose)
            if verbose:
                out.print(f"({time.perf_counter() - started:.2f}s)")
        if not result.ok:
            raise typer.Exit(FAILED)


def _print_verify(result: VerifyResult, data: dict[str, Any], quiet: bool, verbose: bool) -> None:
    out.print(f"chunks checked: {result.chunks}")
    for name in VERIFY_CHECKS:
        values = data[name]
        if quiet and not values:
            continue
        mark = "[green]✓[/green]" if not values else "[red]✗[/red]"
        shown = values if verbose else _listing(values)
        out.print(
            f"{mark} {name.replace('_', ' ')}: {len(values)}"
            + (f"  {safe(shown if isinstance(shown, str) else ', '.join(shown))}" if values else "")
        )
    if result.edited_in_folder and not quiet:
        out.print(
            f"[yellow]![/yellow] edited in the folder without a version bump: {len(result.edited_in_folder)}  "
            f"{safe(_listing(result.edited_in_folder))}\n"
            "  (the store keeps citing the bytes it indexed; bump the version, or `ingest run --accept-edits`)"
        )
    if result.problems and not quiet:
        out.print(f"(rejected documents in the folder, not checked: {len(result.problems)})")


@app.command(name="eval", epilog=STORE_ENV)
@store_options
def eval_(
    questions: Path = typer.Argument(..., help="questions.yaml"),
    top: int = typer.Option(5, "--top", "-k", min=1, help="k for hit@k."),
    min_hit_at_k: float | None = typer.Option(
        None,
        "--min-hit-at-k",
        min=0.0,
        max=1.0,
        help="Gate: exit 1 when hit@k is below this (0–1).",
        show_default=False,
    ),
    max_leaks: int = typer.Option(0, "--max-leaks", min=0, help="Gate: exit 1 when more leaks than this."),
    junit_file: Path | None = JunitOpt,
    flags: StoreFlags = StoreFlags(),
    quiet: bool = QuietOpt,
    verbose: bool = VerboseOpt,
    as_json: bool = JsonOpt,
) -> None:
    """hit@k and MRR overall and per category, the missed questions, and every leak; with the
    gates, exit 1 below --min-hit-at-k or above --max-leaks (an empty store never passes)."""
    from ingest import junit
    from ingest.api import Index
    from ingest.evaluate import evaluate, gate_failures, load_questions
    from ingest.store import require_ingest_index

    config, connection = _store_config(flags, as_json)
    with handled(as_json, connection):
        qs = load_questions(questions)
        index = Index(_open_store(config, create=False), connection)
        started = time.perf_counter()
        try:
            index.store.check()
            result = evaluate(qs, functools.partial(_ask, index, top), index.labels_for, k=top)
            if qs and result.returned == 0:
                require_ingest_index(index.store)
        finally:
            index.close()
        failures = gate_failures(result, min_hit_at_k, max_leaks)
        _write_junit(junit_file, junit.questions_suite(result, failures))
        if as_json:
            data = {**result.to_json(), "store": connection.display}
            emit_json({**data, "gate": {"passed": not failures, "failures": failures}})
        else:
            _print_eval(result, failures, top, quiet, verbose)
            if verbose:
                out.print(f"({time.perf_counter() - started:.2f}s)")
            _print_leaks_and_gate(result, failures)
        if failures:
            raise typer.Exit(FAILED)


def _ask(index: Index, top: int, q: Question) -> list[Hit]:
    """One evaluation question, searched as its role on its date (the same limits as ``search``)."""
    from ingest.api import QueryTooLarge, check_query

    try:
        check_query(q.question)
    except QueryTooLarge as exc:
        raise CommandError(USAGE, f"question {q.id}: {exc}") from None
    hits: list[Hit] = index.store.search(
        q.question, index.labels_for(q.role), q.as_of or date.today(), top=top, role=q.role
    )
    return hits


def _print_eval(result: EvalResult, failures: list[str], top: int, quiet: bool, verbose: bool) -> None:
    scored = result.questions - result.no_answer
    out.print(
        f"questions: {result.questions}   hit@{top}: {result.hit_at_k:.3f}   MRR: {result.mrr:.3f}"
        f"   (over the {scored} questions with relevant passages)"
    )
    if not quiet:
        for cat, values in result.by_category.items():
            out.print(f"  {safe(cat):<14} {values['questions']:>3} questions   hit@{top} {values['hit_at_k']:.3f}")
        out.print(f"missed: {safe(', '.join(result.missed)) or '-'}")
    if verbose:
        for o in result.outcomes:
            mark = "[green]✓[/green]" if o.passed else "[red]✗[/red]"
            rank = f"rank {o.rank}" if o.rank else "-"
            out.print(
                f"  {mark} {safe(o.id)} ({safe(o.role)}) {rank}" + "".join(f"\n      {safe(r)}" for r in o.reasons)
            )


def _print_leaks_and_gate(result: EvalResult, failures: list[str]) -> None:
    for leak in result.leaks:
        out.print(f"[red]LEAK[/red] {safe(leak['id'])}: {leak['chunk_id'][:12]} from {safe(leak['doc_id'])}")
    if not result.leaks:
        out.print("leaks: 0")
    for failure in failures:
        out.print(f"[red]✗ gate:[/red] {safe(failure)}")


@app.command(epilog=STORE_ENV)
@store_options
def stats(flags: StoreFlags = StoreFlags(), as_json: bool = JsonOpt) -> None:
    """Counts in the store by access, status, format and version."""
    from ingest.store import require_ingest_index

    config, _connection = _store_config(flags, as_json)
    with handled(as_json, _connection):
        target = _open_store(config, create=False)
        try:
            target.check()
            counts = target.counts()
            meta = target.get_meta()
            if not counts["totals"]["chunks"] and not counts["totals"]["documents"] and not meta:
                require_ingest_index(target)
        finally:
            target.close()
        if as_json:
            decoded = {k: (json.loads(v) if k in ("labels", "roles") else v) for k, v in meta.items()}
            emit_json({"store": target.name, **counts, "meta": decoded})
            return
        _print_stats(target.name, counts, meta)


def _print_stats(name: str, counts: dict[str, Any], meta: dict[str, str]) -> None:
    totals = counts["totals"]
    out.print(f"store: {safe(name)}   documents: {totals['documents']}   chunks: {totals['chunks']}")
    if meta:
        out.print(
            f"built {safe(meta.get('built_at', '?'))} with chunker {safe(meta.get('chunker'))} "
            f"size {safe(meta.get('size'))}, parser v{safe(meta.get('parser_version'))}"
        )
    for field, values in counts.items():
        if field != "totals":
            out.print(f"chunks by {field}: " + (", ".join(f"{safe(k)} {v}" for k, v in values.items()) or "-"))


def _click_exception() -> type[Exception]:
    """typer >= 0.20 carries its own click; older ones use click itself."""
    import importlib

    try:
        module = importlib.import_module("typer._click.exceptions")
    except ImportError:  # pragma: no cover
        module = importlib.import_module("click.exceptions")
    found: type[Exception] = module.ClickException
    return found


def main() -> None:
    """The console script: typer's app, with its own usage errors (a missing argument, --top 0)
    also given as one JSON object on stdout when --json was asked for; anything unexpected is
    exit 4 with one line (the traceback with --debug anywhere on the line, or INGEST_DEBUG=1)."""
    click_exception = _click_exception()
    args = sys.argv[1:]
    if "--debug" in args:  # accepted after the command too: `ingest run corpus --debug`
        args = ["--debug", *(a for a in args if a != "--debug")]
    try:
        code = app(args=args, prog_name="ingest", standalone_mode=False)
    except click_exception as exc:
        if "--json" in args:
            emit_json({"error": exc.format_message(), "exit_code": exc.exit_code})  # type: ignore[attr-defined]
        exc.show()  # type: ignore[attr-defined]
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - outside any command's handler: still one line
        if "--debug" in args or debug_enabled():
            traceback.print_exc(file=sys.stderr)
        message = f"internal error (a bug in ingest {__version__}): {type(exc).__name__}: {exc}"
        if "--json" in args:
            emit_json({"error": message, "exit_code": INTERNAL})
        err.print(f"[red]error:[/red] {safe(message)}")
        sys.exit(INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
