"""Markdown: YAML front matter, then CommonMark (+ tables) blocks.

Blocks come from markdown-it-pyrs (markdown-it in Rust, block rules only: 7-8x markdown-it-py's
block pass on the real Markdown corpus, the same blocks); a document nested deeper than its stack is
known to bear is parsed by markdown-it-py instead (see :func:`_deep_prefix`). Headings' inline text
comes from markdown-it-py either way.

Block texts: headings as their plain inline text; paragraphs as their inline source
(markup kept as written); a list as its source lines; a table row by row as
``cell | cell``; code as its content.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

import markdown_it_pyrs
from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.token import Token
from markdown_it_pyrs import Node

from ingest.model import ParsedDocument
from ingest.parse._common import Draft, assemble, clean_body, decode_utf8_text, split_front_matter

_QUOTE_MARK = re.compile(r"^ {0,3}> ?")
_COMMENT = re.compile(r"\s*<!--.*?-->\s*", re.DOTALL)
_BREAK_TAG = re.compile(r"<br\b", re.IGNORECASE)
# markdown-it-pyrs recurses in Rust once per nesting level and overflows its stack (a segfault,
# not an exception) past about 20,000 levels (session 17: 10,000 `> - ` levels parse). A line opens
# or continues at most one container per character of its leading run of markers and blanks (a tab:
# up to 4 columns): a document with no such run of DEEP_PREFIX characters is nested fewer than
# 4 x DEEP_PREFIX levels; any other goes to markdown-it-py, which refuses what it cannot parse.
DEEP_PREFIX = 1000
_DEEP_LINE = re.compile(rf"^[ \t>*+\-.)0-9]{{{DEEP_PREFIX}}}", re.MULTILINE)


@lru_cache(maxsize=1)
def _rust_parser() -> markdown_it_pyrs.MarkdownIt:
    # Block rules only: paragraphs, lists and tables keep their source, so inline parsing is left to
    # the headings; what the inline pass then makes of a block is its source as one text node.
    return markdown_it_pyrs.MarkdownIt("zero").enable_many(
        ["blockquote", "code", "fence", "heading", "hr", "lheading", "list", "paragraph", "reference",
         "html_block", "table"]
    )  # fmt: skip


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # markdown-it drops blocks nested deeper than maxNesting (20 by default) without a word;
    # with a high limit, deeper nesting exhausts the stack first and the file is refused
    # as "nested too deeply" (parse_bytes) instead of losing text silently.
    return MarkdownIt("commonmark", {"maxNesting": 10_000}).enable("table")


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    """Blocks only: inline parsing is three quarters of markdown-it's time, and only headings
    need it (their plain text); paragraphs, lists and tables keep their source. Without
    inline tokens, ``text_join`` (which merges inline text tokens) has nothing to do. Nor has
    ``normalize`` (line ends to ``\\n``, NUL to U+FFFD): the body comes from ``decode_utf8_text``,
    which has already normalised the line ends and refuses a NUL byte."""
    return (
        MarkdownIt("commonmark", {"maxNesting": 10_000}).enable("table").disable(["normalize", "inline", "text_join"])
    )


def read_markdown_metadata(data: bytes) -> dict[str, Any]:
    """Only the front matter: what a sync needs for a file it already holds."""
    return split_front_matter(decode_utf8_text(data))[0]


def parse_markdown(data: bytes) -> ParsedDocument:
    metadata, body = split_front_matter(decode_utf8_text(data))
    body = clean_body(body)  # line separators end lines as in text; never a raw control in a chunk
    drafts = markdown_drafts(body) if _DEEP_LINE.search(body) is None else python_drafts(body)
    return assemble("markdown", drafts, metadata)


def python_drafts(body: str) -> list[Draft]:
    """The blocks of ``body`` by markdown-it-py (documents nested too deeply for markdown-it-pyrs)."""
    env: dict[str, Any] = {}  # link reference definitions found by the block pass, for the headings' links
    tokens = _block_parser().parse(body, env)
    return list(_drafts(tokens, body.split("\n"), env))


def markdown_drafts(body: str) -> list[Draft]:
    """The blocks of ``body`` by markdown-it-pyrs: the same drafts as :func:`python_drafts`."""
    return _RustBlocks(body).drafts()


class _RustBlocks:
    """One walk over markdown-it-pyrs's tree of a body. Its source map is in UTF-8 bytes."""

    def __init__(self, body: str) -> None:
        self.body = body
        self.lines = body.split("\n")
        self.tree = _rust_parser().tree(body)
        self._line_ends: list[int] | None = None  # byte offsets of the line ends, for lists only
        self._env: dict[str, Any] | None = None  # link reference definitions, for headings with links
        self.out: list[Draft] = []

    def drafts(self) -> list[Draft]:
        self._visit(self.tree, 0)
        return self.out

    def _visit(self, node: Node, quote_depth: int) -> None:
        for child in node.children:
            name = child.name
            if name == "blockquote":
                self._visit(child, quote_depth + 1)
            elif name in ("heading", "lheading"):
                content = _text_of(child)
                env = self._references() if "[" in content else {}
                self.out.append(Draft("heading", heading_text(content, env), level=child.meta["level"]))
            elif name == "paragraph":
                self.out.append(Draft("paragraph", _trim_lines(_text_of(child))))
            elif name in ("bullet_list", "ordered_list"):
                self.out.append(Draft("list", _source_lines(self.lines, self._line_span(child.srcmap), quote_depth)))
            elif name == "table":
                rows = (
                    " | ".join(" ".join(_text_of(cell).split()) for cell in row.children)
                    for part in child.children
                    for row in part.children
                )
                self.out.append(Draft("table", "\n".join(row for row in (r.strip() for r in rows) if row)))
            elif name in ("fence", "code_block"):
                self.out.append(Draft("code", child.meta["content"].rstrip().strip("\n")))
            elif name == "html_block":
                html = _COMMENT.sub("", child.meta["content"]).strip()
                if html:
                    self.out.append(Draft("paragraph", html))

    def _line_span(self, srcmap: tuple[int, int] | None) -> list[int] | None:
        """The lines ``[first, last)`` a byte span covers (markdown-it-py's ``map``)."""
        if not srcmap:
            return None
        if self._line_ends is None:
            self._line_ends = [m.start() for m in re.finditer(b"\n", self.body.encode("utf-8"))]
        start, end = srcmap
        first = bisect.bisect_left(self._line_ends, start)
        return [first, max(first, bisect.bisect_left(self._line_ends, end - 1) + 1)]

    def _references(self) -> dict[str, Any]:
        """The document's link reference definitions as markdown-it-py's inline parser reads them
        (``env["references"]``, keyed by the normalised label): only whether a label is defined counts
        for a heading's plain text."""
        if self._env is None:
            labels = (node.meta["label"] for node in self.tree.walk() if node.name == "definition")
            self._env = {"references": {normalizeReference(label): {"href": "", "title": ""} for label in labels}}
        return self._env


