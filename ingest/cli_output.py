"""What the command line prints: the consoles, escaping of untrusted text, the JSON object of
--json, progress bars, and each command's human report. No decisions here, only rendering.
"""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from ingest.field_names import field_name
from ingest.model import Chunk, DocumentProblems

if TYPE_CHECKING:
    # rich.progress is imported when a bar is shown (a terminal), not by every command: it is
    # one of the costliest imports of the CLI's start-up.
    from rich.progress import Progress, TaskID

    from ingest.corpus import CorpusScan
    from ingest.evaluate import EvalResult
    from ingest.model import Hit, ParsedDocument
    from ingest.pipeline import RunResult, VerifyResult
    from ingest.store.base import Counts

# emoji=False: ":x:" in a document must print as ":x:", never as an emoji (citations quote exactly).
# soft_wrap: a pipe or a CI log gets whole lines, never text hard-wrapped at 80 columns.
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


class ReaderMayLeave:
    """sys.stdout for a reader that may stop reading (`ingest search … | head -1`): output nobody reads
    any more is dropped (stdout goes to /dev/null), and the command ends with its own exit code. The
    work is not cut short by a closed pipe (a `run` goes on writing the store), nor reported as exit 1."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            self._reader_left()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_left()

    def _reader_left(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def emit_json(data: Any) -> None:
    text = json.dumps(data, ensure_ascii=False, default=_json_default)
    # A file name that is not UTF-8 reaches us with lone surrogates (surrogateescape), which strict
    # UTF-8 JSON cannot carry: each byte is spelled \xff, as in the name's problem line and plain output.
    text = _LONE_SURROGATE.sub(lambda m: "\\" + _escaped(m.group()), text)
    sys.stdout.write(text + "\n")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_default(value: Any) -> Any:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)


_CONTROL = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def printable(text: str, keep_newlines: bool = False) -> str:
    """Control and format characters as repr-style escapes: a file name cannot move the cursor,
    recolour the terminal or forge a report line. JSON output keeps the exact text."""
    if all(unicodedata.category(ch) not in _CONTROL or (keep_newlines and ch in "\n\t") for ch in text):
        return text
    return "".join(
        ch if unicodedata.category(ch) not in _CONTROL or (keep_newlines and ch in "\n\t") else _escaped(ch)
        for ch in text
    )


def _escaped(ch: str) -> str:
    # a byte of a file name that is not UTF-8 (kept as a surrogate by surrogateescape) is shown as the
    # byte, \xff, as listing.shown writes it in problem messages: one name, one spelling in a report
    if "\udc80" <= ch <= "\udcff":
        return f"\\x{ord(ch) - 0xDC00:02x}"
    return repr(ch)[1:-1]


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
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

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


PLAN_LINES = 50  # more planned changes than this: a summary, unless --verbose


def blocks_json(doc: ParsedDocument) -> list[dict[str, Any]]:
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


def print_parsed(file: Path, doc: ParsedDocument, blocks: list[dict[str, Any]], show_text: bool) -> None:
    out.print(f"[bold]{safe(file)}[/bold]  format {doc.format}, {len(doc.text)} characters, {len(blocks)} blocks")
    out.print("[bold]metadata[/bold]")
    for key, value in sorted(doc.metadata.items(), key=lambda item: (field_name(item[0]), str(item[0]))):
        # each field under its name as read (Effective-To is effective_to), and how it was written when not so
        name = field_name(key)
        written = f"  [dim](written {safe(repr(str(key)))})[/dim]" if name != key else ""
        out.print(f"  {safe(name)}: {escape(str(value))}{written}")
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


def print_problems(problems: Iterable[DocumentProblems]) -> None:
    for p in problems:
        out.print(f"[red]✗ rejected[/red] {safe(p.source)}" + (f"  ({safe(p.doc_id)})" if p.doc_id else ""))
        for line in p.problems:
            out.print(f"    - {safe(line)}")


def print_scan(scan: CorpusScan, quiet: bool, verbose: bool) -> None:
    if not quiet:
        print_problems(scan.problems)
    if verbose:
        for d in scan.documents:
            out.print(f"  [green]✓[/green] {safe(d.source)}  {safe(d.meta.key)}  {d.meta.access}")
    formats = ", ".join(f"{n} {f}" for f, n in sorted(scan.formats.items()))
    if scan.folder_problems:
        formats += f", {len(scan.folder_problems)} unreadable folder{'s' if len(scan.folder_problems) > 1 else ''}"
    access = ", ".join(f"{n} {a}" for a, n in sorted(scan.access_counts().items()))
    out.print(f"documents: {scan.seen} ({formats})")
    out.print(f"valid: {len(scan.documents)}   rejected: {len(scan.rejected) + len(scan.folder_problems)}")
    if not quiet:
        out.print(f"access (valid): {access or '-'}")
        if scan.defaulted_access:
            out.print(f"access defaulted from ingest.toml: {scan.defaulted_access} document(s)")


def print_plan(result: RunResult, dry_run: bool, verbose: bool) -> None:
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


def _strict_removals(result: RunResult) -> str:
    """What a refused --strict run still took out: withdrawals (the folder narrows who may read them) and
    versions whose files are gone, each named for its cause."""
    removed = [item.key for item in result.plan.items if item.action == "removed"]
    withdrawn = sum(1 for key in removed if key in result.plan.withdrawn)
    parts = [f"{withdrawn} withdrawn (no longer readable as stored)"] if withdrawn else []
    if len(removed) > withdrawn:
        parts.append(f"{len(removed) - withdrawn} removed (no longer in the folder)")
    return f" but {' and '.join(parts)}" if parts else ""


def print_run(
    result: RunResult, data: dict[str, Any], *, dry_run: bool, strict_refused: bool, quiet: bool, verbose: bool
) -> None:
    print_problems(result.plan.problems)
    for e in result.errors:
        out.print(f"[red]✗ refused by the store[/red] chunk {e.id}: {safe(e.reason)}")
    for warning in getattr(result, "warnings", None) or ():
        err.print(f"[yellow]warning:[/yellow] {safe(warning)}")
    if not quiet:
        for line in result.plan.overrides:
            out.print(f"[yellow]! override[/yellow] {safe(line)}")
        print_plan(result, dry_run, verbose)  # under a refused --strict too: the lines the counts count
    label = "access to repair (dry run):" if dry_run else "access repaired:"
    for change in data.get("access_repaired") or ():
        out.print(f"[yellow]{label}[/yellow] {safe(change)}")
    d, c = data["documents"], data["chunks"]
    for note in result.notes():
        out.print(safe(note))
    if d["defaulted_access"] and not quiet:
        out.print(f"access defaulted from ingest.toml: {d['defaulted_access']} document(s)")
    if strict_refused:
        with_problems = len({p.source for p in result.plan.problems if p.source.startswith("documents/")})
        held = d["rejected"] - with_problems
        also = f" (and {held} valid one(s) not written)" if held else ""
        out.print(
            f"[red]--strict:[/red] {with_problems} document(s) rejected{also}; nothing "
            f"{'would be ' if dry_run else ''}written"
            f"{_strict_removals(result)}"
        )
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


HIT_KEYS = (
    *("chunk_id", "doc_id", "version", "title", "section", "sections", "pages", "start", "end", "access"),
    *("status", "superseded_by"),
)


def print_hits(hits: list[Hit], query: str, role: str, day: date | None, passage: str = "snippet") -> None:
    """``passage``: "snippet" (default), "whole" (--verbose) or "none" (--quiet)."""
    if not hits:
        out.print(f"no hits for {safe(repr(query))} (role {safe(role)}, as of {day or 'any date'})")
        return
    for n, hit in enumerate(hits, start=1):
        c = hit.chunk
        pages = f"  pages {c.pages[0]}-{c.pages[-1]}" if c.pages else ""
        status = f"  ({safe(c.status)} by {safe(c.superseded_by or '?')})" if c.status != "current" else ""
        out.print(
            f"[bold]{n}. {c.short_id}[/bold]  {safe(c.title)}  v{safe(c.version)}{status}  § {safe(c.section or '-')}"
            f"{pages}  score {hit.score:.2f}"
        )
        if passage != "none":
            text = (
                safe(c.text, keep_newlines=True).replace("\n", "\n   ") if passage == "whole" else safe(snippet(c.text))
            )
            out.print(f"   {text}")


def listing(values: list[str], most: int = 10) -> str:
    return ", ".join(values[:most]) + (f", … ({len(values) - most} more)" if len(values) > most else "")


def snippet(text: str, width: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def chunk_line(c: Chunk) -> str:
    pages = ",".join(str(p) for p in c.pages) if c.pages else "-"
    return (
        f"{c.short_id} v{c.version} #{c.position} chars {c.start}-{c.end} pages {pages} | {c.word_count} words"
        f" | {c.section}"
    )


def print_chunk(chunk: Chunk, before: list[Chunk], after: list[Chunk]) -> None:
    out.print(f"[bold]{safe(chunk.citation())}[/bold]")
    for key, value in chunk.to_json().items():
        if key != "text":
            shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else str(value)
            out.print(f"  {key}: {safe(shown)}")
    for c in before:
        print_neighbour(c)
    out.print(f"[bold]── #{chunk.position} {chunk.short_id} § {safe(chunk.section)}[/bold]")
    out.print(safe(chunk.text, keep_newlines=True))
    for c in after:
        print_neighbour(c)


def print_neighbour(c: Chunk) -> None:
    out.print(f"[dim]── #{c.position} {c.short_id} § {safe(c.section)}[/dim]")
    out.print(f"[dim]{safe(c.text, keep_newlines=True)}[/dim]")


VERIFY_CHECKS = (
    "untraceable",
    "missing_in_store",
    "stale_in_store",
    "orphan_chunks",
    "incomplete_documents",
    "metadata_mismatch",
    "access_layout",
    "unknown_labels",
)


def print_verify(result: VerifyResult, data: dict[str, Any], quiet: bool, verbose: bool) -> None:
    out.print(f"chunks checked: {result.chunks}")
    for name in VERIFY_CHECKS:
        values = data[name]
        if quiet and not values:
            continue
        mark = "[green]✓[/green]" if not values else "[red]✗[/red]"
        shown = values if verbose else listing(values)
        out.print(
            f"{mark} {name.replace('_', ' ')}: {len(values)}"
            + (f"  {safe(shown if isinstance(shown, str) else ', '.join(shown))}" if values else "")
        )
    if result.edited_in_folder and not quiet:
        out.print(
            f"[yellow]![/yellow] edited in the folder without a version bump: {len(result.edited_in_folder)}  "
            f"{safe(listing(result.edited_in_folder))}\n"
            "  (the store keeps citing the bytes it indexed; bump the version, or `ingest run --accept-edits`)"
        )
    if result.unreadable_folders and not quiet:
        out.print(
            f"[yellow]![/yellow] unreadable folders: {len(result.unreadable_folders)}  "
            f"{safe(listing(result.unreadable_folders))}\n"
            "  (the versions stored from them were not checked; make them readable and verify again)"
        )
    rejected = [p for p in result.problems if p.source not in result.unreadable_folders]
    if rejected and not quiet:
        out.print(f"(rejected documents in the folder, not checked: {len(rejected)})")


def print_eval(result: EvalResult, failures: list[str], top: int, quiet: bool, verbose: bool) -> None:
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


def print_leaks_and_gate(result: EvalResult, failures: list[str]) -> None:
    for leak in result.leaks:
        out.print(f"[red]LEAK[/red] {safe(leak['id'])}: {leak['chunk_id'][:12]} from {safe(leak['doc_id'])}")
    if not result.leaks:
        out.print("leaks: 0")
    for failure in failures:
        out.print(f"[red]✗ gate:[/red] {safe(failure)}")


def print_stats(name: str, counts: Counts, meta: dict[str, str], detail: str = "counts") -> None:
    """``detail``: "totals" (--quiet), "counts" (default) or "meta" (--verbose: also the recorded run metadata)."""
    totals = counts["totals"]
    out.print(f"store: {safe(name)}   documents: {totals['documents']}   chunks: {totals['chunks']}")
    if detail == "totals":
        return
    if "built_at" in meta:
        out.print(
            f"built {safe(meta['built_at'])} with chunker {safe(meta.get('chunker', '?'))} "
            f"size {safe(meta.get('size', '?'))}, parser v{safe(meta.get('parser_version', '?'))}"
        )
    elif meta:  # e.g. the roles are recorded before a first build that was stopped
        out.print("no finished build recorded: the last run stopped before it finished; run `ingest run` again")
    for field in ("access", "status", "format", "version"):
        values: dict[str, int] = counts[field]
        out.print(f"chunks by {field}: " + (", ".join(f"{safe(k)} {v}" for k, v in values.items()) or "-"))
    if detail == "meta":
        for key in ("labels", "roles", "analysis", "chunker", "size", "overlap", "parser_version", "built_at"):
            if key in meta:
                out.print(f"{key}: {safe(meta[key])}")
