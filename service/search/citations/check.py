"""Citations checked against the archive: does the document exist, in the edition cited, is it current, does it
hold the clause, is the value stated beside it what the clause says.

Two engine requests for a usual text (at most ``MAX_CITATIONS`` citations; identical ones checked once): the
documents the cited designations name (their first chunks: by designation, by family, and those that say they
replace them), then every cited clause in its document, in the replacing document and — for a comparison — in
every edition held, as one ``filters``-style aggregation a target (its first chunks by ``chunk_index`` and the
labels near it: ``service.search.citations.clauses``), at most ``MAX_TARGETS`` targets a request. A designation many
documents share is checked in its first ``MAX_CANDIDATES`` (the rest counted, the verdict ``ambiguous``). The
access filter is in every request: a document the caller may not read is a document the archive does not hold.
Deciding is pure (``resolve``, ``verdict_of``); the answer's clause texts share a budget (``fit_texts``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from service.engine.fields import FIRST_CHUNK
from service.search.answer.models import CitationCheck, CitedDocument, Verdict
from service.search.citations.clauses import Opened, bounded, build_clauses_request, labels_of, nearest_labels, opened
from service.search.citations.designations import parse_designation
from service.search.citations.grammar import Citation, fold
from service.search.citations.wording import clause_words, wording_matches
from service.search.dsl.filters import build_access_filter

#: documents of one designation checked for a citation (more are counted, not checked)
MAX_CANDIDATES = 5
#: editions of a family named or compared for one citation (the newest)
MAX_EDITIONS = 10
#: clause targets (an aggregation and its four parts each) in one engine request
MAX_TARGETS = 150
#: a clause text cut to fit the answer's budget keeps this much (its chunk_id opens the rest)
HEAD_CHARS = 160
#: the clause texts of one answer share this many times a search answer's budget (``answer_chars``): 36 found
#: clauses of 600 characters fit whole at the default
CITATION_TEXT_SHARE = 2
_DOC_FIELDS = ["doc_id", "designation", "family", "edition", "title", "superseded_by",
               "superseded_by_designation", "replaces", "introduced", "amendments", "withdrawn"]

Send = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Held:
    """A document of the archive, as a citation sees it."""

    doc_id: str
    designation: str
    family: str
    edition: int | None
    title: str | None = None
    superseded_by: str | None = None
    replaces: tuple[str, ...] = ()
    introduced: str | None = None
    amendments: tuple[str, ...] = ()
    withdrawn: str | None = None

    @classmethod
    def of(cls, source: dict[str, Any]) -> Held:
        designation = str(source.get("designation") or "")
        family = str(source.get("family") or parse_designation(designation).family)
        return cls(source["doc_id"], designation, family, source.get("edition"), source.get("title"),
                   source.get("superseded_by"), tuple(source.get("replaces") or ()), source.get("introduced"),
                   tuple(source.get("amendments") or ()), source.get("withdrawn"))

    def cited(self) -> CitedDocument:
        return CitedDocument(id=self.doc_id, designation=self.designation, title=self.title,
                             introduced=self.introduced, amendments=list(self.amendments) or None,
                             withdrawn=self.withdrawn)


@dataclass
class Resolution:
    """A citation's document decided: the verdict when the document decides it, else None (the clause will)."""

    verdict: Verdict | None
    document: Held | None = None
    replaced_by: Held | None = None
    editions: list[str] = field(default_factory=list)
    candidates: list[Held] = field(default_factory=list)
    #: how many documents of distinct titles the designation names (``candidates`` holds the first few)
    matching: int = 0


def says_it_replaces(held: Held, cited: str) -> bool:
    """``held`` says it replaces the designation cited (an undated citation: any edition of its family)."""
    wanted = parse_designation(cited)
    for said in held.replaces:
        if fold(said) == fold(cited):
            return True
        if wanted.edition is None and fold(parse_designation(said).family) == fold(wanted.family):
            return True
    return False


def newest(documents: Sequence[Held]) -> Held | None:
    return max(documents, key=lambda h: (h.edition or 0, h.designation)) if documents else None


def successor_of(start: Held | None, cited: str, held: Sequence[Held]) -> Held | None:
    """The document replacing the one cited (or the designation cited, when the archive lacks it): a later
    edition of its family, or one that says it replaces it; followed to the newest the archive holds."""
    wanted = parse_designation(cited)
    by_id = {h.doc_id: h for h in held}
    later = [h for h in held if fold(h.family) == fold(wanted.family) and wanted.edition is not None
             and (h.edition or 0) > wanted.edition]
    replacing = [h for h in held if says_it_replaces(h, cited) and fold(h.family) != fold(wanted.family)]
    found = newest(later) or newest(replacing)
    if found is None and start is not None and start.superseded_by in by_id:
        found = by_id[start.superseded_by]
    seen = set()
    while found is not None and found.superseded_by in by_id and found.doc_id not in seen:
        seen.add(found.doc_id)
        found = by_id[found.superseded_by]
    return found


