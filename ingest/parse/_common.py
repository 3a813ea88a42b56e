"""Helpers shared by the parsers: decoding text files, front matter, block assembly.

Every parser first turns its input into a list of :class:`Draft` blocks (kind, text,
level); :func:`assemble` then joins them with exactly ``"\\n\\n"`` and computes each
block's offsets and heading path, so offsets are right by construction.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from ingest import safe_yaml
from ingest.field_names import field_name
from ingest.model import Block, ParsedDocument, UnreadableFile, made

BLOCK_SEPARATOR = "\n\n"
MAX_FRONT_MATTER = 64 * 1024  # bytes of YAML; larger front matter is refused, not parsed
MAX_YAML_ALIASES = 100  # more alias nodes than this is a "billion laughs" bomb
MAX_YAML_NODES = 100_000  # nor may aliases expand the document beyond this many nodes


@dataclass(frozen=True)
class Draft:
    """A block before assembly: its kind, exact text and heading level.

    ``page_marks`` (PDF only) are ``(offset_in_text, page)`` pairs: the page on which
    the block's text from that offset on was found.
    """

    kind: str
    text: str
    level: int = 0
    page_marks: tuple[tuple[int, int], ...] = ()


# ---------------------------------------------------------------------------- decoding


def decode_utf8_text(data: bytes) -> str:
    """UTF-8 text with a BOM stripped and line ends normalised to ``\\n``."""
    if b"\x00" in data:
        raise UnreadableFile("binary file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableFile("not UTF-8 text") from None
    return normalise_newlines(text)


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ---------------------------------------------------------------------------- front matter

_FENCE = re.compile(r"---[ \t]*")


_LOOKS_LIKE_FIELD = re.compile(r"[A-Za-z_][\w-]*:(\s|$)")


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``(metadata, body)``: YAML between a first line ``---`` and the next ``---`` line.

    Without front matter the metadata is empty and the body is the whole text.
    Front matter that is not a YAML mapping raises UnreadableFile.
    """
    first_end = text.find("\n")
    if not _FENCE.fullmatch(text if first_end == -1 else text[:first_end]):
        _refuse_misplaced_front_matter(text)
        return {}, text  # the common case: no line of the text split
    lines = text.split("\n")
    for index in range(1, len(lines)):
        if _FENCE.fullmatch(lines[index]) or lines[index].rstrip() == "...":
            # Each line as written, its line break too: `access: |` + `staff` on the last line is "staff\n"
            # there as anywhere else in the front matter (joined without it, YAML read "staff").
            source = "".join(line + "\n" for line in lines[1:index])
            if _FENCE.fullmatch(lines[index]):
                _refuse_fields_after_front_matter(lines, index)
            else:
                _refuse_fields_after_end_marker(lines, index)
            return read_front_matter(source), "\n".join(lines[index + 1 :])
    # No closing fence: a document starting with a rule, unless what follows reads like
    # front matter ("doc_id: …"), which would otherwise vanish into the body unnoticed.
    if len(lines) > 1 and _LOOKS_LIKE_FIELD.match(lines[1]):
        raise UnreadableFile("front matter opened with --- on line 1 is never closed by a --- line")
    return {}, text


def _refuse_fields_after_end_marker(lines: list[str], index: int) -> None:
    """Front matter ended by YAML's ``...`` with field lines (then a ``---``) after it: the fields after the
    marker would be read as body text, and the inventory's access or dates would apply instead."""
    after = _skip_unseen(lines, index + 1, comments="#")
    following = lines[after].strip() if after < len(lines) else ""
    if _LOOKS_LIKE_FIELD.match(_visible(following)):
        raise UnreadableFile(
            f"front matter ends with '...' on line {index + 1} but {following[:60]!r} follows it: "
            "write every field before the closing --- line"
        )


def _refuse_fields_after_front_matter(lines: list[str], index: int) -> None:
    """A known field (``access: staff``) or a second ``---`` block of fields right after the front matter
    closes: read as body text, the inventory's access or dates would apply instead."""
    after = _skip_unseen(lines, index + 1)
    if after >= len(lines):
        return
    line = _visible(lines[after])
    if _FENCE.fullmatch(line) and after + 1 < len(lines) and _LOOKS_LIKE_FIELD.match(_visible(lines[after + 1])):
        raise UnreadableFile(f"a second front matter block starts on line {after + 1}: write every field in the first")
    field = _LOOKS_LIKE_FIELD.match(line)
    if field and field_name(field.group(0).rstrip(": \t")) in _known_fields():
        raise UnreadableFile(
            f"{lines[after].strip()[:60]!r} on line {after + 1} follows the front matter: write it inside, "
            "before the closing --- line"
        )


