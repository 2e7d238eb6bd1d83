"""CPU work right after an idle wait, beside the same work back to back.

A sequential MCP call waits ~40 ms for the engine with nothing to do; then the server maps, serializes and
sends the answer and the client reads it. On a virtual machine whose CPUs go idle during that wait, the
work that follows runs slower than the same work done back to back. This measures how much slower, with
the server's own work (validate and serialize a default-sized ``SearchResponse``), in one run:

    .venv/bin/python -m benchmarks.idle_wake
"""

from __future__ import annotations

import argparse
import statistics
import time

from service.search.answer.models import (
    ChunkResult,
    DocumentResult,
    Facets,
    Pagination,
    SearchMeta,
    SearchResponse,
    Suggestions,
    Timings,
)

PASSAGE = "Нормативное значение снеговой нагрузки на горизонтальную проекцию покрытия следует определять " * 5


def answer_sized_response(documents: int = 10, chunks: int = 2) -> SearchResponse:
    """About what a default search answers: 10 documents, ~18-20 passages of 500 characters."""
    results = [DocumentResult(id=f"{d:020d}", title="СП 20.13330.2016 Нагрузки и воздействия", file_path=f"/a/{d}.pdf",
                              file_type="pdf", file_size=270629, created_at=None, updated_at=None, relevance_score=0.5,
                              highlights=[PASSAGE[:240]] * chunks,
                              context_chunks=[ChunkResult(chunk_id=f"{d}:{c}", chunk_index=c, text=PASSAGE[:500],
                                                          page_number=16, relevance_score=0.4, similarity=0.5)
                                              for c in range(chunks)])
               for d in range(documents)]
    meta = SearchMeta(query="снеговая нагрузка", total_results=334, route_used="hybrid", timings=Timings(),
                      facets=Facets(), suggestions=Suggestions(),
                      pagination=Pagination(page=1, limit=10, total_pages=34, has_more=True))
    return SearchResponse(results=results, meta=meta)


def work_ms(response: SearchResponse, wire: dict[str, object]) -> float:
    began = time.perf_counter()
    SearchResponse.model_validate(wire)
    response.model_dump(mode="json")
    response.model_dump_json()
    return (time.perf_counter() - began) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--waits-ms", type=float, nargs="+", default=[0, 1, 10, 40])
    args = parser.parse_args()
    response = answer_sized_response()
    wire = response.model_dump(mode="json")
    medians: dict[float, float] = {wait: 0.0 for wait in args.waits_ms}
    for _ in range(2):  # the waits interleaved in two passes: a noisy moment does not fall on one of them
        for wait in args.waits_ms:
            times = []
            for _ in range(args.rounds // 2):
                if wait:
                    time.sleep(wait / 1000)
                times.append(work_ms(response, wire))
            medians[wait] += statistics.median(times) / 2
    base = medians[args.waits_ms[0]]
    print(f"validate + serialize one default-sized answer ({len(response.model_dump_json())} characters), p50:")
    for wait, median in medians.items():
        print(f"  after an idle wait of {wait:4.0f} ms: {median:.3f} ms ({median / base:.2f}× back to back)")


if __name__ == "__main__":
    main()
