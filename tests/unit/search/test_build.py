from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from service.engine.fields import CHUNK_FIELDS, DOCUMENT_FIELDS
from service.errors import InvalidQuery
from service.search.answer.hits import map_copies
from service.search.dsl.aggs import build_sources_body, document_count
from service.search.dsl.build import (
    EXTRA_CANDIDATES,
    EXTRA_CANDIDATES_WITHOUT_UNITS,
    ONE_DOCUMENT_CANDIDATES,
    WHOLE_DOCUMENT_CHUNKS,
    SearchPlan,
    SearchSettingsView,
    build_candidates_request,
    build_chunks_request,
    build_document_chunks_request,
    build_hybrid_body,
    build_knn_leg,
    build_request,
    candidate_ids,
    plan_search,
)
from service.search.dsl.filters import (
    build_access_filter,
    build_filters,
    build_folder_filter,
    build_source_filter,
    unboosted,
)
from service.search.dsl.lookups import MAX_COPIES, build_copies_lookup
from service.search.dsl.operators import (
    TEXT_FIELDS,
    build_binding,
    build_bm25_leg,
    build_every_word,
    build_multi_binding,
    build_text_query,
)
from service.search.request.contract import SearchRequest, validate_request
from service.search.request.parse import parse_query
from service.settings import SearchSettings


def test_bm25_leg_asks_the_text_code_fields_for_the_words_without_stop_words() -> None:
    plain = build_bm25_leg("пожарная безопасность", "OR")  # no stop word: every field, every word, one match
    assert plain["multi_match"]["operator"] == "or" and plain["multi_match"]["type"] == "most_fields"
    assert plain["multi_match"]["fields"] == ["text", "title", "section_title^0.5", "text.codes^0.3",
                                              "title.codes^0.3", "designation.codes"]
    asked = build_bm25_leg("какой высоты должны быть комнаты по СП 54.13330.2016", "AUTO",
                           minimum_should_match="2<75%")
    words, codes = (c["multi_match"] for c in asked["bool"]["should"])
    assert asked["bool"]["minimum_should_match"] == 1
    assert words["query"] == "какой высоты должны быть комнаты по СП 54.13330.2016"
    assert words["fields"] == ["text", "title", "section_title^0.5", "designation.codes"]
    assert codes == {"query": "высоты должны комнаты СП 54.13330.2016", "fields": ["text.codes^0.3",
                     "title.codes^0.3"], "type": "most_fields", "operator": "or", "minimum_should_match": "2<75%"}
    only_stop = build_bm25_leg("как и где", "OR")
    assert "text.codes^0.3" not in only_stop["multi_match"]["fields"]


def test_an_and_leg_asks_every_field_for_every_word() -> None:
    leg = build_bm25_leg("какой высоты комнаты", "AND")
    assert leg["multi_match"]["operator"] == "and" and "text.codes^0.3" in leg["multi_match"]["fields"]


def test_code_words_split_as_the_code_tokenizer_does_without_stop_words() -> None:
    from service.search.dsl.operators import code_words

    assert code_words("какое расстояние по СП 54.13330.2016, п. 5.8 (табл. Б.2) «12.1.004-91» 5.8 и т.д.") == [
        "расстояние", "СП", "54.13330.2016", "п.", "5.8", "табл.", "Б.2", "12.1.004-91", "5.8", "т.д."]


def test_hybrid_body_excludes_vectors_and_carries_filter() -> None:
    body = build_hybrid_body([build_bm25_leg("x"), build_knn_leg([0.1, 0.2], 5)], 10, {"term": {"file_type": "pdf"}})
    assert body["_source"] == {"excludes": ["embedding", "units"]}
    assert body["query"]["hybrid"]["filter"] == {"term": {"file_type": "pdf"}}
    assert body["query"]["hybrid"]["queries"][1] == {"knn": {"embedding": {"vector": [0.1, 0.2], "k": 5}}}
    assert body["size"] == 10


