"""The `ingest` command line: a thin shell over the library (parse, corpus, pipeline, stores).

Exit codes: 0 all fine · 1 some documents rejected or a check failed (the rest done) ·
2 usage or configuration error · 3 store unreachable or refused (nothing written).
With --json, stdout carries exactly one JSON object; messages go to stderr.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any, Iterator, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ingest import __version__
from ingest.model import MIN_PREFIX, UnreadableFile
from ingest.settings import ChunkSettings, Settings, SettingsError, check_chunking, load_settings

app = typer.Typer(
    help="Parse, validate, chunk and index company documents for RAG: SQLite (default) or Elasticsearch.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# emoji=False: ":x:" in a document must print as ":x:", never as an emoji (citations quote exactly).
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, emoji=False)

OK, FAILED, USAGE, UNREACHABLE = 0, 1, 2, 3

StoreOpt = typer.Option(None, "--store", help="sqlite:///PATH or http(s)://host:9200 (env INGEST_STORE; default sqlite:///.ingest/index.sqlite).", show_default=False)
PrefixOpt = typer.Option(None, "--index-prefix", help="Elasticsearch index prefix (env INGEST_INDEX_PREFIX; default ingest).", show_default=False)
JsonOpt = typer.Option(False, "--json", help="One JSON object on stdout, nothing else.")


class CommandError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=_json_default) + "\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)


@contextmanager
def handled(as_json: bool) -> Iterator[None]:
    """Turn the library's exceptions into one clear line and the SPEC's exit code."""
    from ingest.corpus import CorpusError
    from ingest.evaluate import QuestionsError
    from ingest.store.base import AmbiguousPrefix, ChunkNotFound, StoreConfigError, StoreError, StoreLocked, StoreUnavailable

    code, message = None, None
    try:
        yield
    except CommandError as exc:
        code, message = exc.code, exc.message
    except StoreUnavailable as exc:
        code, message = UNREACHABLE, str(exc)
    except (SettingsError, QuestionsError, CorpusError, StoreConfigError, StoreLocked, AmbiguousPrefix) as exc:
        code, message = USAGE, str(exc)
    except ChunkNotFound as exc:
        code, message = FAILED, str(exc)
    except StoreError as exc:
        code, message = UNREACHABLE, str(exc)
    if code is not None:
        if as_json:
            emit_json({"error": message, "exit_code": code})
        err.print(f"[red]error:[/red] {escape(message)}")
        raise typer.Exit(code)


@contextmanager
def progress_bar(enabled: bool, label: str) -> Iterator[Any]:
    """A rich progress bar on a terminal; a no-op in --json mode or when piped."""
    if not enabled or not err.is_terminal:
        yield None
        return
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err, transient=True,
    ) as bar:
        yield bar


def _open_store(store: Optional[str], index_prefix: Optional[str], settings: Settings | None = None, *, create: bool = True):
    """``create=False`` for commands that only read: a mistyped SQLite path is an error, not a new empty index."""
    from ingest.store import open_store

    return open_store(store, index_prefix, settings=settings, create=create)


def _corpus_dir(corpus: Path) -> Path:
    if not corpus.is_dir():
        raise CommandError(USAGE, f"{corpus}: not a folder (expected CORPUS/documents/…)")
    if not (corpus / "documents").is_dir():
        raise CommandError(USAGE, f"{corpus}: has no documents/ folder (see the README: corpus layout)")
    return corpus


def _labels_for(store, role: str) -> tuple[str, ...]:
    from ingest.pipeline import roles_from_meta

    meta = store.get_meta()
    roles = roles_from_meta(meta, Settings())
    if role not in roles:
        known = f"{'roles in this index' if 'roles' in meta else 'default roles'}: {', '.join(sorted(roles))}"
        hint = " (the default; pass --role)" if role == "public" else ""
        raise CommandError(USAGE, f"unknown role {role!r}{hint}; {known}")
    return roles[role]


def _as_of(value: Optional[str]) -> Optional[date]:
    from ingest.pipeline import parse_as_of

    try:
        return parse_as_of(value)
    except ValueError:
        raise CommandError(USAGE, f"--as-of {value!r} is not a YYYY-MM-DD date (or 'any')") from None


def _version_callback(value: bool) -> None:
    if value:
        out.print(f"ingest {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True, help="Show the version."),
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
            raise CommandError(USAGE, f"{file}: no such file")
        if not file.is_file():
            raise CommandError(USAGE, f"{file}: not a file")
        if format_of(file) is None:
            raise CommandError(USAGE, f"{file}: unsupported file type (use .md .markdown .html .htm .txt .pdf)")
        try:
            doc = parse_file(file)
        except UnreadableFile as exc:
            raise CommandError(FAILED, f"{file}: unreadable file: {exc}") from None
        blocks = [
            {
                "kind": b.kind, "level": b.level, "section": b.section, "heading_path": list(b.heading_path),
                "start": b.start, "end": b.end, "pages": list(b.pages), "text": doc.text[b.start:b.end],
            }
            for b in doc.blocks
        ]
        if as_json:
            emit_json({"source": str(file), "format": doc.format, "metadata": dict(doc.metadata),
                       "text": doc.text, "blocks": blocks, "page_starts": list(doc.page_starts)})
            return
        out.print(f"[bold]{escape(str(file))}[/bold]  format {doc.format}, {len(doc.text)} characters, {len(blocks)} blocks")
        out.print("[bold]metadata[/bold]")
        for key, value in sorted(doc.metadata.items()):
            out.print(f"  {key}: {escape(str(value))}")
        out.print("[bold]blocks[/bold]")
        for n, b in enumerate(blocks):
            pages = f" p{b['pages'][0]}" + (f"-{b['pages'][-1]}" if len(b["pages"]) > 1 else "") if b["pages"] else ""
            path = " › ".join(b["heading_path"])
            first = b["text"].splitlines()[0] if b["text"] else ""
            out.print(f"  {n:>3} {b['kind']:<9} {b['start']:>6}-{b['end']:<6}{pages:<7} {escape(path)}  [dim]{escape(first[:60])}[/dim]")
        if show_text:
            out.print("[bold]text[/bold]")
            out.print(escape(doc.text))


# --- validate -----------------------------------------------------------------


def _print_problems(problems) -> None:
    for p in problems:
        out.print(f"[red]✗ rejected[/red] {escape(p.source)}" + (f"  ({escape(p.doc_id)})" if p.doc_id else ""))
        for line in p.problems:
            out.print(f"    - {escape(line)}")


@app.command()
def validate(
    corpus: Path = typer.Argument(..., help="The corpus folder (with documents/, optional inventory.yaml and ingest.toml)."),
    as_json: bool = JsonOpt,
) -> None:
    """Check every document's metadata and readability; list every problem; write nothing."""
    from ingest.corpus import scan_corpus

    with handled(as_json):
        corpus = _corpus_dir(corpus)
        settings = load_settings(corpus)
        with progress_bar(not as_json, "validating") as bar:
            task = bar.add_task("validating", total=None) if bar else None
            scan = scan_corpus(corpus, settings, on_file=(lambda _: bar.advance(task)) if bar else None)
        if as_json:
            emit_json(scan.to_json())
        else:
            _print_problems(scan.problems)
            formats = ", ".join(f"{n} {f}" for f, n in sorted(scan.formats.items()))
            access = ", ".join(f"{n} {a}" for a, n in sorted(scan.access_counts().items()))
            out.print(f"documents: {scan.seen} ({formats})")
            out.print(f"valid: {len(scan.documents)}   rejected: {len(scan.rejected)}")
            out.print(f"access (valid): {access or '-'}")
            if scan.defaulted_access:
                out.print(f"access defaulted from ingest.toml: {scan.defaulted_access} document(s)")
        if not scan.ok:
            raise typer.Exit(FAILED)