def resolve(citation: Citation, held: Sequence[Held]) -> Resolution:
    """Which document a citation names and, when the document alone decides it, the verdict: superseded,
    edition_not_found, document_not_found, ambiguous; None leaves it to the clause."""
    wanted = parse_designation(citation.designation)
    family = [h for h in held if fold(h.family) == fold(wanted.family)]
    editions = sorted({h.designation for h in family})
    if wanted.edition is None:
        exact = [h for h in family if h.superseded_by not in {f.doc_id for f in family}] or family
        chosen = [h for h in exact if (h.edition or 0) == max(e.edition or 0 for e in exact)]
    else:
        chosen = [h for h in family if fold(h.designation) == fold(citation.designation)]
    if chosen:
        document = chosen[0]
        successor = successor_of(document, document.designation, held)
        others = [e for e in editions if fold(e) != fold(document.designation)]
        if successor is not None and successor.doc_id != document.doc_id and wanted.edition is not None:
            return Resolution("superseded", document, successor, others[-MAX_EDITIONS:])
        distinct: dict[str, Held] = {}
        for h in chosen:  # one of each title, the first: a copy of a document is that document
            distinct.setdefault(fold(h.title or h.doc_id), h)
        candidates = list(distinct.values())
        many = len(candidates) > 1
        return Resolution(None, document, None, others[-MAX_EDITIONS:],
                          candidates[:MAX_CANDIDATES] if many else [], len(candidates) if many else 0)
    successor = successor_of(None, citation.designation, held)
    if successor is not None:
        return Resolution("superseded", None, successor, editions[-MAX_EDITIONS:])
    if family:
        return Resolution("edition_not_found", None, None, editions[-MAX_EDITIONS:])
    return Resolution("document_not_found")


def build_documents_request(citations: Sequence[Citation], groups: list[str], size: int) -> dict[str, Any]:
    """Request 1: the first chunk of every document a citation may name — its designation, its family, or one
    saying it replaces it (by designation, or for an undated citation any edition of its family)."""
    designations = sorted({c.designation for c in citations})
    families = sorted({parse_designation(d).family for d in designations})
    undated = [f for f in families if parse_designation(f).edition is None]
    should: list[dict[str, Any]] = [{"terms": {"designation": designations}}, {"terms": {"family": families}},
                                    {"terms": {"replaces": designations}},
                                    *({"prefix": {"replaces": f"{f}-"}} for f in undated),
                                    *({"prefix": {"replaces": f"{f}."}} for f in undated)]
    query = {"bool": {"filter": [FIRST_CHUNK, build_access_filter(groups)], "should": should,
                      "minimum_should_match": 1}}
    return {"query": query, "size": size, "_source": _DOC_FIELDS, "track_total_hits": False,
            "sort": [{"doc_id": "asc"}]}


@dataclass
class Checked:
    """A citation's check as the archive answered it (the document's, then the clause's)."""

    citation: Citation
    resolution: Resolution
    clause: Opened | None = None
    replaced: Opened | None = None
    labels: list[str] = field(default_factory=list)


def verdict_of(checked: Checked) -> CitationCheck:
    """The answer for one citation."""
    citation, res = checked.citation, checked.resolution
    verdict: Verdict | None = res.verdict
    if verdict is None:
        if res.candidates and (citation.clause is None or checked.clause is None):
            verdict = "ambiguous"
        elif citation.clause is not None and checked.clause is None:
            verdict = "clause_not_found"
        else:
            verdict = "found"
    stated = citation.value if checked.clause is not None else None
    matches = wording_matches(stated, checked.clause.full, citation.quoted) if stated and checked.clause else None
    return CitationCheck(
        cited=citation.cited, verdict=verdict, designation=citation.designation, clause=citation.clause,
        document=res.document.cited() if res.document else None,
        found=checked.clause.shown if checked.clause else None, value=citation.value,
        value_matches=matches,
        clause_words=clause_words(stated, checked.clause.full) if matches is False and stated and checked.clause
        else None,
        replaced_by=res.replaced_by.cited() if res.replaced_by else None,
        replaced_clause=checked.replaced.shown if checked.replaced else None,
        editions=res.editions or None,
        nearest=(nearest_labels(citation.clause, checked.labels) or None)
        if verdict == "clause_not_found" and citation.clause else None,
        candidates=[c.cited() for c in res.candidates] if verdict == "ambiguous" else None,
        matching=res.matching if verdict == "ambiguous" and res.matching > len(res.candidates) else None)