def test_text_query_with_and_requires_terms_and_phrases() -> None:
    query = build_text_query(parse_query('контроль "сварных швов"'), "AND")
    must = query["bool"]["must"]["bool"]["must"]
    assert must[0]["multi_match"]["type"] == "phrase" and must[0]["multi_match"]["query"] == "сварных швов"
    each = query["bool"]["filter"][0]["bool"]["filter"]
    assert [w["multi_match"]["query"] for w in each] == ["контроль"]
    assert all(w["multi_match"]["operator"] == "and" for w in each)


def test_and_admits_a_several_word_synonym_whole_only_when_the_query_holds_one() -> None:
    """«проект производства работ» admits a chunk saying ППР (the words match there only together)."""
    admitted = build_every_word("сроки проекта производства работ")["bool"]
    each, whole = admitted["should"][0]["bool"]["filter"], admitted["should"][1]["multi_match"]
    assert [w["multi_match"]["query"] for w in each] == ["сроки", "проекта", "производства", "работ"]
    assert whole["operator"] == "and" and admitted["minimum_should_match"] == 1
    assert "should" not in build_every_word("сроки проекта")["bool"]


def test_a_bound_and_leg_only_scores_and_the_binding_admits_once_as_a_filter() -> None:
    parsed = parse_query('контроль "сварных швов"')
    scoring = build_text_query(parsed, "AND", bound=True)
    assert "filter" not in scoring["bool"] and scoring["bool"]["must"][1]["multi_match"]["operator"] == "or"
    binding = build_binding(parsed, "AND")
    assert set(binding["bool"]) == {"filter"}  # nothing scored in the filter
    assert binding["bool"]["filter"][0]["multi_match"]["type"] == "phrase"
    assert binding["bool"]["filter"][1] == build_text_query(parsed, "AND")["bool"]["filter"][0]


def test_plan_binds_and_once_at_the_request_level_for_every_leg() -> None:
    view = SearchSettingsView(TEXT_FIELDS, "most_fields", None, 100, 300)
    request = validate_request({"query": "высота жилых комнат", "operator": "AND"})
    for vector in (None, [0.1, 0.2]):
        plan = plan_search(request, [parse_query(request.query)], ("public",), vector, 0, view)
        assert plan.filters["bool"]["filter"][-1] == build_binding(parse_query(request.query), "AND")
        text = plan.legs[0]["boosting"]["positive"]
        assert text["multi_match"]["operator"] == "or"  # the leg scores; the request's filter admits


def test_and_asks_every_word_of_some_field_not_every_field_for_every_word() -> None:
    query = build_text_query(parse_query("высота комнат СП 54.13330 высота"), "AND")
    each = query["bool"]["filter"][0]["bool"]["filter"]
    assert [w["multi_match"]["query"] for w in each] == ["высота", "комнат", "СП", "54.13330"]
    assert {w["multi_match"]["type"] for w in each} == {"best_fields"}
    assert query["bool"]["must"]["multi_match"]["operator"] == "or"  # the score: the words' BM25, as in OR


def test_text_query_with_or_needs_any_word_and_ranks_exact_phrases_higher() -> None:
    query = build_text_query(parse_query('контроль "сварных швов"'), "OR")
    words = query["bool"]["must"]["multi_match"]
    assert words["operator"] == "or" and words["query"] == "контроль сварных швов"
    assert query["bool"]["should"][0]["multi_match"] == {
        "query": "сварных швов", "fields": ["text", "title", "section_title", "text.codes"], "type": "phrase"}


def test_text_query_with_or_and_no_quotes_is_one_match() -> None:
    assert "multi_match" in build_text_query(parse_query("контроль швов"), "OR")


def test_user_text_never_reaches_query_string() -> None:
    body = build_text_query(parse_query('title:* OR (a AND "b") \\\\'), "AND")
    assert "query_string" not in str(body) and "simple_query_string" not in str(body)


