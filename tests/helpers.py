"""Small builders shared by the tests: real records, no mocks."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import NameObject

from ingest.model import Chunk, DocumentRecord, chunk_id
from tests.conftest import CONNECTION_ENV

ROOT = Path(__file__).resolve().parents[1]


def make_chunk(
    doc_id: str = "doc",
    version: str = "1",
    position: int = 0,
    text: str = "hello world",
    access: str = "public",
    effective_from: str | None = None,
    effective_to: str | None = None,
    section: str = "Overview",
    title: str | None = None,
    start: int | None = None,
    pages: tuple[int, ...] = (),
    status: str = "current",
) -> Chunk:
    """A chunk as a store holds it; the title defaults to the doc_id in words."""
    title = title or doc_id.replace("-", " ").title()
    start = position * 1000 if start is None else start
    end = start + len(text)
    return Chunk(
        chunk_id=chunk_id(doc_id, version, start, end),
        doc_id=doc_id,
        version=version,
        title=title,
        section=section,
        sections=(section,),
        heading_path=(title, section),
        position=position,
        start=start,
        end=end,
        pages=pages,
        text=text,
        word_count=len(text.split()),
        access=access,
        effective_from=effective_from,
        effective_to=effective_to,
        status=status,
        superseded_by=None,
        tags=("policy",),
        source=f"documents/{doc_id}.md",
        source_sha256="0" * 64,
        chunker="structure:200",
    )


def make_record(chunks: list[Chunk], fmt: str = "markdown") -> DocumentRecord:
    c = chunks[0]
    return DocumentRecord(
        doc_id=c.doc_id,
        version=c.version,
        title=c.title,
        source=c.source,
        source_sha256=c.source_sha256,
        format=fmt,
        access=c.access,
        status=c.status,
        effective_from=c.effective_from,
        effective_to=c.effective_to,
        superseded_by=c.superseded_by,
        tags=c.tags,
        settings_fingerprint="structure:200|parser:1",
        chunk_ids=tuple(x.chunk_id for x in chunks),
    )


def ingest_cli(*args: object) -> subprocess.CompletedProcess[str]:
    """``ingest ARGS`` as a user runs it (a subprocess), output captured."""
    return subprocess.run([sys.executable, "-m", "ingest.cli", *map(str, args)], capture_output=True, text=True)


def cli_json(*args: object) -> tuple[int, dict]:
    """``ingest ARGS --json`` from the repository root, with no store or connection taken from the
    environment (the test names its own): the exit code and the JSON answer, never a traceback."""
    env = {k: v for k, v in os.environ.items() if k not in CONNECTION_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "ingest.cli", *map(str, args), "--json"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def search_hits(store_args: list[str], query: str, role: str) -> set[str]:
    """The doc_ids ``ingest search QUERY --role ROLE`` returns (the search must succeed)."""
    done = ingest_cli("search", query, "--role", role, "--json", *store_args)
    assert done.returncode == 0, done.stdout + done.stderr
    return {hit["doc_id"] for hit in json.loads(done.stdout)["hits"]}


def xmp_packet(rdf: str) -> str:
    """An XMP packet around ``rdf``, the content of its rdf:RDF element (rdf:Description elements)."""
    return (
        '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
        f'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">{rdf}</rdf:RDF></x:xmpmeta>'
        '<?xpacket end="w"?>'
    )


def pdf_with_xmp_packet(writer: PdfWriter, packet: str | bytes) -> bytes:
    """The writer's PDF, written out with ``packet`` (as it is: it need not be well-formed XML) as the
    catalog's XMP metadata stream."""
    writer.xmp_metadata = packet.encode() if isinstance(packet, str) else packet
    stream = writer.root_object["/Metadata"]
    stream[NameObject("/Type")] = NameObject("/Metadata")
    stream[NameObject("/Subtype")] = NameObject("/XML")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
