"""PDF metadata read otherwise than written (attacker pass, session 10): an XMP packet pypdf cannot
parse was ignored whatever it said, so the inventory or access.default filled what it names; a custom
access label written without a sign in /Keywords (``access internal``) was dropped as a keyword.
(/Subject read two ways: tests/test_pdf_info_ambiguous.py.)"""

from __future__ import annotations

import io
import json

import pytest
from pypdf import PdfReader
from pypdf.errors import PdfReadError

from ingest.model import UnreadableFile
from ingest.parse import read_metadata
from tests.helpers import ingest_cli, pdf_with_xmp_packet, search_hits, xmp_packet
from tests.test_metadata_read_holes import corpus_with, memo_writer, refused_on_run, validate_problems

NAMESPACES = 'xmlns:pdf="http://ns.adobe.com/pdf/1.3/" xmlns:dc="http://purl.org/dc/elements/1.1/"'
BROKEN = "</rdf:Seq>"  # a closing tag that closes nothing: expat, and so pypdf, reads no packet


def broken_packet(inside: str, attributes: str = "") -> str:
    return xmp_packet(f'<rdf:Description rdf:about="" {NAMESPACES} {attributes}>{inside}{BROKEN}</rdf:Description>')


def pdf_without_packet(keywords: str) -> bytes:
    """The memo with these /Keywords and no XMP packet."""
    out = io.BytesIO()
    memo_writer(keywords=keywords).write(out)
    return out.getvalue()


def pdf_with_packet(packet: str | bytes, title: str = "Memo") -> bytes:
    data = pdf_with_xmp_packet(memo_writer(title=title), packet)
    with pytest.raises(PdfReadError):  # (what each test is about: pypdf reads no packet)
        assert PdfReader(io.BytesIO(data)).xmp_metadata is None
    return data


UNREAD_NAMING = [
    ("keywords", broken_packet("<pdf:Keywords>doc_id=memo; version=1; access=staff</pdf:Keywords>"), "doc_id"),
    ("attribute", broken_packet("", 'pdf:Keywords="access=staff"'), "access"),
    ("entity-escaped", broken_packet("<pdf:Keywords>access&#61;staff</pdf:Keywords>"), "access"),
    ("cdata", broken_packet("<dc:subject><rdf:Bag><rdf:li><![CDATA[effective_to=2020-01-01]]></rdf:li></rdf:Bag>"
                            "</dc:subject>"), "effective_to"),
    ("colon", broken_packet("<dc:description>Board memo. Access: staff</dc:description>"), "Access"),
    ("no-sign", broken_packet("<pdf:Keywords>memo, access staff</pdf:Keywords>"), "access"),
    # pypdf refuses entity declarations: the packet is not read, but its bytes still say access=staff
    ("entity", '<?xml version="1.0"?><!DOCTYPE x:xmpmeta [<!ENTITY a "access=staff">]>'
               + xmp_packet(f'<rdf:Description rdf:about="" {NAMESPACES}><pdf:Keywords>&a;</pdf:Keywords>'
                            "</rdf:Description>"), "access"),
    ("utf-16", "\ufeff" + broken_packet("<pdf:Keywords>access=staff</pdf:Keywords>"), "access"),
]  # fmt: skip


def _encoded(packet: str) -> bytes:
    return packet.encode("utf-16-le") if packet.startswith("\ufeff") else packet.encode()


@pytest.mark.parametrize(("case", "packet", "named"), UNREAD_NAMING, ids=[c[0] for c in UNREAD_NAMING])
def test_an_xmp_packet_that_cannot_be_read_and_names_a_field_refuses_the_pdf(case, packet, named):
    data = pdf_with_packet(_encoded(packet))
    with pytest.raises(UnreadableFile) as raised:
        read_metadata(data, "memo.pdf")
    message = str(raised.value)
    assert message.startswith("PDF metadata: the XMP packet cannot be read ("), message
    assert f"and it names {named!r}" in message and "nothing was guessed" in message, message


def test_the_run_rejects_it_naming_the_file_and_the_others_go_in(tmp_path, store_args):
    data = pdf_with_packet(broken_packet("<pdf:Keywords>access=staff</pdf:Keywords>"))
    corpus = corpus_with(tmp_path, "memo.pdf", data, entry="{doc_id: memo, version: '1', access: public}")
    refused_on_run(corpus, store_args, "memo.pdf", "unreadable file: PDF metadata: the XMP packet cannot be read")


def test_access_default_does_not_fill_what_an_unread_packet_names(tmp_path):
    data = pdf_with_packet(broken_packet("<pdf:Keywords>access=staff</pdf:Keywords>"))
    corpus = corpus_with(tmp_path, "memo.pdf", data, entry="{doc_id: memo, version: '1'}",
                         toml='[access]\ndefault = "partner"\n')  # fmt: skip
    code, problems = validate_problems(corpus)
    assert code == 1 and len(problems) == 1, problems
    assert problems[0].startswith("documents/memo.pdf: unreadable file: PDF metadata: the XMP packet cannot be read")