def test_filters_always_carry_access_groups_and_combine_kinds() -> None:
    # "PDF" is normalized by the model
    request = SearchRequest(query="x", document_types=["PDF", "docx"],  # type: ignore[list-item]
                            source_filter="нормы",
                            date_range={"from": "2024-01-01", "to": "2024-01-31"})  # type: ignore[arg-type]
    clauses = build_filters(request, ["public", "legal"])["bool"]["filter"]
    assert clauses[0] == {"terms": {"access_groups": ["legal", "public"]}}
    assert build_source_filter("нормы") in clauses
    assert {"terms": {"file_type": ["docx", "pdf"]}} in clauses
    assert {"range": {"updated_at": {"gte": "2024-01-01", "lte": "2024-01-31||/d"}}} in clauses
    assert request.date_range.to == date(2024, 1, 31)


def test_the_widest_date_range_builds_without_overflow() -> None:
    request = SearchRequest(query="x", date_range={"from": "0001-01-01", "to": "9999-12-31"})  # type: ignore[arg-type]
    clauses = build_filters(request, ["public"])["bool"]["filter"]
    assert {"range": {"updated_at": {"gte": "0001-01-01", "lte": "9999-12-31||/d"}}} in clauses


def test_source_filter_escapes_wildcards() -> None:
    assert build_source_filter("a*b?") == {"wildcard": {"file_path": {"value": "*a\\*b\\?*"}}}
    assert build_source_filter("/data/x") == {"prefix": {"file_path": "/data/x"}}


def _plan(vector: tuple[float, ...] | None = (0.6, 0.8), groups: tuple[str, ...] = ("public",), offset: int = 0,
          **arguments: Any) -> SearchPlan:
    request = SearchRequest(query=arguments.pop("query", "бетон"), **arguments)
    parsed = [parse_query(q) for q in request.all_queries]
    return plan_search(request, parsed, groups, list(vector) if vector else None, offset, DEFAULT_VIEW)


#: the product's default: an index without unit vectors (``EmbedderSettings.unit_vectors`` off)
DEFAULT_VIEW = SearchSettingsView.of(SearchSettings(), unit_vectors=False, units_kept=False)


def _top_hits(plan: SearchPlan, ids: tuple[str, ...] = ("d1", "d2")) -> dict[str, Any]:
    """What a chunks request asks of each document's chunks."""
    top: dict[str, Any] = build_chunks_request(plan, list(ids))["aggs"]["chunks"]["aggs"]["chunks"]["top_hits"]
    return top


def test_request_groups_per_document_with_facets_similarity_and_threshold() -> None:
    plan = _plan(offset=20, limit=10, max_chunks=2, threshold=0.4)
    body = build_request(plan)
    # one result per content (copies in other folders are one); its chunks come from one chunks request
    assert body["collapse"] == {"field": "doc_hash"}
    assert _top_hits(plan)["size"] == 2 + EXTRA_CANDIDATES_WITHOUT_UNITS
    assert body["from"] == 20 and body["size"] == 10 and "min_score" not in body
    assert body["query"]["hybrid"]["pagination_depth"] == 1000
    assert set(body["aggs"]) == {"total_docs", "document_types", "date_distribution"}
    collate = body["suggest"]["corrected"]["phrase"]["collate"]["query"]["source"]
    assert collate["bool"]["filter"] == {"terms": {"access_groups": ["public"]}}
    radial = {"knn": {"embedding": {"vector": [0.6, 0.8], "min_score": 0.7}}}
    assert radial in body["query"]["hybrid"]["filter"]["bool"]["filter"]
    for hit_fields in (body["script_fields"], _top_hits(plan)["script_fields"]):
        assert hit_fields["similarity"]["script"]["params"] == {"query_vector": [0.6, 0.8]}


@pytest.mark.parametrize("body", [build_request(_plan()), build_request(_plan(vector=None)),
                                  build_sources_body(["public"])], ids=["hybrid", "bm25", "sources"])
