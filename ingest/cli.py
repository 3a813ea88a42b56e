"""The `ingest` command line: a thin shell over the library (parse, corpus, pipeline, stores).

Owns the commands and their exit codes: 0 all fine · 1 documents rejected or a check failed (the rest done) ·
2 usage or configuration error · 3 store unreachable or refused · 4 internal error (a bug: one line; the traceback
with --debug or INGEST_DEBUG=1). With --json, stdout carries one JSON object; messages go to stderr. Options:
ingest.cli_options (flags > environment > ingest.toml > defaults, resolved once, passed down); printing: cli_output.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
import traceback
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ingest import __version__, api, cli_options, junit
from ingest.api import Index, QueryTooLarge, RunOptions, check_query, read_folder_ahead, run_pipeline
from ingest.cli_options import (
    CORPUS_ENV,
    FAILED,
    INTERNAL,
    NO_FLAGS,
    NO_REPORT,
    RUN_ENV,
    STORE_ENV,
    USAGE,
    Command,
    CommandError,
    Group,
    JsonOpt,
    QuietOpt,
    ReportFlags,
    RunCommand,
    VerboseOpt,
    click_exception_class,
    command_config,
    corpus_dir,
    day_of,
    file_total,
    handled,
    open_store,
    pause_collector,
    report_options,
    resume_collector,
    set_debug,
    store_command,
    store_options,
    write_junit,
)
from ingest.cli_output import (
    HIT_KEYS,
    ReaderMayLeave,
    blocks_json,
    chunk_line,
    emit_json,
    err,
    out,
    print_chunk,
    print_eval,
    print_hits,
    print_leaks_and_gate,
    print_parsed,
    print_run,
    print_scan,
    print_stats,
    print_verify,
    printable,
    progress_bar,
    safe,
)
from ingest.config import MAX_SECONDS, ConnectionRequest, debug_enabled
from ingest.model import MIN_PREFIX, UnreadableFile
from ingest.settings import chunking_with, load_settings

if TYPE_CHECKING:
    from rich.progress import TaskID  # imported only when a progress bar is shown (cli_output)

    from ingest.evaluate import Question
    from ingest.model import Hit
    from ingest.pipeline import RunResult

app = typer.Typer(
    cls=Group,
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


def _version_callback(value: bool) -> None:
    if value:
        out.print(f"ingest {__version__}")
        raise typer.Exit()


def _debug_callback(value: bool) -> None:
    set_debug(value or debug_enabled())


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


@app.command(cls=Command)
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
        blocks = blocks_json(doc)
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
        print_parsed(file, doc, blocks, show_text)


@app.command(cls=Command, epilog=CORPUS_ENV)
@report_options
def validate(
    corpus: Path = typer.Argument(
        ..., help="The corpus folder (with documents/, optional inventory.yaml and ingest.toml)."
    ),
    report: ReportFlags = NO_REPORT,
) -> None:
    """Check every document's metadata and readability; list every problem; write nothing."""
    from ingest.corpus import scan_corpus

    with handled(report.as_json):
        config = command_config()
        corpus = corpus_dir(corpus)
        settings = load_settings(corpus)
        started = time.perf_counter()
        with progress_bar(not report.as_json and not report.quiet, "validating") as bar:
            on_file = bar.ticker("reading", file_total(corpus) if bar else None)
            scan = scan_corpus(corpus, settings, on_file=on_file, workers=config.workers)
        write_junit(
            report.junit_file,
            junit.documents_suite("validate", [(d.source, d.meta.key) for d in scan.documents], scan.problems),
        )
        if report.as_json:
            emit_json(scan.to_json())
        else:
            print_scan(scan, report.quiet, report.verbose)
            if report.verbose:
                out.print(f"({time.perf_counter() - started:.2f}s)")
        if not scan.ok:
            raise typer.Exit(FAILED)