def _text_of(node: Node) -> str:
    return "".join(child.meta.get("content", "") for child in node.children if child.name == "text")


def _drafts(tokens: Sequence[Token], lines: list[str], env: dict[str, Any]) -> Iterator[Draft]:
    index = 0
    quote_depth = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        if kind == "blockquote_open":
            quote_depth += 1
        elif kind == "blockquote_close":
            quote_depth -= 1
        elif kind == "heading_open":
            yield Draft("heading", heading_text(tokens[index + 1].content, env), level=int(token.tag[1]))
            index += 2
        elif kind == "paragraph_open":
            yield Draft("paragraph", _trim_lines(tokens[index + 1].content))
            index += 2
        elif kind in ("bullet_list_open", "ordered_list_open"):
            close = _matching_close(tokens, index)
            yield Draft("list", _source_lines(lines, token.map, quote_depth))
            index = close
        elif kind == "table_open":
            close = _matching_close(tokens, index)
            yield Draft("table", _table_text(tokens[index:close]))
            index = close
        elif kind in ("fence", "code_block"):
            yield Draft("code", token.content.rstrip().strip("\n"))
        elif kind == "html_block":
            html = _COMMENT.sub("", token.content).strip()
            if html:
                yield Draft("paragraph", html)
        index += 1


def _trim_lines(text: str) -> str:
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def _matching_close(tokens: Sequence[Token], index: int) -> int:
    """Index of the token closing the one opened at ``index``."""
    depth = 0
    for position in range(index, len(tokens)):
        depth += tokens[position].nesting
        if depth == 0:
            return position
    return len(tokens) - 1


def heading_text(content: str, env: dict[str, Any]) -> str:
    """A heading's plain text (see :func:`plain_inline`). Without any character at which the
    inline parser's rules can start (markdown-it's own terminator set, from 4.0 on), the
    parser would give back the content as one text token: it is taken as it is."""
    parser = _parser()
    terminators = getattr(parser.inline, "terminator_re", None)
    if terminators is not None and terminators.search(content) is None:
        return " ".join(content.split())
    inline = parser.parseInline(content, env)
    return plain_inline(inline[0]) if inline else ""


def plain_inline(token: Token) -> str:
    """The text a reader sees: markup dropped, code and link text kept, breaks as spaces."""
    parts: list[str] = []
    for child in token.children or ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type == "html_inline":  # a tag is not shown (an anchor `<span id=…>`); a break is a space
            parts.append(" " if _BREAK_TAG.match(child.content) else "")
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return " ".join("".join(parts).split())


def _source_lines(lines: list[str], line_map: list[int] | None, quote_depth: int) -> str:
    if not line_map:
        return ""
    kept: list[str] = []
    for line in lines[line_map[0] : line_map[1]]:
        for _ in range(quote_depth):
            line = _QUOTE_MARK.sub("", line, count=1)
        line = line.rstrip()
        if line.strip():
            kept.append(line)
    return _dedent("\n".join(kept))


def _dedent(text: str) -> str:
    lines = text.split("\n")
    indent = min((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines)


def _table_text(tokens: Sequence[Token]) -> str:
    rows: list[str] = []
    cells: list[str] = []
    for token in tokens:
        if token.type == "tr_open":
            cells = []
        elif token.type == "inline":
            cells.append(" ".join(token.content.split()))
        elif token.type == "tr_close":
            rows.append(" | ".join(cells).strip())
    return "\n".join(row for row in rows if row)