def test_no_request_counts_documents_with_a_top_level_cardinality(body: dict[str, Any]) -> None:
    # the engine's dynamic pruning runs a top-level cardinality by re-running the query, which loops without
    # end under a hybrid query (OpenSearch issue 22582); below a parent aggregation it never runs
    assert not [name for name, agg in body["aggs"].items() if "cardinality" in agg]
    assert body["aggs"]["total_docs"]["filter"] == {"match_all": {}}
    assert document_count({"total_docs": {"doc_count": 9, "docs": {"value": 3}}}, 0) == 3
    assert document_count({}, 7) == 7


def test_request_fetches_document_fields_on_the_hit_and_chunk_fields_on_its_chunks() -> None:
    body = build_request(_plan())
    assert body["_source"] == {"includes": DOCUMENT_FIELDS} and "text" not in DOCUMENT_FIELDS
    assert _top_hits(_plan())["_source"] == {"includes": CHUNK_FIELDS}
    assert "embedding" not in DOCUMENT_FIELDS + CHUNK_FIELDS


def test_a_chunk_comes_whole_with_the_text_legs_marks_for_the_service_to_cut_its_passage() -> None:
    plan = _plan(vector=None)
    top = _top_hits(plan)
    assert "text" not in CHUNK_FIELDS and "spans" in CHUNK_FIELDS
    assert top["highlight"]["fields"]["text"] == {"type": "unified", "number_of_fragments": 0,
                                                  "no_match_size": 100_000}
    # the text leg alone marks terms (the dense leg has none; with it the engine would analyse every chunk again)
    assert top["highlight"]["highlight_query"] == plan.legs[0]
    assert _top_hits(_plan())["highlight"]["highlight_query"] == _plan().legs[0]


def test_a_semantic_search_takes_its_chunks_whole_and_unmarked() -> None:
    top = _top_hits(_plan(search_mode="semantic"))
    assert "highlight" not in top and top["_source"] == {"includes": [*CHUNK_FIELDS, "text"]}


def test_the_chunks_request_is_one_whatever_the_page_and_holds_the_searchs_filters() -> None:
    plan = _plan(groups=("public", "hr"), document_types=["pdf"], limit=50)
    ids = tuple(f"d{n}" for n in range(50))
    body = build_chunks_request(plan, list(ids))
    assert body["size"] == 0 and body["query"]["bool"]["should"] == list(plan.legs)
    assert body["query"]["bool"]["filter"] == [plan.filters, {"terms": {"doc_id": list(ids)}}]
    assert body["aggs"]["chunks"]["terms"] == {"field": "doc_id", "size": 50}
    assert _top_hits(plan, ids)["size"] == plan.max_chunks + EXTRA_CANDIDATES_WITHOUT_UNITS


def test_an_index_whose_dense_leg_names_units_keeps_the_chunks_in_the_collapse() -> None:
    """The nested unit hits come back on inner hits alone: there the collapse carries each document's chunks."""
    view = SearchSettingsView.of(SearchSettings(), unit_vectors=True)
    request = SearchRequest(query="бетон")
    plan = plan_search(request, [parse_query("бетон")], ("public",), [0.6, 0.8], 0, view)
    inner = build_request(plan)["collapse"]["inner_hits"][0]
    assert plan.unit_hits and inner["name"] == "chunks" and inner["size"] == 3 + EXTRA_CANDIDATES
    assert not _plan().unit_hits and not _plan(vector=None).unit_hits


def test_route_follows_mode_and_vector_and_says_why_it_fell_back() -> None:
    assert _plan(search_mode="hybrid").route == "hybrid"
    assert _plan(search_mode="semantic").route == "knn"
    assert _plan(search_mode="fulltext").route == "bm25"
    request = SearchRequest(query="бетон")
    fallen = plan_search(request, [parse_query("бетон")], ("public",), None, 0,
                         SearchSettingsView.of(SearchSettings()), "no vector")
    assert (fallen.route, fallen.fallback_reason, len(fallen.legs)) == ("bm25", "no vector", 1)
    assert "script_fields" not in build_request(fallen)