def _known_fields() -> tuple[str, ...]:
    from ingest.metadata import KNOWN_FIELDS

    return KNOWN_FIELDS


# What does not show on a line: spaces of any kind, format (zero-width, direction marks, tags), combining
# and private-use characters, and the blank fillers (Hangul fillers, braille blank).
_UNSEEN_CATEGORIES = frozenset({"Zs", "Cf", "Cc", "Co", "Cn", "Mn", "Me"})
_BLANK_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# a line of only markup that renders as nothing: tags, entities, a link-reference comment ([//]: # (...))
_MARKUP_ONLY = re.compile(r"(?:<[^>]*>|&#?\w+;)+|\[//\]:.*|\[comment\]:.*")
_LOOKS_LIKE_TOML = re.compile(r"[A-Za-z_][\w-]*[ \t]*=")
_FENCE_START = re.compile(r"-{3,}|\+{3,}")


def _visible(line: str) -> str:
    """The line without the characters that do not show."""
    if line.isascii():
        return line.strip()
    return "".join(c for c in line if c not in _BLANK_FILLERS and unicodedata.category(c) not in _UNSEEN_CATEGORIES)


def _skip_unseen(lines: list[str], index: int, comments: str = "") -> int:
    """The index of the first line from ``index`` that shows something: lines that look blank, HTML comments
    (over several lines too), markup that renders as nothing and lines opening with ``comments`` skipped."""
    while index < len(lines):
        seen = _visible(lines[index])
        if seen.startswith("<!--"):
            while index < len(lines) and "-->" not in lines[index] and "--!>" not in lines[index]:
                index += 1
        elif seen and not _MARKUP_ONLY.fullmatch(seen) and not (comments and seen.startswith(comments)):
            return index
        index += 1
    return index


def _refuse_misplaced_front_matter(text: str) -> None:
    """Front matter that does not start on line 1 (a blank-looking or comment line or a space before
    ``---``, ``----``, ``--- # note``, a ``%YAML`` directive) or TOML front matter (``+++``) is not read as
    front matter; read as body text it would index its fields (``access: staff``) under whatever access
    the inventory gives. A thematic break (``---``) followed by prose or a blank line passes."""
    lines = text.split("\n", 400)
    first = _skip_unseen(lines, 0)
    if first + 1 >= len(lines):
        return
    shown, following = _visible(lines[first]), _visible(lines[first + 1])
    if shown.startswith(("%YAML", "%TAG")):
        raise UnreadableFile("front matter must start on the first line with a --- line (YAML directives are not read)")
    fence = _FENCE_START.match(shown)
    if fence is None:
        return
    if fence.group(0).startswith("+"):
        if _LOOKS_LIKE_TOML.match(following) or _LOOKS_LIKE_FIELD.match(following):
            raise UnreadableFile("TOML front matter (+++) is not supported: write YAML between --- lines on line 1")
        return
    if not _LOOKS_LIKE_FIELD.match(following):
        return
    if first > 0:
        why = "a blank or comment line comes before it"
    elif shown != fence.group(0):
        why = f"{lines[0].strip()!r} is not a plain '---' line"
    elif lines[0].rstrip() != shown:
        why = f"{lines[0].rstrip()!r} is indented or has invisible characters before it"
    else:
        why = f"it opens with {shown!r}, not '---'"
    raise UnreadableFile(f"front matter must start on the first line with a --- line ({why})")


def read_front_matter(source: str) -> dict[str, Any]:
    if len(source.encode("utf-8")) > MAX_FRONT_MATTER:
        raise UnreadableFile(f"front matter is larger than {MAX_FRONT_MATTER // 1024} KiB")
    try:
        value = safe_yaml.load(source, max_aliases=MAX_YAML_ALIASES, max_nodes=MAX_YAML_NODES)
    except yaml.YAMLError as exc:
        # first_line 2: the front matter starts on the file's second line, after the opening ---.
        raise UnreadableFile(f"front matter is not valid YAML: {safe_yaml.describe(exc, first_line=2)}") from None
    except RecursionError:
        raise UnreadableFile("front matter is not valid YAML: nested too deeply") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UnreadableFile(f"front matter is not a mapping (found {type(value).__name__})")
    return {str(key): item for key, item in value.items()}