@app.command(cls=RunCommand, epilog=STORE_ENV + " " + RUN_ENV)
@store_options
@report_options
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
    report: ReportFlags = NO_REPORT,
    flags: ConnectionRequest = NO_FLAGS,
) -> None:
    """Validate, chunk and write to the store: only what changed; what left the folder is deleted."""
    options = RunOptions(
        full=full, dry_run=dry_run, accept_edits=accept_edits, lock_wait_s=wait, allow_empty=allow_empty, strict=strict
    )
    with store_command(flags, report.as_json) as (config, connection):
        if not 0 <= wait <= MAX_SECONDS:  # nan included
            raise CommandError(USAGE, f"--wait {wait!r}: give seconds from 0 to {MAX_SECONDS:g}")
        corpus = corpus_dir(corpus)
        settings = load_settings(corpus)
        chunking = chunking_with(settings.chunking, chunker, size, overlap, "options")
        ahead = read_folder_ahead(corpus, options)  # hashing while the store's client is imported
        result = api.unchanged_run(corpus, connection, settings, chunking, options, ahead)  # without the client
        if result is None:
            with contextlib.closing(open_store(config, settings)) as target:
                _freeze_imports()
                start = functools.partial(run_pipeline, corpus, target, settings, chunking, config, ahead=ahead)
                result = _execute(start, options, report, corpus)
        strict_refused = result.strict_refused
        if report.junit_file is not None:  # the suite names every document: built only when asked for
            write_junit(report.junit_file, junit.run_suite(result))
        data = result.to_json()
        if strict_refused:
            withdrawn = data["documents"]["removed"]
            data["strict"] = f"{'would be ' if dry_run else ''}refused: documents rejected, nothing written" + (
                f" but {withdrawn} withdrawn version(s)" if withdrawn else ""
            )
        if report.as_json:
            emit_json(data)
        else:
            print_run(
                result, data, dry_run=dry_run, strict_refused=strict_refused, quiet=report.quiet, verbose=report.verbose
            )
        if not result.ok:
            raise typer.Exit(FAILED)


def _freeze_imports() -> None:
    """The modules a run needs, imported: the cycle collector resumes (see :func:`main`)."""
    import ingest.pipeline  # noqa: F401 - imported now so that it is frozen with the rest

    resume_collector()


def _execute(start: Callable[..., RunResult], options: RunOptions, report: ReportFlags, corpus: Path) -> RunResult:
    """One pipeline run, with the reading and writing phases on a progress bar (on a terminal)."""
    write_task: TaskID | None = None
    with progress_bar(not report.as_json and not report.quiet, "indexing") as bar:

        def on_progress(done: int, total: int) -> None:
            nonlocal write_task
            if bar.progress is None:
                return
            if write_task is None:
                write_task = bar.progress.add_task("writing", total=total)
            bar.progress.update(write_task, completed=done, total=total)

        scan_task = bar.task("reading", file_total(corpus) if bar else None)
        try:
            return start(options, on_file=bar.advancer(scan_task), progress=on_progress)
        finally:
            bar.remove(scan_task)


@app.command(cls=Command, epilog=STORE_ENV)
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
    doc_ids: list[str] | None = typer.Option(None, "--doc-id", metavar="<str>", help="Only this document (once)."),
    flags: ConnectionRequest = NO_FLAGS,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="One line per hit, no passage."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Each hit's whole passage, and the time taken."),
    as_json: bool = JsonOpt,
) -> None:
    """BM25 search with the role's access and the as-of date applied inside the store."""
    started = time.perf_counter()
    with store_command(flags, as_json) as (config, connection):
        day = day_of(as_of)
        doc_id = cli_options.one_doc_id(doc_ids)
        index = Index(open_store(config, create=False), connection)
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
        print_hits(hits, query, role, day, passage="none" if quiet else "whole" if verbose else "snippet")
        if verbose:
            out.print(f"({time.perf_counter() - started:.2f}s)")