def test_threshold_without_a_vector_is_refused_with_the_field() -> None:
    with pytest.raises(InvalidQuery) as caught:
        _plan(vector=None, threshold=0.5)
    assert caught.value.details["field"] == "threshold"


def test_path_and_folder_filters_are_exact_and_segment_aware() -> None:
    clauses = build_filters(SearchRequest(query="x", path=["/a/b.pdf", "/a/b.pdf", "/c.txt"], folder="/data/norms/"),
                            ["public"])["bool"]["filter"]
    assert {"terms": {"file_path": ["/a/b.pdf", "/c.txt"]}} in clauses
    assert {"prefix": {"file_path": "/data/norms/"}} in clauses
    assert build_folder_filter("norms/fire") == {"wildcard": {"file_path": {"value": "*/norms/fire/*"}}}


def test_auto_needs_most_words_and_requires_straight_quoted_phrases_only() -> None:
    query = build_text_query(parse_query('контроль "сварных швов" «СП 70»'), "AUTO", minimum_should_match="25%")
    words, required = query["bool"]["must"]
    assert words["multi_match"]["minimum_should_match"] == "25%" and words["multi_match"]["operator"] == "or"
    assert required["multi_match"] == {"query": "сварных швов", "fields": ["text", "title", "section_title",
                                                                          "text.codes"], "type": "phrase"}
    assert [b["multi_match"]["query"] for b in query["bool"]["should"]] == ["СП 70"]


def test_phrase_operator_is_the_whole_query_as_one_phrase() -> None:
    query = build_text_query(parse_query('защитный "слой" бетона'), "PHRASE")
    assert query["multi_match"]["type"] == "phrase" and query["multi_match"]["query"] == "защитный слой бетона"


def test_binding_per_operator() -> None:
    parsed = parse_query('защитный слой "бетона"')
    assert build_binding(parsed, "OR") is None
    assert build_binding(parse_query("защитный слой"), "AUTO") is None
    assert build_binding(parsed, "AUTO") == {"multi_match": {"query": "бетона", "fields": list(
        ("text", "title", "section_title", "text.codes")), "type": "phrase"}}
    assert build_binding(parsed, "PHRASE") == build_text_query(parsed, "PHRASE")


def test_several_phrasings_bind_when_any_of_them_matches_and_not_at_all_if_one_is_free() -> None:
    one, two = parse_query("защитный слой"), parse_query("толщина покрытия")
    both = build_multi_binding([one, two], "AND")
    assert both["bool"]["minimum_should_match"] == 1 and len(both["bool"]["should"]) == 2
    assert build_multi_binding([one, parse_query('"слой"')], "AUTO") is None


@pytest.mark.parametrize(("cites", "clause"), [
    ("сп 63.13330", {"term": {"cites_family": "СП 63.13330"}}),
    ("СП 63.13330.2018", {"term": {"cites": "СП 63.13330.2018"}}),
    ("СНиП 52-01-2003", {"term": {"cites": "СНиП 52-01-2003"}}),
])
def test_the_cites_filter_matches_an_edition_as_cited_or_any_edition_of_a_family(cites: list[str],
                                                                                 clause: dict[str, Any]) -> None:
    plan = _plan(query="бетон", cites=cites)
    assert clause in plan.filters["bool"]["filter"]


def test_a_cites_value_that_is_no_designation_is_refused() -> None:
    with pytest.raises(ValueError, match="designation"):
        SearchRequest(query="бетон", cites="бетон тяжёлый")


def test_current_only_leaves_replaced_editions_out_inside_the_engine() -> None:
    assert {"exists": {"field": "superseded_by"}} in _plan(query="бетон", current_only=True).filters["bool"]["must_not"]
    assert {"exists": {"field": "superseded_by"}} not in _plan(query="бетон").filters["bool"]["must_not"]