# ---------------------------------------------------------------------------- text helpers

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# ... and the C1 controls but NEL (a line separator, read before): never text in a file's characters
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]")
# Controls that separate (vertical tab, form feed, the file/group/record/unit separators): a space, never
# dropped, so that the words on either side stay two words. (NEL, U+2028 and U+2029 are white space to
# str.split, which the HTML and text parsers collapse by; plain text and Markdown read the line separators
# as line breaks first: see separators_as_breaks.)
_SEPARATOR_CONTROL = re.compile(r"[\x0b\x0c\x1c-\x1f]")
# What str.splitlines takes for a line break besides \n and \r (and \f, a page break of its own): a
# line of plain text or Markdown ends there, and a paragraph at U+2029, the paragraph separator.
_BREAK_SEPARATOR = re.compile("[\x0b\x1c-\x1e\x85\u2028\u2029]")
_AS_BREAKS = str.maketrans({**dict.fromkeys("\x0b\x1c\x1d\x1e\x85\u2028", "\n"), "\u2029": "\n\n"})
_HYPHENATED = re.compile(r"[^\W\d_]-$")
_LINE_END_HYPHEN = re.compile(r"-\s*\n")  # a line (joined by \n) ending in a hyphen, before another line


def collapse_spaces(text: str) -> str:
    """Runs of whitespace (including newlines and no-break spaces) as one space, trimmed."""
    return " ".join(text.split())


def strip_controls(text: str) -> str:
    """``text`` without control characters, C1 ones too (tab and line ends kept; separators become spaces,
    NEL is left to the caller: white space to ``str.split``, a line end to :func:`separators_as_breaks`)."""
    return _TEXT_CONTROL.sub("", _SEPARATOR_CONTROL.sub(" ", text))


def drop_controls(text: str) -> str:
    """``text`` without any control character but tab and line ends, separators included: PDF text, where
    pdfium gives a glyph it cannot map its font's code (OT1's ligatures are 0x0B-0x0F), not a separator."""
    return _CONTROL.sub("", text)


def separators_as_breaks(text: str) -> str:
    """``text`` with every line separator of :func:`str.splitlines` but the form feed (vertical tab, the
    file/group/record separators, NEL, U+2028) as ``\\n`` and U+2029 as a blank line: the lines and
    paragraphs they end are the text's own (a list's items, a code block's lines), and the parsed text
    holds no line break that ``str.splitlines`` would read and ``split("\\n")`` would not."""
    return text.translate(_AS_BREAKS) if _BREAK_SEPARATOR.search(text) else text


def clean_body(text: str) -> str:
    """Markdown's body as its parser reads it: :func:`separators_as_breaks`, then :func:`strip_controls`.
    A form feed (a page break) is a space: on a line of its own it leaves a blank line, within a paragraph
    it ends none."""
    text = separators_as_breaks(text)
    return strip_controls(text) if has_controls(text) else text


def has_controls(text: str) -> bool:
    """Whether :func:`strip_controls` would change ``text`` (or any of its lines)."""
    return _TEXT_CONTROL.search(text) is not None


def _hyphen_joins(last: str, line: str) -> bool:
    """Whether ``line`` continues a word that the line ending in ``last`` hyphenated."""
    return last.endswith("-") and line[0].islower() and _HYPHENATED.search(last[-2:]) is not None


def join_lines(lines: Iterable[str]) -> str:
    """Join wrapped lines into one paragraph: spaces between, hyphenation at line ends undone.

    ``"regu-"`` followed by ``"lation"`` gives ``"regulation"`` when the next line starts
    lower-case; any other line end becomes one space.
    """
    lines = lines if isinstance(lines, list) else list(lines)
    joined = "\n".join(lines)
    if _LINE_END_HYPHEN.search(joined) is None:
        # no line ends in a hyphen (most paragraphs): the words, one space apart, in one split
        return " ".join(joined.split())
    # Pieces joined once at the end: growing one string line by line is quadratic.
    pieces: list[str] = []
    for raw in lines:
        line = collapse_spaces(raw)
        if not line:
            continue
        if pieces and _hyphen_joins(pieces[-1], line):
            pieces[-1] = pieces[-1][:-1]
        elif pieces:
            pieces.append(" ")
        pieces.append(line)
    return "".join(pieces)


