"""The whole ingest path (discover → parse → chunk → navec → bulk) into a real node."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from opensearchpy import OpenSearch

from ingest.discover import document_id
from ingest.index import context_text
from ingest.pipeline import run_ingest
from ingest.plan import IngestOptions
from ingest.report import RunReport
from service.embedders.base import Embedder
from service.embedders.navec import NavecEmbedder
from service.engine.index_meta import concrete_index, embedder_meta_version, load_embedder_state, read_embedder_meta
from service.errors import ConfigError
from service.search.answer.passages import parse_spans, span_at
from service.settings import Settings
from tests.support.documents import DOCX_DIR, GOST_PDF, make_scanned_pdf, make_txt, make_xlsx, requires_shared
from tests.support.engine import drop_index_resources, product_settings

pytestmark = [pytest.mark.integration, requires_shared]


def search_phrase(client: OpenSearch, alias: str, phrase: str, doc_id: str | None = None) -> list[dict[str, Any]]:
    query: dict[str, Any] = {"bool": {"must": [{"match_phrase": {"text": phrase}}]}}
    if doc_id:
        query["bool"]["filter"] = [{"term": {"doc_id": doc_id}}]
    body = {"query": query, "size": 20, "_source": {"excludes": ["embedding"]}}
    return [h["_source"] for h in client.search(index=alias, body=body)["hits"]["hits"]]


def page_of_phrase(source: dict[str, Any], phrase: str) -> int | None:
    """The page the chunk's spans give where ``phrase`` begins (a chunk may start pages earlier)."""
    match = re.search(r"\s+".join(map(re.escape, phrase.split())), source["text"])
    assert match, f"{phrase!r} is not in the chunk's text"
    span = span_at(parse_spans(source.get("spans")), match.start())
    return span.page if span else source["page_number"]


def chunk_count(client: OpenSearch, alias: str, doc_id: str) -> int:
    return int(client.count(index=alias, body={"query": {"term": {"doc_id": doc_id}}})["count"])


Corpus = tuple[Path, Settings, RunReport]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, opensearch_url: str, client: OpenSearch,
           navec_embedder: NavecEmbedder) -> Iterator[Corpus]:
    """One ingest of every kind of file, shared by the read-only tests below."""
    root = tmp_path_factory.mktemp("corpus")
    shutil.copy(GOST_PDF, root / GOST_PDF.name)
    (root / "нормы").mkdir()
    for docx in DOCX_DIR.glob("*.docx"):
        shutil.copy(docx, root / "нормы" / docx.name)
    make_xlsx(root / "смета.xlsx")
    make_txt(root / "записка-utf8.txt", "utf-8")
    make_txt(root / "записка-cp1251.txt", "cp1251")
    make_scanned_pdf(root / "акт-скан.pdf")
    settings = product_settings(opensearch_url)
    report = run_ingest(IngestOptions([root]), settings, client, navec_embedder, quiet=True)
    yield root, settings, report
    drop_index_resources(client, settings.index)


def test_every_file_is_indexed_and_reported(corpus: Corpus) -> None:
    _, _, report = corpus
    assert report.counts["indexed"] == 10, [o.line() for o in report.outcomes]
    assert not report.failed
    by_name = {Path(o.path).name: o for o in report.outcomes}
    assert by_name[GOST_PDF.name].pages == 38
    assert by_name["смета.xlsx"].pages == 2


@pytest.mark.parametrize(
    ("file", "phrase", "page"),
    [
        ("GOST_27772-2021.pdf", "Настоящий стандарт распространяется на следующую продукцию", 7),
        ("нормы/СП 91.13330.2012", "избегать расположения выработок в зонах крупных тектонических нарушений", 3),
        ("нормы/Приказ-Ростехнадзора", "Разрешение на применение керосинорезов", 1),
        ("смета.xlsx", "Бетон тяжелый класса прочности В25", 2),
        ("записка-utf8.txt", "составляет четырнадцать месяцев", 1),
        ("записка-cp1251.txt", "составляет четырнадцать месяцев", 1),
        ("акт-скан.pdf", "Бетонирование ростверка выполнено", 1),
    ],
)
def test_known_sentence_is_found_on_its_page(client: OpenSearch, corpus: Corpus, file: str, phrase: str,
                                             page: int) -> None:
    root, settings, _ = corpus
    (path,) = [p for p in root.rglob("*") if p.relative_to(root).as_posix().startswith(file)]
    hits = search_phrase(client, settings.index.alias, phrase, document_id(path))
    assert hits, f"{phrase!r} not found in {file}"
    assert {page_of_phrase(h, phrase) for h in hits} == {page}
    assert hits[0]["file_path"] == str(path.resolve())


