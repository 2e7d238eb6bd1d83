from __future__ import annotations

from service.query.build import build_bm25_leg, build_hybrid_body, build_knn_leg


def test_bm25_leg_uses_the_operator_and_code_fields():
    leg = build_bm25_leg("пожарная безопасность", "OR")
    assert leg["multi_match"]["operator"] == "or"
    assert "text.codes" in leg["multi_match"]["fields"]


def test_hybrid_body_excludes_vectors_and_carries_filter():
    body = build_hybrid_body([build_bm25_leg("x"), build_knn_leg([0.1, 0.2], 5)], 10, {"term": {"file_type": "pdf"}})
    assert body["_source"] == {"excludes": ["embedding"]}
    assert body["query"]["hybrid"]["filter"] == {"term": {"file_type": "pdf"}}
    assert body["query"]["hybrid"]["queries"][1] == {"knn": {"embedding": {"vector": [0.1, 0.2], "k": 5}}}
    assert body["size"] == 10
