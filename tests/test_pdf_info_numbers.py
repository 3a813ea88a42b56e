"""A PDF information entry written as a number (``/version 2.10``) is read as written, as front
matter is: pypdf's FloatObject keeps only the float (2.10 is 2.1, 2.0 is 2, 007 is 7), which would
make version 2.10 and version 2.1 the same ``doc_id@version``. A number whose text cannot be read
back (an indirect object, a malformed number) in a field the check reads is refused, never guessed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ingest.model import UnreadableFile
from ingest.parse import parse_bytes
from tests.test_parse_pdf import hand_made_pdf
from tests.test_pdf_info_ambiguous import object_stream_pdf

TEXT = b"BT /F1 12 Tf 72 700 Td (The impeller is replaced every two years.) Tj ET"
FIELDS = b" /doc_id (pump) /access (public) /Title (Pump manual)"


def _metadata(info: bytes, extra: tuple[bytes, ...] = ()) -> dict:
    return parse_bytes(hand_made_pdf(TEXT, b"<<" + info + FIELDS + b" >>", extra), "pump.pdf").metadata


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (b"2.10", "2.10"),
        (b"2.0", "2.0"),
        (b"1.50", "1.50"),
        (b"007", "007"),
        (b"5", "5"),
        (b"+3", "+3"),
        (b".5", ".5"),
    ],
)
def test_a_numeric_version_is_read_as_written(written: bytes, read: str) -> None:
    assert _metadata(b" /version " + written)["version"] == read


def test_a_numeric_doc_id_is_read_as_written() -> None:
    pdf = hand_made_pdf(TEXT, b"<< /doc_id 0012 /version (1) /access (public) >>")
    assert parse_bytes(pdf, "pump.pdf").metadata["doc_id"] == "0012"


def test_two_numbers_a_float_reads_as_one_are_two_values() -> None:
    # 2.10 and 2.1 were both the float 2.1: one value, the second silently dropped
    assert _metadata(b" /version 2.10 /version 2.1")["version"] == ["2.10", "2.1"]


def test_a_number_in_an_object_stream_is_read_as_written() -> None:
    pdf = object_stream_pdf(b"<< /doc_id (pump) /version 2.10 /access (public) >>", compress=True)
    assert parse_bytes(pdf, "pump.pdf").metadata["version"] == "2.10"


@pytest.mark.parametrize(
    ("info", "extra", "said"),
    [
        (b" /version 8 0 R", (b"2.10",), "/version: a PDF number"),  # indirect: the text is not re-read
        (b" /version 2.1.0", (), "/version: '2.1.0' is not a PDF number"),  # pypdf reads 0.0
        (b" /Version 8 0 R", (b"3",), "/Version: a PDF number"),
    ],
)
def test_a_number_not_read_as_written_is_refused(info: bytes, extra: tuple[bytes, ...], said: str) -> None:
    with pytest.raises(UnreadableFile, match=said) as raised:
        _metadata(info, extra)
    assert "write it as a text string" in str(raised.value)


def test_a_number_in_a_field_nobody_reads_is_no_problem() -> None:
    metadata = _metadata(b" /version (1) /PTEX.Number 8 0 R /Scale 2.1.0", (b"2.10",))
    assert metadata["version"] == "1"


def test_the_indexed_version_is_the_one_written(tmp_path: Path) -> None:
    # attack pass 12, 02: `/version 2.10` was stored and cited as version 2.1
    documents = tmp_path / "corpus" / "documents"
    documents.mkdir(parents=True)
    (documents / "manual.pdf").write_bytes(hand_made_pdf(TEXT, b"<< /version 2.10" + FIELDS + b" >>"))
    store = f"sqlite:///{tmp_path}/index.sqlite"
    ingest = [sys.executable, "-m", "ingest"]
    done = subprocess.run([*ingest, "run", str(tmp_path / "corpus"), "--store", store], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = subprocess.run([*ingest, "chunks", "pump", "--store", store, "--json"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert {chunk["version"] for chunk in json.loads(shown.stdout)["chunks"]} == {"2.10"}