def test_replaced_editions_score_lower_unless_the_query_names_a_designation() -> None:
    demoted = _plan(query="краны мостовые ограждения").legs[0]
    assert demoted["boosting"]["negative"] == {"exists": {"field": "superseded_by"}}
    named = _plan(query="ГОСТ 32576.1-2015 ограждения").legs[0]
    assert "boosting" not in named


def test_the_chunks_of_a_document_the_question_names_score_higher_in_any_edition() -> None:
    named = _plan(query="бетон", queries=["по СП 63.13330.2018 защитный слой", "ГОСТ 10180 прочность"]).legs[0]
    [favour] = named["function_score"]["functions"]
    assert favour["filter"] == {"terms": {"family": ["СП 63.13330", "ГОСТ 10180"]}} and favour["weight"] > 1
    assert named["function_score"]["boost_mode"] == "multiply"
    assert "function_score" not in _plan(query="защитный слой бетона").legs[0]


def test_copies_are_looked_up_by_content_within_the_requests_own_filters_not_its_query() -> None:
    plan = _plan(query="прокат", operator="AND", folder="/archive/a")
    lookup = build_copies_lookup(["h1", "h2"], plan.scope)
    scope, hashes = lookup["query"]["bool"]["filter"]
    assert scope == plan.scope and hashes == {"terms": {"doc_hash": ["h1", "h2"]}}
    assert {"terms": {"access_groups": ["public"]}} in scope["bool"]["filter"]
    assert "прокат" not in str(lookup)  # the binding stays with the search
    # aggregations alone (one query phase a shard): per content, its first paths in order, each with its id
    assert lookup["size"] == 0 and "collapse" not in lookup
    contents = lookup["aggs"]["copies"]
    assert contents["terms"] == {"field": "doc_hash", "size": 2}
    paths = contents["aggs"]["paths"]
    assert paths["terms"] == {"field": "file_path", "size": MAX_COPIES, "order": {"_key": "asc"}}
    assert paths["aggs"]["ids"] == {"terms": {"field": "doc_id", "size": 1}}


def test_a_copies_lookups_answer_lists_each_shared_contents_paths() -> None:
    raw = {"aggregations": {"copies": {"buckets": [
        {"key": "h1", "paths": {"buckets": [{"key": "/a/x.pdf", "ids": {"buckets": [{"key": "d1"}]}},
                                            {"key": "/b/x.pdf", "ids": {"buckets": [{"key": "d2"}]}}]}},
        {"key": "h2", "paths": {"buckets": [{"key": "/a/y.pdf", "ids": {"buckets": [{"key": "d3"}]}}]}}]}}}
    copies = map_copies(raw)
    assert list(copies) == ["h1"]  # a content at one path has no copies to list
    assert [(c.id, c.file_path) for c in copies["h1"]] == [("d1", "/a/x.pdf"), ("d2", "/b/x.pdf")]


def test_and_asks_a_plain_word_its_stemmed_fields_and_a_code_every_field() -> None:
    each = build_every_word("высота 54.13330", TEXT_FIELDS)["bool"]["filter"]
    word, code = (w["multi_match"]["fields"] for w in each)
    assert word == ["text", "title", "section_title^0.5", "designation.codes"]
    assert code == list(TEXT_FIELDS)