@app.command(cls=Command, epilog=STORE_ENV)
@store_options
def chunks(
    doc_id: str = typer.Argument(..., help="The document's doc_id."),
    version: str | None = typer.Option(None, "--version", help="Only this version (default: every stored version)."),
    flags: ConnectionRequest = NO_FLAGS,
    as_json: bool = JsonOpt,
) -> None:
    """A document's chunks in order: short_id vV #pos chars S-E pages P | N words | section."""
    from ingest.store import require_ingest_index

    with store_command(flags, as_json) as (config, connection):
        target = open_store(config, create=False)
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


@app.command(cls=Command, epilog=STORE_ENV)
@store_options
def show(
    chunk_id: str = typer.Argument(..., help="A chunk ID or any unique prefix of 8+ characters."),
    context: int = typer.Option(
        0, "--context", "-C", min=0, max=1000, help="Also show N neighbours each side (same document version)."
    ),
    flags: ConnectionRequest = NO_FLAGS,
    as_json: bool = JsonOpt,
) -> None:
    """The full record of a chunk and its citation; --context N adds its neighbours."""
    from ingest.store import require_ingest_index
    from ingest.store.base import ChunkNotFound

    with store_command(flags, as_json) as (config, connection):
        if len(chunk_id.strip()) < MIN_PREFIX or not all(ch in "0123456789abcdefABCDEF" for ch in chunk_id.strip()):
            raise CommandError(
                USAGE,
                f"{printable(repr(chunk_id))} is not a chunk ID: "
                f"give the ID or a prefix of {MIN_PREFIX}+ hex characters",
            )
        target = open_store(config, create=False)
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
        print_chunk(chunk, before, after)


@app.command(cls=Command, epilog=STORE_ENV)
@store_options
def layout(
    corpus: Path = typer.Argument(..., help="The corpus folder whose ingest.toml \\[roles] the aliases must follow."),
    check: bool = typer.Option(
        False, "--check", help="Report what differs and change nothing (exit 1 if anything does)."
    ),
    flags: ConnectionRequest = NO_FLAGS,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="The count only."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also the time taken."),
    as_json: bool = JsonOpt,
) -> None:
    # "\\[": rich markup would take "[roles]" for a style tag and drop it from --help.
    """Make every role alias match \\[roles] (every run does this first); --check only reports."""
    started = time.perf_counter()
    with store_command(flags, as_json) as (config, connection):
        settings = load_settings(corpus_dir(corpus))
        target = open_store(config, settings, create=False)
        try:
            target.check()
            changes = target.reconcile_access(settings.roles, check=check)
        finally:
            target.close()
        if as_json:
            emit_json({"store": connection.display, "check": check, "changes": changes})
        else:
            for line in () if quiet else changes:
                out.print(safe(line))
            out.print(f"access layout: {len(changes)} {'difference(s)' if check else 'change(s)'}")
            if verbose:
                out.print(f"({time.perf_counter() - started:.2f}s)")
        if check and changes:
            raise typer.Exit(FAILED)