def test_chunks_carry_the_metadata_the_search_needs(client: OpenSearch, corpus: Corpus) -> None:
    root, settings, _ = corpus
    (hit,) = search_phrase(client, settings.index.alias, "Бетон тяжелый класса прочности В25")
    assert hit["file_type"] == "xlsx"
    assert hit["page_label"] == "Материалы"
    assert hit["folder"] == str(root.resolve())
    assert hit["access_groups"] == ["public"]
    assert hit["chunk_id"] == f"{hit['doc_id']}:{hit['chunk_index']}"
    for key in ("title", "file_size", "created_at", "updated_at", "content_hash", "doc_hash", "page_count"):
        assert hit.get(key) not in (None, ""), key
    assert "embedding" not in hit


def test_every_chunk_with_words_has_a_vector(client: OpenSearch, corpus: Corpus) -> None:
    _, settings, _ = corpus
    alias = settings.index.alias
    total = client.count(index=alias)["count"]
    with_vector = client.count(index=alias, body={"query": {"exists": {"field": "embedding"}}})["count"]
    assert with_vector >= 0.97 * total


def test_chunk_vectors_are_computed_with_the_document_and_section_titles(client: OpenSearch, corpus: Corpus,
                                                                         navec_embedder: NavecEmbedder) -> None:
    _, settings, _ = corpus
    (hit,) = search_phrase(client, settings.index.alias, "Бетон тяжелый класса прочности В25")
    load_embedder_state(client, navec_embedder, settings.index)
    stored = np.asarray(client.get(index=settings.index.alias, id=hit["chunk_id"])["_source"]["embedding"])
    with_titles, text_only = navec_embedder.embed_documents(
        [context_text(hit["title"], hit["section_title"], hit["text"]), hit["text"]])
    assert hit["title"] not in hit["text"]
    assert np.allclose(stored, with_titles, atol=1e-4)
    assert not np.allclose(stored, text_only, atol=1e-2)


def test_embedder_identity_and_statistics_are_stored_with_the_index(client: OpenSearch, corpus: Corpus,
                                                                    navec_embedder: NavecEmbedder) -> None:
    _, settings, _ = corpus
    meta = read_embedder_meta(client, settings.index)
    assert meta["provider"] == "navec" and meta["dimension"] == 300
    assert meta["stats"]["total"] > 10000
    assert len(meta["stats"]["pc"]) == 300
    version = embedder_meta_version(client, settings.index, concrete_index(client, settings.index.alias))
    assert version is not None and version[0].startswith("embedder@") and version[1] >= 0  # read without source


def test_an_index_built_by_another_embedder_is_refused(client: OpenSearch, corpus: Corpus,
                                                       navec_embedder: NavecEmbedder) -> None:
    root, settings, _ = corpus

    class Impostor:
        identity = navec_embedder.identity.__class__("http", "other-model", 300)

    with pytest.raises(ConfigError, match="was built with navec"):
        run_ingest(IngestOptions([root], dry_run=True), settings, client, cast(Embedder, Impostor()), quiet=True)


def test_ingest_status_cli_summarises_the_registry(corpus: Corpus, opensearch_url: str) -> None:
    _, settings, _ = corpus
    env = {"OPENSEARCH_URL": opensearch_url, "STROIDOK_INDEX_ALIAS": settings.index.alias, "PATH": "/usr/bin:/bin",
           "DO_NOT_TRACK": "1"}
    done = subprocess.run([sys.executable, "-m", "service.cli", "ingest", "status", "--json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "\"files\": 10" in done.stdout
    assert '"pdf": 2' in done.stdout
