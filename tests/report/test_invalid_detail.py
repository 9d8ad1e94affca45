"""A rejected pointer's report cell keeps the error text; the hint is only the next step."""

from __future__ import annotations

from generator.report._document import _verify_document
from generator.report.cells import VerifyInvalid
from generator.report.render import verify_md, verify_of


def test_the_error_text_stays_beside_the_hint() -> None:
    cell = VerifyInvalid("signature", None, "re-sign the bundle", detail="DSSE: invalid signature")
    for text in (cell.text, verify_md(cell)):
        assert "DSSE: invalid signature" in text
        assert "next step: re-sign the bundle" in text
        assert text.index("DSSE") < text.index("next step")


def test_the_error_text_survives_the_json_document() -> None:
    cell = VerifyInvalid("integrity", 404, "re-push", detail="manifest check failed for 1 file")
    doc = _verify_document(cell)
    assert doc["detail"] == "manifest check failed for 1 file"
    assert verify_of(doc) == cell


def test_without_detail_the_hint_reads_as_before() -> None:
    cell = VerifyInvalid("signature", None, "fix the pointer")
    assert cell.text == ":x: invalid — signature: fix the pointer"
