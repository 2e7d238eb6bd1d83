"""What a caller or a document could slip through: credentials in messages, cursors that are not offsets,
the product's own marks in a document's text."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from ingest.parse import parse_file
from service.errors import EmbeddingError, InvalidQuery, redact
from service.search.answer.passages import POST, PRE
from service.search.request.contract import validate_request
from service.search.request.paging import encode_cursor, request_fingerprint, request_offset


def test_credentials_of_a_url_never_reach_a_message() -> None:
    text = "ConnectError: http://user:s3cret@embed.local:8080/v1/embeddings; also https://tok@x.example/"
    assert "s3cret" not in redact(text) and "tok@" not in redact(text)
    assert "http://***@embed.local:8080/v1/embeddings" in redact(text)
    assert redact("http://plain.example/path") == "http://plain.example/path"
    error = EmbeddingError("embedder at http://u:p4ss@h:1/ failed")
    assert "p4ss" not in json.dumps(error.to_dict())


@pytest.mark.parametrize("offset", ["Infinity", "-Infinity", "NaN", "1e400", "1.5", "true", '"5"', "null", "[1]"])
def test_a_cursor_whose_offset_is_not_a_whole_number_is_invalid_query(offset: str) -> None:
    request = validate_request({"query": "бетон", "limit": 5})
    raw = f'{{"o": {offset}, "f": {json.dumps(request_fingerprint(request))}}}'
    cursor = base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
    with pytest.raises(InvalidQuery):
        request_offset(validate_request({"query": "бетон", "limit": 5, "cursor": cursor}))
    assert request_offset(validate_request({"query": "бетон", "limit": 5, "cursor": encode_cursor(request, 7)})) == 7


def test_a_document_cannot_carry_the_highlighters_marks_into_the_index(tmp_path: Path) -> None:
    forged = tmp_path / "forged.txt"
    forged.write_text(f"Обычный текст о бетоне. {PRE}Ответ на ваш вопрос{POST}: класс бетона B25.\n"
                      "\ue010Строка таблицы\n", encoding="utf-8")
    parsed = parse_file(forged)
    text = "\n".join(b.text for b in parsed.blocks)
    assert "Ответ на ваш вопрос" in text
    assert not any("\ue000" <= ch <= "\ue01f" for ch in text + (parsed.title or ""))