# --- run ------------------------------------------------------------------------


@app.command()
def run(
    corpus: Path = typer.Argument(..., help="The corpus folder."),
    store: Optional[str] = StoreOpt,
    index_prefix: Optional[str] = PrefixOpt,
    chunker: Optional[str] = typer.Option(None, "--chunker", help="structure (default), fixed or overlap; default from ingest.toml."),
    size: Optional[int] = typer.Option(None, "--size", help="Chunk size in words (default from ingest.toml, else 200)."),
    overlap: Optional[int] = typer.Option(None, "--overlap", help="Words shared by consecutive windows (overlap chunker)."),
    full: bool = typer.Option(False, "--full", help="Rebuild everything and swap it in atomically."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan (new, changed, unchanged, removed, rejected); write nothing."),
    accept_edits: bool = typer.Option(False, "--accept-edits", help="Replace documents whose content changed without a version bump."),
    wait: float = typer.Option(0.0, "--wait", help="Seconds to wait for another run's lock before giving up."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Allow an empty documents/ folder to remove every stored document."),
    as_json: bool = JsonOpt,
) -> None:
    """Validate, chunk and write to the store: only what changed; what left the folder is deleted."""
    from ingest import pipeline

    with handled(as_json):
        corpus = _corpus_dir(corpus)
        settings = load_settings(corpus)
        base = settings.chunking
        chunking = ChunkSettings(
            chunker or base.chunker,
            base.size if size is None else size,
            base.overlap if overlap is None else overlap,
        )
        check_chunking(chunking, "options")
        target = _open_store(store, index_prefix, settings)
        try:
            with progress_bar(not as_json, "indexing") as bar:
                scan_task = bar.add_task("reading", total=None) if bar else None
                write_task = None

                def on_progress(done: int, total: int) -> None:
                    nonlocal write_task
                    if bar is None:
                        return
                    if write_task is None:
                        write_task = bar.add_task("writing", total=total)
                    bar.update(write_task, completed=done, total=total)

                result = pipeline.run(
                    corpus, target, settings, chunking, full=full, dry_run=dry_run, accept_edits=accept_edits,
                    lock_wait_s=wait, allow_empty=allow_empty, on_file=(lambda _: bar.advance(scan_task)) if bar else None, progress=on_progress,
                )
        finally:
            target.close()
        data = result.to_json()
        if as_json:
            emit_json(data)
        else:
            _print_problems(result.plan.problems)
            for e in result.errors:
                out.print(f"[red]✗ refused by the store[/red] chunk {e.id}: {escape(e.reason)}")
            for line in result.plan.overrides:
                out.print(f"[yellow]! override[/yellow] {escape(line)}")
            if dry_run:
                out.print("[bold]plan[/bold] (dry run: nothing written)")
            for item in result.plan.items:
                if item.action == "unchanged" and not dry_run:
                    continue
                counts = f"+{item.write} −{item.delete}" if item.write or item.delete else ""
                reason = f"  {escape(item.reason)}" if item.reason else ""
                out.print(f"  {item.action:<9} {escape(item.key):<40} {counts:<10}{reason}")
            d, c = data["documents"], data["chunks"]
            repaired = data["repaired"]
            if repaired and any(repaired.values()):
                out.print(f"repaired an interrupted run: {repaired['orphan_chunks']} orphan chunks deleted, {repaired['incomplete_documents']} incomplete documents redone")
            if d["defaulted_access"]:
                out.print(f"access defaulted from ingest.toml: {d['defaulted_access']} document(s)")
            verb = "would be" if dry_run else ""
            out.print(
                f"documents: {d['seen']} seen, {d['indexed']} indexed, {d['unchanged']} unchanged, "
                f"{d['rejected']} rejected, {d['removed']} removed"
            )
            out.print(f"chunks: {c['written']} written, {c['deleted']} deleted, {c['total']} total {verb}".rstrip())
            out.print(f"store: {escape(result.store)}   ({data['elapsed_s']:.2f}s)")
        if not result.ok:
            raise typer.Exit(FAILED)


# --- search -------------------------------------------------------------------


@app.command()
def search(
    query: str = typer.Argument(..., help="Words to search for (BM25)."),
    top: int = typer.Option(5, "--top", "-k", min=1, max=1000, help="How many hits."),
    role: str = typer.Option("public", "--role", help="Whose eyes: public, partner, staff (or a role from ingest.toml)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Only chunks in force on this date (YYYY-MM-DD; default today; 'any' for no date filter)."),
    doc_id: Optional[str] = typer.Option(None, "--doc-id", help="Only this document."),
    store: Optional[str] = StoreOpt,
    index_prefix: Optional[str] = PrefixOpt,
    as_json: bool = JsonOpt,
) -> None:
    """BM25 search with the role's access and the as-of date applied inside the store."""
    with handled(as_json):
        day = _as_of(as_of)
        target = _open_store(store, index_prefix, create=False)
        try:
            target.check()
            labels = _labels_for(target, role)
            hits = target.search(query, labels, day, top=top, doc_id=doc_id, role=role)
        finally:
            target.close()
        if as_json:
            keys = ("chunk_id", "doc_id", "version", "title", "section", "sections", "pages", "start", "end", "access", "score", "text")
            emit_json({"query": query, "role": role, "as_of": day.isoformat() if day else None,
                       "hits": [{k: h.to_json()[k] for k in keys} for h in hits]})
            return
        if not hits:
            out.print(f"no hits for {query!r} (role {role}, as of {day or 'any date'})")
            return
        for n, hit in enumerate(hits, start=1):
            c = hit.chunk
            pages = f"  pages {c.pages[0]}-{c.pages[-1]}" if c.pages else ""
            out.print(f"[bold]{n}. {c.short_id}[/bold]  {escape(c.title)}  v{escape(c.version)}  § {escape(c.section or '-')}{pages}  score {hit.score:.2f}")
            out.print(f"   {escape(_snippet(c.text))}")


def _listing(values: list[str], most: int = 10) -> str:
    return ", ".join(values[:most]) + (f", … ({len(values) - most} more)" if len(values) > most else "")


def _snippet(text: str, width: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# --- chunks / show --------------------------------------------------------------


def chunk_line(c) -> str:
    pages = ",".join(str(p) for p in c.pages) if c.pages else "-"
    return f"{c.short_id} v{c.version} #{c.position} chars {c.start}-{c.end} pages {pages} | {c.word_count} words | {c.section}"


@app.command()
def chunks(
    doc_id: str = typer.Argument(..., help="The document's doc_id."),
    version: Optional[str] = typer.Option(None, "--version", help="Only this version (default: every stored version)."),
    store: Optional[str] = StoreOpt,
    index_prefix: Optional[str] = PrefixOpt,
    as_json: bool = JsonOpt,
) -> None:
    """A document's chunks in order: short_id vV #pos chars S-E pages P | N words | section."""
    with handled(as_json):
        target = _open_store(store, index_prefix, create=False)
        try:
            target.check()
            found = target.document_chunks(doc_id, version)
        finally:
            target.close()
        if not found:
            raise CommandError(FAILED, f"no chunks for doc_id {doc_id!r}" + (f" version {version!r}" if version else ""))
        if as_json:
            emit_json({"doc_id": doc_id, "chunks": [c.to_json() for c in found]})
            return
        for c in found:
            out.print(escape(chunk_line(c)))


@app.command()
def show(
    chunk_id: str = typer.Argument(..., help="A chunk ID or any unique prefix of 8+ characters."),
    context: int = typer.Option(0, "--context", "-C", min=0, help="Also show N neighbours each side (same document version)."),
    store: Optional[str] = StoreOpt,
    index_prefix: Optional[str] = PrefixOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The full record of a chunk and its citation; --context N adds its neighbours."""
    with handled(as_json):
        if len(chunk_id.strip()) < MIN_PREFIX or not all(ch in "0123456789abcdefABCDEF" for ch in chunk_id.strip()):
            raise CommandError(USAGE, f"{chunk_id!r} is not a chunk ID: give the ID or a prefix of {MIN_PREFIX}+ hex characters")
        target = _open_store(store, index_prefix, create=False)
        try:
            target.check()
            chunk = target.get_chunk(chunk_id)
            before, after = target.neighbours(chunk, context)
        finally:
            target.close()
        if as_json:
            emit_json({"chunk": chunk.to_json(), "citation": chunk.citation(),
                       "before": [c.to_json() for c in before], "after": [c.to_json() for c in after]})
            return
        out.print(f"[bold]{escape(chunk.citation())}[/bold]")
        for key, value in chunk.to_json().items():
            if key != "text":
                out.print(f"  {key}: {escape(json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else str(value))}")
        for c in before:
            out.print(f"[dim]── #{c.position} {c.short_id} § {escape(c.section)}[/dim]")
            out.print(f"[dim]{escape(c.text)}[/dim]")
        out.print(f"[bold]── #{chunk.position} {chunk.short_id} § {escape(chunk.section)}[/bold]")
        out.print(escape(chunk.text))
        for c in after:
            out.print(f"[dim]── #{c.position} {c.short_id} § {escape(c.section)}[/dim]")
            out.print(f"[dim]{escape(c.text)}[/dim]")


# --- verify / eval / stats -------------------------------------------------------


@app.command()
def verify(
    corpus: Path = typer.Argument(..., help="The corpus folder the store was built from."),
    store: Optional[str] = StoreOpt,
    index_prefix: Optional[str] = PrefixOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Re-parse every source: every stored chunk must equal its characters; store and folder agree."""
    from ingest import pipeline

    with handled(as_json):
        corpus = _corpus_dir(corpus)
        settings = load_settings(corpus)
        target = _open_store(store, index_prefix, settings, create=False)
        try:
            result = pipeline.verify(corpus, target, settings)
        finally:
            target.close()
        data = result.to_json()
        if as_json:
            emit_json(data)
        else:
            out.print(f"chunks checked: {result.chunks}")
            for name in ("untraceable", "missing_in_store", "stale_in_store", "orphan_chunks", "incomplete_documents"):
                values = data[name]
                mark = "[green]✓[/green]" if not values else "[red]✗[/red]"
                out.print(f"{mark} {name.replace('_', ' ')}: {len(values)}" + (f"  {escape(_listing(values))}" if values else ""))
            if result.edited_in_folder:
                out.print(
                    f"[yellow]![/yellow] edited in the folder without a version bump: {len(result.edited_in_folder)}  "
                    f"{escape(_listing(result.edited_in_folder))}\n"
                    "  (the store keeps citing the bytes it indexed; bump the version, or `ingest run --accept-edits`)"
                )
            if result.problems:
                out.print(f"(rejected documents in the folder, not checked: {len(result.problems)})")
        if not result.ok:
            raise typer.Exit(FAILED)


@app.command(name="eval")
def eval_(
    questions: Path = typer.Argument(..., help="questions.yaml"),
    top: int = typer.Option(5, "--top", "-k", min=1, help="k for hit@k."),
    store: Optional[str] = StoreOpt,
    index_prefix: Optional[str] = PrefixOpt,
    as_json: bool = JsonOpt,
) -> None:
    """hit@k and MRR overall and per category, the missed questions, and every leak."""
    from ingest.evaluate import evaluate, load_questions

    with handled(as_json):
        qs = load_questions(questions)
        target = _open_store(store, index_prefix, create=False)
        try:
            target.check()
            roles_labels = {}

            def labels(role: str):
                if role not in roles_labels:
                    roles_labels[role] = _labels_for(target, role)
                return roles_labels[role]

            def ask(q):
                return target.search(q.question, labels(q.role), q.as_of or date.today(), top=top, role=q.role)

            result = evaluate(qs, ask, labels, k=top)
        finally:
            target.close()
        if as_json:
            emit_json(result.to_json())
        else:
            scored = result.questions - result.no_answer
            out.print(
                f"questions: {result.questions}   hit@{top}: {result.hit_at_k:.3f}   MRR: {result.mrr:.3f}"
                f"   (over the {scored} questions with relevant passages)"
            )
            for cat, values in result.by_category.items():
                out.print(f"  {cat:<14} {values['questions']:>3} questions   hit@{top} {values['hit_at_k']:.3f}")
            out.print(f"missed: {', '.join(result.missed) or '-'}")
            if result.leaks:
                for leak in result.leaks:
                    out.print(f"[red]LEAK[/red] {leak['id']}: {leak['chunk_id'][:12]} from {leak['doc_id']}")
            else:
                out.print("leaks: 0")
        if result.leaks:
            raise typer.Exit(FAILED)


@app.command()
def stats(
    store: Optional[str] = StoreOpt,
    index_prefix: Optional[str] = PrefixOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Counts in the store by access, status, format and version."""
    with handled(as_json):
        target = _open_store(store, index_prefix, create=False)
        try:
            target.check()
            counts = target.counts()
            meta = target.get_meta()
        finally:
            target.close()
        if as_json:
            decoded = {k: (json.loads(v) if k in ("labels", "roles") else v) for k, v in meta.items()}
            emit_json({"store": target.name, **counts, "meta": decoded})
            return
        totals = counts.pop("totals")
        out.print(f"store: {escape(target.name)}   documents: {totals['documents']}   chunks: {totals['chunks']}")
        if meta:
            out.print(f"built {meta.get('built_at', '?')} with chunker {meta.get('chunker')} size {meta.get('size')}, parser v{meta.get('parser_version')}")
        for field, values in counts.items():
            out.print(f"chunks by {field}: " + (", ".join(f"{k} {v}" for k, v in values.items()) or "-"))


def main() -> None:
    """The console script: typer's app, with its own usage errors (a missing argument, --top 0)
    also given as one JSON object on stdout when --json was asked for."""
    try:  # typer >= 0.20 carries its own click; older ones use click itself
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover
        from click.exceptions import ClickException

    try:
        code = app(standalone_mode=False)
    except ClickException as exc:
        if "--json" in sys.argv[1:]:
            emit_json({"error": exc.format_message(), "exit_code": exc.exit_code})
        exc.show()
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
