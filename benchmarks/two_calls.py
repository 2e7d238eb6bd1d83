"""A scripted agent's two calls, through the shipped default call on a kept eval index: the default search; when
no passage of its first five documents holds the judged quote, the same question inside the first document
(``search_documents`` with its ``path`` and ``max_chunks`` 10). Reported: answered within one call, within two,
and for the second call alone, whether the first document was the judged one.

    .venv/bin/python -m benchmarks.two_calls --alias n361nu --documents ../shared/data/construction_ru/\\
russian_construction_standards/metadata --answers ../shared/data/construction_ru/dev_clause_set/clauses.jsonl \\
        [--phrasings ../shared/data/construction_ru/dev_clause_set/phrasings.jsonl]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluation.answers import contains_answer
from evaluation.evaluate import eval_settings, inside_first, load_phrasings, open_kept_clause_set, phrased_request
from service.caller.principal import Principal
from service.embedders.factory import build_embedder
from service.search.answer.models import SearchResponse
from service.settings import Settings

PUBLIC = Principal.of("eval", [])


def answered(response: SearchResponse, quotes: list[str], documents: int = 5) -> bool:
    return any(contains_answer(c.text, quotes) for r in response.results[:documents] for c in r.context_chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--documents", type=Path, required=True)
    parser.add_argument("--answers", type=Path, required=True)
    parser.add_argument("--phrasings", type=Path)
    args = parser.parse_args()
    kept = open_kept_clause_set(args.alias, args.documents, args.answers,
                                build_embedder(eval_settings(Settings(), args.alias).embedder))
    service, ids, questions, answers = kept.service, kept.ids, kept.questions, kept.answers
    phrasings = load_phrasings(args.phrasings) if args.phrasings else {}
    first = second = right_first = 0
    for qid, question in questions.items():
        quotes = list(answers[qid].answers)
        response = service.search(phrased_request(question, phrasings.get(qid)), PUBLIC)
        if answered(response, quotes):
            first += 1
            continue
        if not response.results:
            continue
        top = response.results[0]
        right_first += ids.get(top.id) == answers[qid].document
        inside = service.search(phrased_request(question, phrasings.get(qid), **inside_first(response)), PUBLIC)
        second += answered(inside, quotes, 1)
    n = len(questions)
    print(f"{n} questions: answered in one call {first / n:.4f}, within two {(first + second) / n:.4f} "
          f"(second call: {second} of {n - first}; its first document the judged one for {right_first})")


if __name__ == "__main__":
    main()
