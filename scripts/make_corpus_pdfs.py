"""Rebuild the PDF documents of the sample corpus (corpus/documents/**/*.pdf).

Run from the repository root:  .venv/bin/python scripts/make_corpus_pdfs.py

Each PDF gets a running header and a "Page N of M" footer on every page, headings in a
larger bold font than the body, tables drawn one row per line with clear gaps between
cells, and its metadata in the document information: /Title, plus ``key=value;`` pairs
in /Keywords. Output is byte-for-byte reproducible (reportlab's invariant mode), so a
rebuild does not change the documents' checksums.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from reportlab import rl_config

rl_config.invariant = 1  # no timestamps or random IDs: the same content gives the same bytes

from reportlab.lib import colors  # noqa: E402
from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.lib.styles import ParagraphStyle  # noqa: E402
from reportlab.lib.units import mm  # noqa: E402
from reportlab.platypus import (  # noqa: E402
    ListFlowable,
    ListItem,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

DOCUMENTS = Path(__file__).resolve().parent.parent / "corpus" / "documents"

BODY = ParagraphStyle("body", fontName="Helvetica", fontSize=10, leading=14, spaceAfter=6)
H1 = ParagraphStyle("h1", fontName="Helvetica-Bold", fontSize=18, leading=22, spaceAfter=10)
H2 = ParagraphStyle("h2", fontName="Helvetica-Bold", fontSize=13, leading=17, spaceBefore=8, spaceAfter=6)


@dataclass(frozen=True)
class PdfDocument:
    path: str  # relative to corpus/documents
    title: str
    header: str  # running header printed on every page
    meta: dict[str, str]  # written as key=value; pairs into /Keywords
    content: tuple  # ("h1"|"h2"|"p", text) | ("table", rows) | ("list", items)


def keywords(meta: dict[str, str]) -> str:
    return " ".join(f"{key}={value};" for key, value in meta.items())


def table(rows: list[list[str]]) -> Table:
    # Plain strings, not Paragraphs: a cell never wraps, so every row stays on one line.
    t = Table(rows, repeatRows=1, hAlign="LEFT")
    t.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), "Helvetica"),
                ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"),
                ("FONTSIZE", (0, 0), (-1, -1), 9.5),
                ("LEFTPADDING", (0, 0), (-1, -1), 4),
                ("RIGHTPADDING", (0, 0), (-1, -1), 18),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
                ("LINEBELOW", (0, 0), (-1, 0), 0.6, colors.black),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return t


def story(doc: PdfDocument) -> list:
    flow: list = []
    for kind, value in doc.content:
        if kind == "h1":
            flow.append(Paragraph(value, H1))
        elif kind == "h2":
            flow.append(Paragraph(value, H2))
        elif kind == "p":
            flow.append(Paragraph(value, BODY))
        elif kind == "table":
            flow.append(table(value))
            flow.append(Spacer(1, 8))
        elif kind == "list":
            items = [ListItem(Paragraph(item, BODY), leftIndent=12) for item in value]
            flow.append(
                ListFlowable(
                    items,
                    bulletType="bullet",
                    start="-",
                    leftIndent=12,
                    bulletFontName=BODY.fontName,  # same size as the body: a bullet is no heading
                    bulletFontSize=BODY.fontSize,
                )
            )
        else:
            raise ValueError(f"unknown content kind {kind!r}")
    return flow


def render(doc: PdfDocument, total_pages: int | None) -> tuple[bytes, int]:
    """Build the PDF; the footer names the total page count, so the first pass counts pages."""
    buffer = io.BytesIO()

    def decorate(canvas, template) -> None:
        canvas.saveState()
        width, height = A4
        canvas.setFont("Helvetica", 8.5)
        canvas.drawString(20 * mm, height - 12 * mm, doc.header)
        canvas.setLineWidth(0.4)
        canvas.line(20 * mm, height - 14 * mm, width - 20 * mm, height - 14 * mm)
        total = total_pages if total_pages is not None else 0
        canvas.drawCentredString(width / 2, 10 * mm, f"Page {canvas.getPageNumber()} of {total}")
        canvas.restoreState()

    template = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=22 * mm,
        bottomMargin=20 * mm,
        title=doc.title,
        author="Northwind Marine Ltd",
        subject=doc.title,
        keywords=keywords(doc.meta),
        creator="scripts/make_corpus_pdfs.py",
    )
    pages: list[int] = []

    def count(canvas, template_) -> None:
        decorate(canvas, template_)
        pages.append(canvas.getPageNumber())

    template.build(story(doc), onFirstPage=count, onLaterPages=count)
    return buffer.getvalue(), len(pages)


def build(doc: PdfDocument) -> int:
    _, total = render(doc, None)
    data, again = render(doc, total)
    assert again == total, (doc.path, total, again)
    out = DOCUMENTS / doc.path
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return total


PUBLIC = "Northwind Marine"
PARTNER = "Northwind Marine \u2014 Dealer Confidential"
INTERNAL = "Northwind Marine \u2014 Internal"

TORQUE_ROWS = [
    ["Fastener", "Thread", "Torque (Nm)", "Notes"],
    ["Cylinder head bolts", "M10", "42 then 90 deg", "in sequence, engine cold"],
    ["Connecting rod bolts", "M8", "30 then 60 deg", "new bolts every time"],
    ["Main bearing bolts", "M10", "48", "oil threads"],
    ["Flywheel nut", "M16", "160", "hold with tool NT-220"],
    ["Spark plugs", "M12", "25", "new plugs"],
    ["Oil drain plug", "M14", "27", "new washer"],
    ["Oil filter", "-", "18", "by hand plus 3/4 turn"],
    ["Oil pan bolts", "M6", "10", "cross pattern"],
    ["Intake manifold bolts", "M8", "24", ""],
    ["Exhaust cover bolts", "M8", "24", "thread sealant"],
    ["Thermostat cover bolts", "M6", "9", "new gasket"],
    ["Fuel rail bolts", "M6", "10", ""],
    ["Injector clamp bolts", "M6", "8", ""],
    ["High-pressure fuel pump bolts", "M6", "10", ""],
    ["Throttle body bolts", "M6", "8", ""],
    ["Timing belt tensioner", "M8", "26", "check deflection"],
    ["Camshaft pulley bolt", "M10", "60", "hold camshaft"],
    ["Crankshaft pulley bolt", "M12", "120", ""],
    ["Powerhead to midsection bolts", "M10", "45", "thread locker"],
    ["Midsection to gearcase bolts", "M10", "40", "thread locker"],
    ["Water pump housing bolts", "M6", "8", "do not overtighten"],
    ["Gearcase drain screw", "M8", "7", "new washer"],
    ["Gearcase vent screw", "M8", "7", "new washer"],
    ["Propeller nut", "M18", "55", "then align split pin"],
    ["Propeller shaft bearing housing", "M8", "22", ""],
    ["Anode screws", "M6", "6", "no grease"],
    ["Trim ram pivot bolts", "M12", "70", ""],
    ["Swivel bracket bolts", "M12", "75", ""],
    ["Transom clamp bolts", "M12", "45", "through-bolted"],
    ["Steering arm bolts", "M10", "48", "thread locker"],
    ["Starter motor bolts", "M8", "30", ""],
    ["Rectifier bolts", "M6", "8", ""],
    ["Battery cable terminals", "M8", "9", "on starter solenoid"],
    ["Engine control unit bolts", "M6", "8", ""],
    ["Lower cowling screws", "M6", "6", ""],
    ["Top cowling latch screws", "M5", "4", ""],
]

DOCS = (
    PdfDocument(
        path="manuals/engine-manual-x40.pdf",
        title="X40 Workshop Manual: Torque Settings and Rigging",
        header=PARTNER,
        meta={
            "doc_id": "engine-manual-x40",
            "version": "2",
            "access": "partner",
            "effective_from": "2025-01-01",
        },
        content=(
            ("h1", "X40 Workshop Manual: Torque Settings and Rigging"),
            (
                "p",
                "This workshop manual is for technicians at authorised Northwind dealers who install, "
                "rig and repair X40 outboards. It supplements the Level 1 and Level 2 service school "
                "courses and assumes access to the NW-Link diagnostic tool. It must not be given to "
                "owners; the owner's manual covers the checks an owner may do.",
            ),
            ("h2", "Tools and Safety"),
            (
                "p",
                "Use a calibrated torque wrench for every fastener listed in this manual, and check its "
                "calibration at least once a year. The special tools needed are the flywheel holder "
                "NT-220, the gearcase pressure tester NT-310 and the propeller shaft seal installer "
                "NT-415; dealers buy them as one kit when they are first authorised. Disconnect the "
                "battery and remove the kill-switch lanyard before any work on the powerhead, and "
                "support the engine on a proper stand, never on the trim rams alone.",
            ),
            ("h2", "Rigging the Engine"),
            (
                "p",
                "Mount the engine on the transom centreline unless the boat builder specifies an offset. "
                "Set the mounting height so that the anti-ventilation plate is level with the bottom of "
                "the hull, or up to 25 mm above it on fast hulls. Through-bolt the transom clamp with the "
                "bolts supplied and seal the holes with marine sealant. Route the control cables and the "
                "harness with no bend tighter than a 200 mm radius, and leave enough slack for full tilt "
                "and full steering lock in both directions.",
            ),
            (
                "p",
                "After rigging, run the engine in the test tank or on the water and record the "
                "full-throttle speed. With a normal load the engine must reach between 5,500 and 6,000 rpm. "
                "If it does not, change the propeller pitch: one inch of pitch changes the full-throttle "
                "speed by about 200 rpm. Record the propeller and the measured speed in the NW-Link "
                "service log before handing the boat over.",
            ),
            ("h2", "Pre-delivery Inspection"),
            (
                "p",
                "Every new X40 must pass the pre-delivery inspection before it is handed to the owner, "
                "and the completed checklist must be uploaded to the dealer portal within seven days of "
                "the sale; otherwise the warranty registration is not accepted. The inspection takes "
                "about 1.5 hours and is paid by Northwind at the dealer's labour rate for the first "
                "engine of each model year only.",
            ),
            ("h2", "Torque Specifications"),
            (
                "p",
                "Tighten every fastener to the value below with clean, dry threads unless the notes say "
                "otherwise. Where two values are given, tighten to the first value, then turn through the "
                "angle shown.",
            ),
            ("table", TORQUE_ROWS),
            ("h2", "Standard Repair Times"),
            (
                "p",
                "Warranty labour is paid against the standard repair times below, in hours, whatever "
                "time the repair actually takes. Ask dealer support before starting a repair that is "
                "not listed.",
            ),
            (
                "table",
                [
                    ["Repair", "Standard time (h)"],
                    ["Replace water pump impeller", "1.2"],
                    ["Replace thermostat", "0.6"],
                    ["Replace timing belt", "2.4"],
                    ["Replace gearcase seals", "3.1"],
                    ["Replace fuel injectors (set of three)", "1.8"],
                    ["Replace trim ram", "2.0"],
                ],
            ),
        ),
    ),
    PdfDocument(
        path="internal/quality-report-2025-q2.pdf",
        title="Quality Report: Warranty Claims Q2 2025",
        header=INTERNAL,
        meta={
            "doc_id": "quality-report-2025-q2",
            "version": "1",
            "access": "staff",
            "effective_from": "2025-07-20",
        },
        content=(
            ("h1", "Quality Report: Warranty Claims Q2 2025"),
            (
                "p",
                "This report summarises the warranty claims received between 1 April and 30 June 2025, "
                "the failure modes behind them and the corrective actions under way. It was prepared by "
                "the quality team for the management meeting of 22 July 2025 and is for internal use "
                "only.",
            ),
            ("h2", "Summary"),
            (
                "p",
                "Northwind received 486 warranty claims in the quarter, against 431 in the first "
                "quarter, and approved 442 of them. The approved claims cost 412,000 pounds in parts, "
                "labour and freight, which is 2.3% of engine revenue for the quarter and above the "
                "annual target of 2.0%. Most of the increase comes from one failure mode on the X90, "
                "described below. The average time to decide a claim was 6.4 working days, inside the "
                "10 working days promised in the warranty policy.",
            ),
            ("h2", "Claim Rates by Engine"),
            (
                "p",
                "The claim rate is the number of approved claims in the quarter divided by the number of "
                "engines of that family still inside their warranty period.",
            ),
            (
                "table",
                [
                    ["Engine", "Engines in warranty", "Approved claims", "Claim rate"],
                    ["X40", "11,240", "118", "1.05%"],
                    ["X60", "7,860", "149", "1.90%"],
                    ["X90", "2,310", "131", "5.67%"],
                    ["K25", "1,980", "44", "2.22%"],
                ],
            ),
            ("h2", "Top Failure Modes"),
            (
                "p",
                "The X90 trim ram seal is the largest single cause of claims: 87 of the 131 approved X90 "
                "claims were for trim rams that leaked oil and let the engine sink slowly from the trimmed "
                "position. The seals supplied by our second-source supplier between November 2024 and "
                "February 2025 were made from a compound that hardens in cold water. All affected engines "
                "fall in the serial range XH0610000 to XH0688000.",
            ),
            (
                "p",
                "On the X60, 41 claims were for water pump impellers that failed before 200 hours. Dealer "
                "reports show that most of these engines were run out of the water on a flushing muff "
                "with low water pressure, so the quality team does not consider this a product defect, "
                "but the owner's manual will be made clearer. On the K25, 19 claims were for shift cable "
                "adjustment at handover, which is a rigging error rather than a part failure.",
            ),
            ("h2", "Claims by Region"),
            (
                "p",
                "Claims are counted by the country of the dealer that submitted them. Ireland shows the "
                "highest rate per engine sold, which the regional team links to the large number of X90 "
                "engines on commercial RIBs used for sea-angling charters on the west coast.",
            ),
            (
                "table",
                [
                    ["Region", "Claims received", "Approved", "Declined"],
                    ["United Kingdom", "301", "276", "25"],
                    ["Ireland", "97", "88", "9"],
                    ["Netherlands and Belgium", "52", "46", "6"],
                    ["Nordic countries", "36", "32", "4"],
                ],
            ),
            ("h2", "Claim Handling"),
            (
                "p",
                "Of the 44 declined claims, 19 were declined for missing scheduled maintenance, 11 for "
                "damage from grounding or collision, 8 for running without cooling water and 6 for fuel "
                "with too much ethanol. Dealers asked for a second review of 12 declined claims; the "
                "technical team overturned 3 of them. The share of claims returned to dealers because "
                "photographs were missing fell from 14% to 6% after the dealer portal began to refuse "
                "claims without them in March.",
            ),
            (
                "p",
                "Average labour paid per approved claim was 2.1 hours, slightly above the 1.9 hours of the "
                "previous quarter because trim ram repairs take longer than the typical impeller or "
                "thermostat repair.",
            ),
            ("h2", "Corrective Actions"),
            (
                "list",
                [
                    "Field fix campaign FC-2025-04: dealers replace the trim ram seals on every X90 in "
                    "the affected serial range at the next service, paid as warranty; 2,400 engines, "
                    "estimated cost 168,000 pounds.",
                    "The second-source seal supplier has been suspended until it passes a new cold-water "
                    "test at 4 degrees Celsius.",
                    "The K25 handover checklist now includes a shift cable check signed by the technician.",
                    "The X60 owner's manual will warn in bold against running on a muff with low water "
                    "pressure, from the 2026 print run.",
                ],
            ),
            ("h2", "Outlook"),
            (
                "p",
                "The quality team expects the X90 claim rate to fall below 3% by the end of the year once "
                "FC-2025-04 is complete. Claims cost for the full year is forecast at 1.52 million pounds, "
                "2.2% of engine revenue.",
            ),
        ),
    ),
    PdfDocument(
        path="policies/recall-notice-2024-07.pdf",
        title="Safety Recall: X60 Fuel Hose Clamp",
        header=PUBLIC,
        meta={
            "doc_id": "recall-x60-fuel-clamp",
            "version": "1",
            "access": "public",
            "effective_from": "2024-07-15",
        },
        content=(
            ("h1", "Safety Recall: X60 Fuel Hose Clamp"),
            (
                "p",
                "Northwind Marine is recalling a number of X60 outboard engines to replace a fuel hose "
                "clamp that may loosen over time. We are contacting every registered owner of an affected "
                "engine by letter and email. The repair is free of charge.",
            ),
            ("h2", "Affected Engines"),
            (
                "p",
                "The recall covers X60 engines with serial numbers from XG1100000 to XG1185000, built "
                "between February and June 2024. The serial number is on the plate on the starboard side "
                "of the swivel bracket. Engines outside this range are not affected and need no action.",
            ),
            ("h2", "The Risk"),
            (
                "p",
                "On affected engines the clamp that holds the fuel hose to the high-pressure pump inlet can "
                "loosen after repeated heating and cooling. A loose clamp can let fuel seep onto the hot "
                "powerhead, which creates a risk of fire. We know of three engines where fuel seeped; none "
                "caught fire and nobody was hurt.",
            ),
            ("h2", "What Owners Should Do"),
            (
                "p",
                "Contact any authorised Northwind dealer to book the free repair. The dealer replaces the "
                "clamp with an improved design and checks the fuel system for leaks; the work takes about "
                "30 minutes. Until the repair is done, check under the cowling for the smell of fuel before "
                "every trip, and do not use the engine if you smell fuel.",
            ),
            ("h2", "Questions"),
            (
                "p",
                "Call the recall helpline on 01326 555 0177, Monday to Friday from 08:00 to 18:00, or write "
                "to recall@northwind-marine.example with your engine serial number.",
            ),
        ),
    ),
    PdfDocument(
        path="manuals/installation-guide-k25.pdf",
        title="K25 Sterndrive: Installation Overview",
        header=PUBLIC,
        meta={
            "doc_id": "k25-installation",
            "version": "3",
            "access": "public",
            "effective_from": "2024-02-01",
        },
        content=(
            ("h1", "K25 Sterndrive: Installation Overview"),
            (
                "p",
                "This overview helps boat builders and owners plan the installation of a K25 sterndrive. "
                "The installation itself must be done by an authorised dealer with a technician trained on "
                "the K-series; an installation by anyone else is not covered by the warranty.",
            ),
            ("h2", "Transom Requirements"),
            (
                "p",
                "The transom must be between 45 and 60 mm thick at the cut-out, flat within 1 mm across the "
                "area of the transom plate, and angled between 10 and 14 degrees from vertical. Solid "
                "laminate or marine plywood sealed with epoxy is suitable; cored transoms must have the core "
                "replaced with solid laminate around the cut-out. The cut-out is made with the template "
                "supplied in the installation kit.",
            ),
            ("h2", "Engine Bed and Alignment"),
            (
                "p",
                "The engine bed must carry the engine weight of 265 kg with the engine mounts on the same "
                "plane. After the engine is set on its mounts, align the engine coupler with the gimbal "
                "bearing using the alignment tool until it slides in without force. Misalignment is the "
                "most common cause of early gimbal bearing failure.",
            ),
            ("h2", "Installation Data"),
            (
                "table",
                [
                    ["Item", "Value"],
                    ["Transom thickness", "45 to 60 mm"],
                    ["Transom angle", "10 to 14 degrees"],
                    ["Engine weight with drive", "265 kg"],
                    ["Drive ratio", "1.81:1"],
                    ["Exhaust hose diameter", "102 mm"],
                    ["Minimum battery", "650 CCA"],
                ],
            ),
            ("h2", "Sea Trial"),
            (
                "p",
                "After installation the dealer carries out a sea trial of at least 30 minutes, checks for "
                "water in the bilge, confirms that the drive trims through its full range and records the "
                "full-throttle speed in the service log.",
            ),
        ),
    ),
    PdfDocument(
        path="company/price-list-2025.pdf",
        title="Retail Price List 2025: Engines and Accessories",
        header=PUBLIC,
        meta={
            "doc_id": "retail-price-list",
            "version": "2025",
            "access": "public",
            "effective_from": "2025-01-06",
        },
        content=(
            ("h1", "Retail Price List 2025: Engines and Accessories"),
            (
                "p",
                "Recommended retail prices for Northwind engines and accessories in the United Kingdom, "
                "valid from 6 January 2025 until further notice. Prices include VAT at 20%. Dealers may "
                "set their own selling prices. Rigging, delivery and the pre-delivery inspection are "
                "charged by the dealer.",
            ),
            ("h2", "Engine Prices"),
            (
                "table",
                [
                    ["Model", "Shaft", "Steering", "Price"],
                    ["XF40S", "15 inch", "tiller", "6,950 GBP"],
                    ["XF40L", "20 inch", "remote", "7,450 GBP"],
                    ["XF40XL", "25 inch", "remote", "7,690 GBP"],
                    ["XG60L", "20 inch", "remote", "9,880 GBP"],
                    ["XH90L", "20 inch", "remote", "13,750 GBP"],
                    ["XH90XL", "25 inch", "remote", "14,090 GBP"],
                    ["K25 sterndrive", "-", "remote", "11,400 GBP"],
                ],
            ),
            ("h2", "Accessories"),
            (
                "p",
                "Accessories are sold by dealers and through the online shop. Codes are needed when ordering "
                "online.",
            ),
            (
                "table",
                [
                    ["Accessory", "Code", "Price"],
                    ["NW-Link colour display, 7 inch", "NW-8801-D", "1,240 GBP"],
                    ["Remote control box, single lever", "NW-8420-M", "465 GBP"],
                    ["Tiller handle conversion kit", "NW-8315-K", "389 GBP"],
                    ["Stainless steel propeller, X40", "NW-7610-S", "495 GBP"],
                    ["Engine cover, breathable", "NW-8990-C", "129 GBP"],
                ],
            ),
            ("h2", "Extended Cover Plans"),
            (
                "p",
                "Extended Cover Plans are priced per engine family: 390 GBP for the X40, 520 GBP for the "
                "X60, 780 GBP for the X90 and 690 GBP for the K25. Plans are available from 1 July 2025.",
            ),
            ("h2", "Terms of Sale"),
            (
                "p",
                "Engines are sold with the Northwind limited warranty described in the current warranty "
                "policy. A deposit of 20% is usually asked when an engine is ordered, and the balance is "
                "due on delivery. Prices of accessories ordered online include delivery to mainland UK "
                "addresses; deliveries to the Scottish islands, Northern Ireland and the Isles of Scilly "
                "carry a surcharge shown at checkout. Northwind may change prices with 30 days' notice to "
                "dealers; orders confirmed before a change keep the old price.",
            ),
        ),
    ),
)


def main() -> None:
    for doc in DOCS:
        pages = build(doc)
        print(f"{doc.path}: {pages} page(s)")


if __name__ == "__main__":
    main()