@app.command(cls=Command, epilog=STORE_ENV + " " + CORPUS_ENV)
@store_options
def verify(
    corpus: Path = typer.Argument(..., help="The corpus folder the store was built from."),
    flags: ConnectionRequest = NO_FLAGS,
    quiet: bool = QuietOpt,
    verbose: bool = VerboseOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Re-parse every source: every stored chunk must equal its characters; store and folder agree."""
    from ingest import pipeline

    with store_command(flags, as_json) as (config, connection):
        corpus = corpus_dir(corpus)
        settings = load_settings(corpus)
        target = open_store(config, settings, create=False)
        started = time.perf_counter()
        try:
            with progress_bar(not as_json and not quiet, "verifying") as bar:
                on_file = bar.ticker("re-reading", file_total(corpus) if bar else None)
                result = pipeline.verify(corpus, target, settings, on_file=on_file, workers=config.workers)
        finally:
            target.close()
        data = result.to_json()
        if as_json:
            emit_json({**data, "store": connection.display})
        else:
            print_verify(result, data, quiet, verbose)
            if verbose:
                out.print(f"({time.perf_counter() - started:.2f}s)")
        if not result.ok:
            raise typer.Exit(FAILED)


@app.command(cls=Command, name="eval", epilog=STORE_ENV)
@store_options
@report_options
def eval_(
    questions: Path = typer.Argument(..., help="questions.yaml"),
    top: int = typer.Option(5, "--top", "-k", min=1, max=1000, help="k for hit@k."),
    min_hit_at_k: float | None = typer.Option(
        None,
        "--min-hit-at-k",
        min=0.0,
        max=1.0,
        help="Gate: exit 1 when hit@k is below this (0–1).",
        show_default=False,
    ),
    max_leaks: int = typer.Option(0, "--max-leaks", min=0, help="Gate: exit 1 when more leaks than this."),
    report: ReportFlags = NO_REPORT,
    flags: ConnectionRequest = NO_FLAGS,
) -> None:
    """hit@k and MRR overall and per category, the missed questions, and every leak; with the
    gates, exit 1 below --min-hit-at-k or above --max-leaks (an empty store never passes)."""
    from ingest.evaluate import evaluate, gate_failures, load_questions
    from ingest.store import require_ingest_index

    with store_command(flags, report.as_json) as (config, connection):
        qs = load_questions(questions)
        index = Index(open_store(config, create=False), connection)
        started = time.perf_counter()
        try:
            index.store.check()
            result = evaluate(qs, functools.partial(_ask, index, top), index.labels_for, k=top)
            if qs and result.returned == 0:
                require_ingest_index(index.store)
        finally:
            index.close()
        failures = gate_failures(result, min_hit_at_k, max_leaks)
        write_junit(report.junit_file, junit.questions_suite(result, failures))
        if report.as_json:
            data = {**result.to_json(), "store": connection.display}
            emit_json({**data, "gate": {"passed": not failures, "failures": failures}})
        else:
            print_eval(result, failures, top, report.quiet, report.verbose)
            if report.verbose:
                out.print(f"({time.perf_counter() - started:.2f}s)")
            print_leaks_and_gate(result, failures)
        if failures:
            raise typer.Exit(FAILED)


def _ask(index: Index, top: int, q: Question) -> list[Hit]:
    """One evaluation question, searched as its role on its date (the same limits as ``search``)."""
    try:
        check_query(q.question)
    except QueryTooLarge as exc:
        raise CommandError(USAGE, f"question {q.id}: {exc}") from None
    hits: list[Hit] = index.store.search(q.question, index.access_for(q.role), q.as_of or date.today(), top=top)
    return hits


@app.command(cls=Command, epilog=STORE_ENV)
@store_options
def stats(
    flags: ConnectionRequest = NO_FLAGS,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="The totals only."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also the run metadata recorded in the store."),
    as_json: bool = JsonOpt,
) -> None:
    """Counts in the store by access, status, format and version."""
    from ingest.store import require_ingest_index

    with store_command(flags, as_json) as (config, _connection):
        target = open_store(config, create=False)
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
        print_stats(target.name, counts, meta, detail="totals" if quiet else "meta" if verbose else "counts")


def main() -> None:
    """The console script: typer's app, with its own usage errors (a missing argument, --top 0)
    also given as one JSON object on stdout when --json was asked for; anything unexpected is
    exit 4 with one line (the traceback with --debug anywhere on the line, or INGEST_DEBUG=1)."""
    click_exception = click_exception_class()
    args = sys.argv[1:]
    if "--debug" in args:  # accepted after the command too: `ingest run corpus --debug`
        args = ["--debug", *(a for a in args if a != "--debug")]
    sys.stdout = ReaderMayLeave(sys.stdout)
    pause_collector()
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
    finally:
        resume_collector()
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