UNREAD_SILENT = [
    # what real packets carry: an XML declaration (version="1.0"), the toolkit, producer, dates, IDs
    ("producer", '<?xml version="1.0" encoding="UTF-8"?>' + broken_packet(
        "<pdf:Producer>pdfTeX-1.40.25</pdf:Producer><xmp:CreateDate>2024-01-01T10:00:00</xmp:CreateDate>"
        "<xmpMM:DocumentID>uuid:6a3f</xmpMM:DocumentID><pdf:PDFVersion>1.5</pdf:PDFVersion>",
        'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:xmpMM="http://ns.adobe.com/xap/1.0/mm/" '
        'x:xmptk="Adobe XMP Core 5.6-c015 81.157285, 2014/12/12-00:43:15"')),
    ("ordinary-keywords", broken_packet("<pdf:Keywords>access control, version control</pdf:Keywords>")),
    # with /Title in the document information, the XMP title is not read even from a good packet
    ("title-with-info-title", broken_packet("<dc:title><rdf:Alt><rdf:li>Memo</rdf:li></rdf:Alt></dc:title>")),
]  # fmt: skip


@pytest.mark.parametrize(("case", "packet"), UNREAD_SILENT, ids=[c[0] for c in UNREAD_SILENT])
def test_an_unread_packet_that_names_no_field_is_no_problem(tmp_path, case, packet):
    corpus = corpus_with(
        tmp_path, "memo.pdf", pdf_with_packet(packet), entry="{doc_id: memo, version: '1', access: public}"
    )
    assert validate_problems(corpus) == (0, [])


def test_an_unread_packet_with_a_title_refuses_a_pdf_that_has_no_other():
    # without /Title the XMP dc:title is the title: the inventory's must not stand in for one not read
    data = pdf_with_packet(broken_packet("<dc:title><rdf:Alt><rdf:li>Layoffs</rdf:li></rdf:Alt></dc:title>"), title="")
    with pytest.raises(UnreadableFile, match=r"the XMP packet cannot be read \(.*\), and it gives a dc:title"):
        read_metadata(data, "memo.pdf")


# --- a configured access label written without a sign ----------------------------------------------------

LABELS_TOML = (
    '[access]\nlabels = ["public", "internal"]\n\n[roles]\npublic = ["public"]\nstaff = ["public", "internal"]\n'
)
INTERNAL = "doc_id=memo; version=1; access internal"


def test_a_configured_label_after_access_without_a_sign_is_refused_not_a_keyword():
    data = pdf_without_packet(keywords=INTERNAL)
    with pytest.raises(UnreadableFile, match=r"/Keywords names 'access' in a form not read \('access internal'\)"):
        read_metadata(data, "memo.pdf", labels=("public", "internal"))
    # parsing is a function of the bytes and the labels it is given: without that label it is a keyword
    assert read_metadata(data, "memo.pdf")["keywords"] == INTERNAL
    packet = xmp_packet(f'<rdf:Description rdf:about="" {NAMESPACES}><pdf:Keywords>memo, Access Internal</pdf:Keywords>'
                        "</rdf:Description>")  # fmt: skip
    with pytest.raises(UnreadableFile, match="the XMP pdf:Keywords names 'Access' in a form not read"):
        read_metadata(pdf_with_xmp_packet(memo_writer(), packet), "memo.pdf", labels=("public", "Internal"))


def test_validate_refuses_it_with_the_corpus_labels_and_access_control_stays_a_keyword(tmp_path):
    corpus = corpus_with(tmp_path, "memo.pdf", pdf_without_packet(keywords=INTERNAL), toml=LABELS_TOML)
    code, problems = validate_problems(corpus)
    assert code == 1 and len(problems) == 1, problems
    assert problems[0].startswith("documents/memo.pdf: unreadable file: PDF metadata: /Keywords names 'access' in a")
    ordinary = pdf_without_packet(keywords="access control; internal memo, access")
    kept = corpus_with(tmp_path / "kept", "memo.pdf", ordinary, entry="{doc_id: memo, version: '1', access: public}",
                       toml=LABELS_TOML)  # fmt: skip
    assert validate_problems(kept) == (0, [])


def test_a_stored_pdf_is_rejected_when_its_keyword_becomes_a_configured_label(tmp_path, store_args):
    """Unchanged bytes are read again without their body (a sync's metadata-only read): that read knows
    the labels too."""
    corpus = corpus_with(tmp_path, "memo.pdf", pdf_without_packet(keywords=INTERNAL))
    first = ingest_cli("run", corpus, "--json", *store_args)
    assert first.returncode == 0, first.stdout + first.stderr
    assert search_hits(store_args, "crownjewel", "public") == {"memo"}
    (corpus / "ingest.toml").write_text(LABELS_TOML, encoding="utf-8")
    done = ingest_cli("run", corpus, "--json", *store_args)
    assert done.returncode == 1, done.stdout + done.stderr
    [record] = json.loads(done.stdout)["problems"]
    assert record["source"] == "documents/memo.pdf", record
    assert "/Keywords names 'access' in a form not read ('access internal')" in record["problems"][0], record
    # the unchanged bytes indexed before (as a keyword) no longer vouch for the stored version: withdrawn
    assert search_hits(store_args, "crownjewel", "public") == set()
    assert "metadata is refused by this release's readers" in json.dumps(json.loads(done.stdout)), done.stdout