def test_the_dense_leg_adds_the_unit_leg_except_under_a_binding_operator() -> None:
    view = SearchSettingsView.of(SearchSettings(), unit_vectors=True)
    vector = [0.1, 0.2]
    for operator, units in (("AUTO", True), ("OR", True), ("AND", False), ("PHRASE", False)):
        request = validate_request({"query": "высота жилых комнат", "operator": operator})
        plan = plan_search(request, [parse_query(request.query)], ("public",), vector, 0, view)
        dense = plan.legs[-1]
        if units:  # the nearer of the chunk's own vector and its best unit's; the units' inner hits name them
            chunk, nested = dense["dis_max"]["queries"]
            assert chunk == {"knn": {"embedding": {"vector": vector, "k": 100}}}
            assert nested["nested"]["path"] == "units" and nested["nested"]["inner_hits"]["name"] == "units"
            assert "expand_nested_docs" not in nested["nested"]["query"]["knn"]["units.embedding"]
        else:  # a binding filter admits few chunks: the chunk leg searches among them alone
            assert dense == {"knn": {"embedding": {"vector": vector, "k": 100}}}, operator


def test_extra_candidates_follow_whether_the_index_keeps_unit_vectors() -> None:
    assert SearchSettingsView.of(SearchSettings(), unit_vectors=True).extra_candidates == 1
    assert SearchSettingsView.of(SearchSettings(), unit_vectors=False).extra_candidates == 5
    assert SearchSettingsView.of(SearchSettings(extra_candidates=3), unit_vectors=False).extra_candidates == 3
    request = validate_request({"query": "высота жилых комнат", "max_chunks": 2})
    for unit_vectors, size in ((True, 3), (False, 7)):
        view = SearchSettingsView.of(SearchSettings(), unit_vectors=unit_vectors)
        plan = plan_search(request, [parse_query(request.query)], ("public",), [0.1], 0, view)
        collapse = build_request(plan)["collapse"]
        top = collapse["inner_hits"][0] if plan.unit_hits else _top_hits(plan)
        assert top["size"] == size


def test_only_a_static_embedders_unit_vectors_take_fewer_candidates() -> None:
    from types import SimpleNamespace

    from service.embedders.base import keeps_static_unit_vectors

    navec, e5 = (SimpleNamespace(identity=SimpleNamespace(provider=p)) for p in ("navec", "e5"))
    assert keeps_static_unit_vectors(navec, "auto") and keeps_static_unit_vectors(navec, "on")  # type: ignore[arg-type]
    assert not keeps_static_unit_vectors(navec, "off")  # type: ignore[arg-type]
    kept = keeps_static_unit_vectors(e5, "on")  # type: ignore[arg-type]
    assert not kept, "e5's unit vectors answer better with 5 extra candidates"


def test_a_call_inside_one_file_chooses_its_passages_among_more_of_its_chunks() -> None:
    view = SearchSettingsView.of(SearchSettings(), unit_vectors=False)
    for arguments, size in (({}, 3 + 5), ({"path": ["/norms/sp54.pdf"]}, ONE_DOCUMENT_CANDIDATES),
                            ({"path": ["/norms/sp54.pdf", "/norms/sp1.pdf"]}, 3 + 5)):
        request = validate_request({"query": "высота жилых комнат", **arguments})
        plan = plan_search(request, [parse_query(request.query)], ("public",), [0.1], 0, view)
        assert _top_hits(plan)["size"] == size, arguments


def test_a_call_inside_one_document_asks_for_every_chunk_of_it_under_the_callers_access() -> None:
    view = SearchSettingsView.of(SearchSettings(), unit_vectors=False)
    for arguments, document, whole in (({"path": ["/norms/sp54.pdf"]}, None, True), ({}, "0" * 20, True),
                                       ({}, None, False), ({"path": ["/a.pdf", "/b.pdf"]}, None, False)):
        request = validate_request({"query": "высота жилых комнат", **arguments})
        plan = plan_search(request, [parse_query(request.query)], ("team",), [0.1], 0, view, document=document)
        assert plan.whole_document is whole, arguments
        if document is not None:
            assert {"term": {"doc_id": document}} in plan.filters["bool"]["filter"]
    body = build_document_chunks_request(plan, "d1")
    query = body["query"]["bool"]
    assert body["size"] == WHOLE_DOCUMENT_CHUNKS
    assert query["filter"] == [plan.filters, {"term": {"doc_id": "d1"}}]
    assert build_access_filter(["team"]) in plan.filters["bool"]["filter"]
    # every chunk the text leg matches comes (the document found by meaning alone: its best chunks, another request)
    assert query["should"] == [plan.text_leg] and query["minimum_should_match"] == 1 and "must" not in query
    assert body["highlight"]["highlight_query"] == plan.text_leg and "similarity" in body["script_fields"]