def join_line_offsets(lines: list[str], kept_hyphens: Container[int] = ()) -> tuple[str, list[int]]:
    """Like :func:`join_lines`, also giving where each input line starts in the result.

    A line that adds nothing starts where the next text would go. A line whose index is in
    ``kept_hyphens`` ends in a hyphen that belongs to the word: the next line follows it
    directly, hyphen kept ("self-" + "contained" → "self-contained").
    """
    pieces: list[str] = []
    length = 0  # of the text so far
    starts: list[int] = []
    keep_next = False
    for index, raw in enumerate(lines):
        keep, keep_next = keep_next, index in kept_hyphens
        line = collapse_spaces(raw)
        if not line:
            starts.append(length + (1 if pieces else 0))
            continue
        if not pieces:
            starts.append(0)
        elif keep and pieces[-1].endswith("-"):
            starts.append(length)
        elif _hyphen_joins(pieces[-1], line):
            pieces[-1] = pieces[-1][:-1]
            length -= 1
            starts.append(length)
        else:
            pieces.append(" ")
            length += 1
            starts.append(length)
        pieces.append(line)
        length += len(line)
    return "".join(pieces), [min(start, length) for start in starts]


# ---------------------------------------------------------------------------- assembly


def assemble(
    fmt: str,
    drafts: Iterable[Draft],
    metadata: Mapping[str, Any] | None = None,
    page_count: int = 0,
) -> ParsedDocument:
    """Join draft blocks into the parsed document: text, offsets, heading paths, pages.

    Empty drafts are dropped. For PDFs (``page_count`` > 0) the page marks become
    ``page_starts`` and every block gets the pages its characters lie on.
    """
    pieces: list[str] = []
    spans: list[tuple[Draft, int, int, tuple[str, ...]]] = []
    headings: list[tuple[int, str]] = []  # the open headings, outermost first
    path: tuple[str, ...] = ()  # their texts, made anew only when a heading changes them
    page_first_offset: dict[int, int] = {}
    offset = 0
    for draft in drafts:
        if not draft.text or not draft.text.strip():
            continue
        if pieces:
            pieces.append(BLOCK_SEPARATOR)
            offset += len(BLOCK_SEPARATOR)
        start, end = offset, offset + len(draft.text)
        pieces.append(draft.text)
        offset = end
        if draft.kind == "heading":
            level = min(max(draft.level, 1), 6)
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, draft.text))
            path = tuple(text for _, text in headings)
        spans.append((draft, start, end, path))
        for mark_offset, page in draft.page_marks:
            page_first_offset.setdefault(page, start + min(mark_offset, len(draft.text)))
    if not spans:
        raise UnreadableFile("no text")
    text = "".join(pieces)
    page_starts = _page_starts(page_first_offset, page_count, len(text)) if page_count else ()
    doc = ParsedDocument(format=fmt, text=text, blocks=(), metadata=dict(metadata or {}), page_starts=page_starts)
    # made, not Block(...): a frozen dataclass's __init__ sets each field through object.__setattr__
    blocks = tuple(
        made(
            Block,
            {
                "kind": draft.kind,
                "start": start,
                "end": end,
                "level": min(max(draft.level, 1), 6) if draft.kind == "heading" else 0,
                "heading_path": path,
                "pages": doc.pages_of(start, end) if page_starts else (),
            },
        )
        for draft, start, end, path in spans
    )
    return ParsedDocument(format=fmt, text=text, blocks=blocks, metadata=doc.metadata, page_starts=page_starts)


def _page_starts(first_offset: Mapping[int, int], page_count: int, text_length: int) -> tuple[int, ...]:
    """Offset of every page 1..page_count; a page without text starts where the next text does."""
    starts = [0] * page_count
    following = text_length
    for page in range(page_count, 0, -1):
        following = min(following, first_offset.get(page, following))
        starts[page - 1] = following
    starts[0] = 0
    # Keep them non-decreasing even if marks came out of order.
    for index in range(1, page_count):
        starts[index] = max(starts[index], starts[index - 1])
    return tuple(starts)