def fit_texts(checks: list[CitationCheck], budget: int) -> int:
    """Cut the clause texts of ``checks`` (in order: the first citations keep theirs whole) to what ``budget``
    characters hold together; a text past it keeps its first ``HEAD_CHARS`` (its chunk_id opens the rest).
    Returns how many texts were cut."""
    cut = 0
    for check in checks:
        for shown in (check.found, check.replaced_clause):
            if shown is None:
                continue
            if len(shown.text) <= budget:
                budget -= len(shown.text)
                continue
            shown.text = bounded(shown.text, HEAD_CHARS)
            budget = max(0, budget - len(shown.text))
            cut += 1
    return cut


def in_requests(targets: Sequence[tuple[str, str, str]], size: int = MAX_TARGETS
                ) -> list[Sequence[tuple[str, str, str]]]:
    """The targets in requests of at most ``size`` each."""
    return [targets[i:i + size] for i in range(0, len(targets), size)]


class CitationChecker:
    """Citations resolved in two engine requests through ``send`` (the service's, which maps engine errors)."""

    def __init__(self, send: Send, passage_chars: int) -> None:
        self.send = send
        self.passage_chars = passage_chars

    def check(self, citations: Sequence[Citation], groups: tuple[str, ...],
              compare: bool = False) -> tuple[list[Checked], dict[str, list[tuple[Held, Opened]]]]:
        """Each citation decided; with ``compare``, each cited clause in every edition of its family held."""
        if not citations:
            return [], {}
        size = min(10_000, 20 * len(citations) + 20)
        raw = self.send(build_documents_request(citations, list(groups), size))
        held = [Held.of(h["_source"]) for h in raw["hits"]["hits"] if h["_source"].get("designation")]
        first: dict[tuple[str, str | None], int] = {}  # each (designation, clause) checked once: its first index
        for i, c in enumerate(citations):
            first.setdefault((c.designation, c.clause), i)
        resolved = {key: resolve(citations[i], held) for key, i in first.items()}
        checked = [Checked(c, resolved[(c.designation, c.clause)]) for c in citations]
        targets: list[tuple[str, str, str]] = []
        editions: dict[int, list[Held]] = {}
        for i, item in enumerate(checked):
            clause, res = item.citation.clause, item.resolution
            if clause is None or first[(item.citation.designation, clause)] != i:
                continue
            for n, doc in enumerate([res.document, *res.candidates[1:]]):
                if doc is not None:
                    targets.append((f"c{i}_{n}", doc.doc_id, clause))
            if res.replaced_by is not None:
                targets.append((f"r{i}", res.replaced_by.doc_id, clause))
            if compare:
                family = parse_designation(item.citation.designation).family
                editions[i] = sorted((h for h in held if fold(h.family) == fold(family)
                                      or says_it_replaces(h, item.citation.designation)),
                                     key=lambda h: (h.edition or 0, h.designation))[-MAX_EDITIONS:]
                targets += [(f"e{i}_{n}", h.doc_id, clause) for n, h in enumerate(editions[i])]
        aggs: dict[str, Any] = {}
        for part in in_requests(targets):
            aggs.update(self.send(build_clauses_request(part, list(groups)))["aggregations"])
        for i, item in enumerate(checked):
            clause = item.citation.clause
            if clause is None:
                continue
            at = first[(item.citation.designation, clause)]
            if at == i:
                self._settle(item, i, clause, aggs)
            else:  # a repeat: the first's findings
                item.clause, item.replaced, item.labels = checked[at].clause, checked[at].replaced, checked[at].labels
        compared = {str(i): [(h, o) for n, h in enumerate(docs)
                             if (o := opened(aggs.get(f"e{i}_{n}"), str(checked[i].citation.clause),
                                             self.passage_chars)) is not None]
                    for i, docs in editions.items()}
        return checked, compared

    def _settle(self, item: Checked, i: int, clause: str, aggs: dict[str, Any]) -> None:
        """The clause in the document (or, among documents of one designation, the first that holds it)."""
        res = item.resolution
        docs = [res.document, *res.candidates[1:]] if res.document else []
        holding = [(doc, o) for n, doc in enumerate(docs) if doc is not None
                   and (o := opened(aggs.get(f"c{i}_{n}"), clause, self.passage_chars)) is not None]
        if len(holding) >= 1 and res.candidates:
            res.document, item.clause = holding[0]
            res.candidates = [d for d, _ in holding] if len(holding) > 1 and len({
                fold(d.title or d.doc_id) for d, _ in holding}) > 1 else []
        elif holding:
            item.clause = holding[0][1]
        item.labels = labels_of(aggs.get(f"c{i}_0"))
        if res.replaced_by is not None:
            item.replaced = opened(aggs.get(f"r{i}"), clause, self.passage_chars)