def test_a_hybrid_search_fuses_the_text_legs_best_candidates_the_same_on_every_page() -> None:
    assert _plan().text_candidates == SearchSettings().text_candidates > 0
    assert _plan(offset=90, limit=30).text_candidates == SearchSettings().text_candidates
    # without both legs, or inside one document (a filter that matches few), every match is scored
    assert _plan(vector=None).text_candidates == 0
    assert _plan(search_mode="semantic").text_candidates == 0
    assert _plan(path=["/docs/a.pdf"]).text_candidates == 0
    # an archive the caller reads fewer chunks of than the bound counts every match (as cheaply)
    request = SearchRequest(query="бетон")
    below, above = SearchSettings().text_candidates_from - 1, SearchSettings().text_candidates_from
    for readable, expected in ((below, 0), (above, SearchSettings().text_candidates), (None, 300)):
        plan = plan_search(request, [parse_query("бетон")], ("public",), [0.6, 0.8], 0, DEFAULT_VIEW, readable=readable)
        assert plan.text_candidates == expected
    off = SearchSettingsView.of(SearchSettings(text_candidates=0), unit_vectors=False, units_kept=False)
    assert plan_search(request, [parse_query("бетон")], ("public",), [0.6, 0.8], 0, off).text_candidates == 0


def test_the_candidates_request_is_the_unboosted_text_leg_under_every_filter_without_a_total() -> None:
    plan = _plan(query="высота помещений", groups=("staff",))
    body = build_candidates_request(plan)
    assert body["size"] == plan.text_candidates and body["track_total_hits"] is False and body["_source"] is False
    assert body["stored_fields"] == "_none_" and body["docvalue_fields"] == ["chunk_id"]
    assert candidate_ids({"hits": {"hits": [{"fields": {"chunk_id": ["d:2"]}}, {"fields": {"chunk_id": ["d:0"]}}]}}) \
        == ["d:2", "d:0"]
    must, filters = body["query"]["bool"]["must"], body["query"]["bool"]["filter"]
    assert filters == [plan.filters] and {"terms": {"access_groups": ["staff"]}} in plan.filters["bool"]["filter"]
    assert "boosting" in plan.legs[0] and must == [plan.legs[0]["boosting"]["positive"]]
    several = _plan(query="высота помещений", queries=["высота комнат"])
    assert "boosting" not in str(build_candidates_request(several)["query"])


def test_unboosted_keeps_a_leg_without_demotion_and_unwraps_each_phrasing() -> None:
    leg = {"multi_match": {"query": "бетон"}}
    assert unboosted(leg) is leg
    boosted = {"boosting": {"positive": leg, "negative": {"exists": {"field": "x"}}, "negative_boost": 0.75}}
    assert unboosted({"dis_max": {"queries": [boosted, leg], "tie_breaker": 0.1}}) == {
        "dis_max": {"queries": [leg, leg], "tie_breaker": 0.1}}


def test_the_search_restricts_only_the_text_leg_to_the_candidates() -> None:
    plan = _plan()
    legs = build_request(plan, ["c1", "c2"])["query"]["hybrid"]["queries"]
    assert legs[0] == {"bool": {"must": [plan.legs[0]], "filter": [{"terms": {"chunk_id": ["c1", "c2"]}}]}}
    assert legs[1] == plan.legs[1]  # the dense leg untouched
    assert build_request(plan, [])["query"]["hybrid"]["queries"][0] == {"match_none": {}}
    assert build_request(plan)["query"]["hybrid"]["queries"] == list(plan.legs)
