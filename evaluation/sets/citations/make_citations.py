"""Write ``citations.jsonl``: citations of the 361 norms with the verdict each should get, decided from the
documents' own page text (not from the product's parse).

    python -m evaluation.sets.citations.make_citations \\
        ../shared/data/construction_ru/russian_construction_standards/metadata

Kinds (each line: ``_id``, ``kind``, ``text`` as an engineer writes it, ``verdict`` expected, and where the
clause is real ``doc`` (corpus id), ``clause``, ``page`` — the page's position, as the ingest numbers pages —
and for a stated value ``value_matches``):

- ``clause``, ``table``, ``appendix``: a numbered clause, table or appendix that starts a line of the document's
  text once (contents pages left out) → found;
- ``value``, ``wrong_value``: a clause with a number and unit it states, quoted as stated or changed to a number
  that is nowhere near it → found, value_matches true / false;
- ``wrong_clause``: a clause number the document does not have (a sibling past its last one, found nowhere in its
  text) → clause_not_found;
- ``other_clause``: a clause of another document that this one lacks → clause_not_found;
- ``wrong_edition``: the designation with a year the archive lacks for it — a later one (edition_not_found), or
  an earlier one (superseded: the archive holds a newer edition of the family);
- ``missing``: a designation found nowhere in the corpus → document_not_found;
- ``replaced``: a designation a document says it replaces («Взамен …», «Актуализированная редакция …» on its
  first pages), not held itself → superseded.

Written as models and engineers also write them (``forms``: drawn with a seed of their own, so the kinds above stay
as they were):

- ``bare_clause``, ``bare_wrong_clause``, ``bare_value``: a clause number without «п.» after the designation
  («СП 1.13130.2020, 4.2.19», «ГОСТ 27772-2021 4.2», «… (4.2)») → found / clause_not_found, the value matching;
- ``flipped_bound``: a value with its bound flipped («не менее» ↔ «не более») → found, value_matches false;
- ``quote``, ``flipped_quote``: a sentence of the clause with a bound or a modal word quoted «…» as printed, or
  with the bound or modality flipped («допускается» ↔ «не допускается») → found, value_matches true / false;
- ``replaced_spaced``: a designation a letter-spaced title page says it actualises («А к т у а л и з и р о в а н
  н а я  р е д а к ц и я  СНиП …») → superseded.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SEED = 29
OUT = Path(__file__).with_name("citations.jsonl")
FORM_COUNTS = {"bare_clause": 30, "bare_wrong_clause": 20, "bare_value": 15, "flipped_bound": 25, "quote": 20,
               "flipped_quote": 20, "replaced_spaced": 5}
COUNTS = {"clause": 60, "table": 25, "appendix": 20, "value": 20, "wrong_value": 20, "wrong_clause": 30,
          "other_clause": 20, "wrong_edition": 25, "missing": 15, "replaced": 20}
_KINDS = {"Свод правил": "СП", "ГОСТ Р": "ГОСТ Р", "ГОСТ": "ГОСТ"}
_CLAUSE_LINE_RE = re.compile(r"^(?P<label>\d{1,2}(?:\.\d{1,3}){1,3})\.?\s+(?P<rest>[А-ЯЁA-Z«(].{25,})$")
_TABLE_LINE_RE = re.compile(r"^Таблица\s+(?P<label>(?:[А-ЯЁ]\.)?\d{1,2}(?:\.\d{1,2})?)(?![\d.])")
_APPENDIX_LINE_RE = re.compile(r"^ПРИЛОЖЕНИЕ\s+(?P<label>[А-ЯЁ])\b|^Приложение\s+(?P<label2>[А-ЯЁ])\s*$")
_CONTENTS_RE = re.compile(r"\.{4,}|…{2,}|\s\d{1,3}\s*$")
_VALUE_RE = re.compile(r"(?P<lead>не (?:менее|более) )?(?<!\d )(?<![\d,.])(?P<number>\d{1,4}(?:,\d{1,2})?) ?"
                       r"(?P<unit>мм|см|м|%|°С|кПа|МПа|мин|ч|лет|м2|м3|кг)(?![\wА-я])")
_REPLACES_RE = re.compile(r"(?:Взамен|ВЗАМЕН|Актуализированная редакция|АКТУАЛИЗИРОВАННАЯ РЕДАКЦИЯ)\s+"
                          r"(?P<d>(?:СНиП|ГОСТ Р|ГОСТ|СП)\s+[\dIVX][\d.\-–—IVX*]*\d)")


@dataclass
class Document:
    id: str
    designation: str
    pages: list[str]

    @property
    def family_year(self) -> tuple[str, int | None]:
        match = re.match(r"^(?P<f>.+?)[.-](?P<y>(?:19|20)\d{2})$", self.designation)
        return (match["f"], int(match["y"])) if match else (self.designation, None)

    def lines(self) -> Iterator[tuple[int, str]]:
        """(page position, line) of its body: contents pages (and lines like a contents entry) left out."""
        for position, text in enumerate(self.pages, 1):
            if re.search(r"^\s*Содержание\s*$", text, re.MULTILINE) and position < 8:
                continue
            for line in text.splitlines():
                line = " ".join(line.split())
                if line and not _CONTENTS_RE.search(line):
                    yield position, line


def designation_of(stem: str) -> str | None:
    for prefix, kind in _KINDS.items():
        if stem.startswith(prefix + " "):
            return f"{kind} {stem[len(prefix) + 1:].strip()}"
    return None


def load(folder: Path) -> list[Document]:
    documents = []
    for path in sorted(folder.glob("*.json")):
        designation = designation_of(path.stem)
        if designation is None:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        front = " ".join(" ".join(p.get("page_content") or "" for p in data["pages"][:3]).split())
        if designation.split(" ", 1)[1] not in re.sub(r"\s*[–—]\s*", "-", front):
            continue  # the file's name is not the designation its title page prints
        documents.append(Document(path.stem, designation, [p.get("page_content") or "" for p in data["pages"]]))
    return documents


def starts(document: Document, pattern: re.Pattern[str]) -> dict[str, list[tuple[int, str]]]:
    """Labels that start a line → [(page, line)] for every such line."""
    found: dict[str, list[tuple[int, str]]] = {}
    for page, line in document.lines():
        match = pattern.match(line)
        if match:
            label = next(g for g in (match.groupdict().get("label"), match.groupdict().get("label2")) if g)
            found.setdefault(label, []).append((page, line))
    return found


def once(found: dict[str, list[tuple[int, str]]]) -> dict[str, int]:
    return {label: places[0][0] for label, places in found.items() if len(places) == 1}


def clause_body(document: Document, page: int, label: str) -> str:
    """The clause's text from its line to the next clause line (at most 3,000 characters)."""
    text = "\n".join(document.pages[page - 1:page + 1])
    at = re.search(rf"^\s*{re.escape(label)}\.?\s", text, re.MULTILINE)
    if not at:
        return ""
    rest = text[at.start():]
    following = re.search(r"^\s*\d{1,2}(?:\.\d{1,3}){1,3}\.?\s+[А-ЯЁA-Z]", rest[len(label) + 2:], re.MULTILINE)
    return rest[:len(label) + 2 + following.start()] if following else rest[:3000]


def mentioned(document: Document, label: str) -> bool:
    """``label`` appears anywhere in the document as a number of its own."""
    pattern = re.compile(rf"(?<![\d.,]){re.escape(label)}(?![\d]|\.\d)")
    return any(pattern.search(text) for text in document.pages)


def numbers_in(text: str) -> set[str]:
    return {n.replace(",", ".") for n in re.findall(r"\d+(?:[.,]\d+)?", text)}


def cite(designation: str, pointer: str, rng: random.Random) -> str:
    """A citation in one of the forms engineers write."""
    forms = ["{d}, {p}", "{p} {d}", "{d} {p}", "{p} по {d}"]
    return rng.choice(forms).format(d=designation, p=pointer)


def pointer_of(kind: str, label: str, rng: random.Random) -> str:
    if kind == "table":
        return f"{rng.choice(['табл.', 'таблица', 'Таблица'])} {label}"
    if kind == "appendix":
        return f"{rng.choice(['приложение', 'прил.', 'Приложение'])} {label}"
    return f"{rng.choice(['п.', 'п. ', 'пункт'])}{'' if rng.random() < 0.3 else ' '}{label}".replace("  ", " ")


def changed_number(number: str, rng: random.Random, avoid: set[str]) -> str | None:
    value = float(number.replace(",", "."))
    decimals = len(number.split(",")[1]) if "," in number else 0
    for factor in rng.sample([1.5, 2, 3, 0.5, 1.25, 4], 6):
        candidate = round(value * factor, decimals)
        text = f"{candidate:.{decimals}f}".replace(".", ",")
        if text.replace(",", ".") not in avoid and candidate != value and candidate > 0:
            return text
    return None


class Expectation:
    """The verdict a citation of a held document should get: found, or superseded when the archive holds a
    later edition of its family or a document whose first pages say it replaces it."""

    def __init__(self, documents: list[Document]) -> None:
        self.families: dict[str, list[int | None]] = {}
        for d in documents:
            family, year = d.family_year
            self.families.setdefault(family, []).append(year)
        self.replaced = {re.sub(r"\s*[–—]\s*", "-", m["d"]).rstrip("*") for d in documents
                         for m in _REPLACES_RE.finditer("\n".join(d.pages[:4]))}

    def __call__(self, d: Document) -> str:
        family, year = d.family_year
        later = year is not None and any(y and y > year for y in self.families[family])
        return "superseded" if later or d.designation in self.replaced else "found"


def judged_citations(rows: list[dict[str, object]], documents: list[Document]) -> list[dict[str, object]]:
    """A judged clause set (``doc``, ``clause``, ``page``, the ``answer`` or ``quote``) as citations: «<designation>,
    п. <clause>: «<quote>»», found (or superseded), on that page, the quote's value matching."""
    by_id = {d.id: d for d in documents}
    expected = Expectation(documents)
    out: list[dict[str, object]] = []
    for row in rows:
        d = by_id.get(str(row["doc"]))
        quote = str(row.get("quote") or row.get("answer") or "").strip().rstrip(".")
        if d is None or not re.match(r"^\d", str(row["clause"])):
            continue
        out.append({"_id": row.get("_id") or row.get("id"), "kind": "judged", "text": f"{d.designation}, п. "
                    f"{row['clause']}: «{quote}»", "verdict": expected(d), "doc": d.id, "clause": row["clause"],
                    "page": row["page"], **({"value_matches": True} if quote else {})})
    return out


def generate(documents: list[Document]) -> list[dict[str, object]]:
    rng = random.Random(SEED)
    rows: list[dict[str, object]] = []
    held = {d.designation for d in documents}
    corpus_text = "\n".join("\n".join(d.pages) for d in documents)
    expected = Expectation(documents)
    shuffled = documents[:]
    rng.shuffle(shuffled)
    clauses = {d.id: once(starts(d, _CLAUSE_LINE_RE)) for d in documents}

    def add(kind: str, row: dict[str, object]) -> None:
        if sum(r["kind"] == kind for r in rows) < COUNTS[kind]:
            rows.append({"_id": f"{kind}-{sum(r['kind'] == kind for r in rows) + 1:02d}", "kind": kind, **row})

    for d in shuffled:  # real clauses, their values, and numbers the document lacks
        labels = clauses[d.id]
        if len(labels) < 5:
            continue
        label, page = rng.choice(sorted(labels.items()))
        add("clause", {"text": cite(d.designation, pointer_of("clause", label, rng), rng), "verdict": expected(d),
                       "doc": d.id, "clause": label, "page": page})
        body = clause_body(d, page, label)
        values = list(_VALUE_RE.finditer(body))
        if values:
            value = rng.choice(values)
            stated = f"{value['lead'] or ''}{value['number']} {value['unit']}"
            add("value", {"text": f"{d.designation}, п. {label}: {stated}", "verdict": expected(d), "doc": d.id,
                          "clause": label, "page": page, "value_matches": True})
            wrong = changed_number(value["number"], rng, numbers_in(body))
            other = [(lb, pg) for lb, pg in labels.items() if lb != label]
            if wrong and other:
                add("wrong_value", {"text": f"{d.designation}, п. {label}: {value['lead'] or ''}{wrong} "
                                            f"{value['unit']}", "verdict": expected(d), "doc": d.id, "clause": label,
                                    "page": page, "value_matches": False})
        parent, _, last = max(labels, key=lambda lb: [int(p) for p in lb.split(".")]).rpartition(".")
        missing = f"{parent}.{int(last) + 7}"
        if not mentioned(d, missing):
            add("wrong_clause", {"text": cite(d.designation, pointer_of("clause", missing, rng), rng),
                                 "verdict": expected(d).replace("found", "clause_not_found"), "doc": d.id,
                                 "clause": missing})
    for d in shuffled:  # tables and appendices
        for kind, pattern in (("table", _TABLE_LINE_RE), ("appendix", _APPENDIX_LINE_RE)):
            labels = once(starts(d, pattern))
            if labels:
                label, page = rng.choice(sorted(labels.items()))
                add(kind, {"text": cite(d.designation, pointer_of(kind, label, rng), rng), "verdict": expected(d),
                           "doc": d.id, "clause": f"{'Таблица' if kind == 'table' else 'Приложение'} {label}",
                           "page": page})
    for a, b in itertools.pairwise(shuffled):  # a clause of another document
        candidates = [lb for lb in clauses[b.id] if lb.count(".") >= 2 and not mentioned(a, lb)]
        if candidates:
            label = rng.choice(sorted(candidates))
            add("other_clause", {"text": cite(a.designation, pointer_of("clause", label, rng), rng),
                                 "verdict": expected(a).replace("found", "clause_not_found"), "doc": a.id,
                                 "clause": label})
    for d in shuffled:  # editions the archive lacks
        family, year = d.family_year
        if year is None or not clauses[d.id]:
            continue
        years = [y for y in expected.families[family] if y]
        later = d.designation.replace(str(year), str(max(years) + rng.choice([2, 3, 5])))
        earlier = d.designation.replace(str(year), str(min(years) - rng.choice([3, 5, 7])))
        label = rng.choice(sorted(clauses[d.id]))
        if rng.random() < 0.5 and later not in held:
            add("wrong_edition", {"text": cite(later, pointer_of("clause", label, rng), rng),
                                  "verdict": "edition_not_found"})
        elif earlier not in held and earlier not in corpus_text:
            add("wrong_edition", {"text": cite(earlier, pointer_of("clause", label, rng), rng),
                                  "verdict": "superseded", "replaced_by": d.id})
    for d in shuffled:  # designations nowhere in the corpus
        family, year = d.family_year
        number = re.search(r"\d+", family)
        if number is None:
            continue
        separator = "-" if "-" in d.designation else "."
        invented = family.replace(number[0], str(int(number[0]) + 917), 1) + (f"{separator}{year}" if year else "")
        if invented not in corpus_text and invented.split()[-1] not in corpus_text:
            add("missing", {"text": cite(invented, pointer_of("clause", "5.1", rng), rng),
                            "verdict": "document_not_found"})
    for d in shuffled:  # what a document says it replaces
        front = "\n".join(d.pages[:4])
        for match in _REPLACES_RE.finditer(front):
            replaced = re.sub(r"\s*[–—]\s*", "-", match["d"]).rstrip("*")
            if replaced in held or not clauses[d.id] or not re.search(r"[.-](?:19|20)?\d{2}$", replaced):
                continue
            label = rng.choice(sorted(clauses[d.id]))
            add("replaced", {"text": cite(replaced, pointer_of("clause", label, rng), rng), "verdict": "superseded",
                             "replaced_by": d.id})
            break
    return rows


_FLIP = {"не менее": "не более", "не более": "не менее"}
_MODAL_FLIP_RE = re.compile(r"(?P<neg>\bне\s+)?\b(?P<word>допускается|допускаются|следует)\b")
_SPACED_RUN_RE = re.compile(r"(?<![\w])((?:\w ){3,}\w)(?![\w])")


def unspaced(text: str) -> str:
    """Letter-spaced words read as words: «А к т у а л и з и р о в а н н а я  р е д а к ц и я» → «Актуализированная
    редакция» (letters one space apart; words two)."""
    return re.sub(r"(?<=\S) {2,}(?=\S)", " ", _SPACED_RUN_RE.sub(lambda m: m[1].replace(" ", ""), text))


def bare_form(designation: str, label: str, rng: random.Random) -> str:
    return rng.choice(["{d}, {p}", "{d} {p}", "{d} ({p})"]).format(d=designation, p=label)


def quotable(body: str) -> list[str]:
    """The clause's sentences with a bound or a modal word, as printed (30–200 characters; a sentence the text
    layer hyphenates or letter-spaces, or one running into a page number or the next heading, left out)."""
    out = []
    for sentence in re.split(r"(?<=[.;])\s+(?=[А-ЯЁ])", body):
        if re.search(r"\n\s*\d", sentence):
            continue  # runs into a page number or the next heading
        sentence = " ".join(sentence.split()).rstrip(".;")
        if (30 <= len(sentence) <= 200 and not re.search(r"\w-\s|\b\w \w \w\b|\u00ad", sentence)
                and (re.search(r"не (?:менее|более) \d", sentence) or _MODAL_FLIP_RE.search(sentence))):
            out.append(re.sub(r"^\d{1,2}(?:\.\d{1,3}){1,3}\.?\s+", "", sentence))
    return out


def flipped(sentence: str) -> str | None:
    """The sentence with its first bound flipped, else its first modal word negated or un-negated."""
    bound = re.search(r"не (менее|более)(?= \d)", sentence)
    if bound:
        return sentence[:bound.start()] + _FLIP[bound[0]] + sentence[bound.end():]
    modal = _MODAL_FLIP_RE.search(sentence)
    if modal:
        return sentence[:modal.start()] + ("" if modal["neg"] else "не ") + modal["word"] + sentence[modal.end():]
    return None


def generate_forms(documents: list[Document]) -> list[dict[str, object]]:
    """The kinds written as models also write them (``FORM_COUNTS``), with a seed of their own."""
    rng = random.Random(SEED + 1)
    rows: list[dict[str, object]] = []
    held = {d.designation for d in documents}
    expected = Expectation(documents)
    shuffled = documents[:]
    rng.shuffle(shuffled)

    def add(kind: str, row: dict[str, object]) -> None:
        if sum(r["kind"] == kind for r in rows) < FORM_COUNTS[kind]:
            rows.append({"_id": f"{kind}-{sum(r['kind'] == kind for r in rows) + 1:02d}", "kind": kind, **row})

    for d in shuffled:
        labels = once(starts(d, _CLAUSE_LINE_RE))
        if len(labels) < 5 or d.designation.endswith("-"):  # a file named without its designation's year
            continue
        label, page = rng.choice(sorted(labels.items()))
        real = {"verdict": expected(d), "doc": d.id, "clause": label, "page": page}
        add("bare_clause", {"text": bare_form(d.designation, label, rng), **real})
        parent, _, last = max(labels, key=lambda lb: [int(p) for p in lb.split(".")]).rpartition(".")
        missing = f"{parent}.{int(last) + 7}"
        if not mentioned(d, missing):
            add("bare_wrong_clause", {"text": bare_form(d.designation, missing, rng),
                                      "verdict": expected(d).replace("found", "clause_not_found"), "doc": d.id,
                                      "clause": missing})
        body = clause_body(d, page, label)
        values = list(_VALUE_RE.finditer(body))
        if values:
            value = rng.choice(values)
            stated = f"{value['lead'] or ''}{value['number']} {value['unit']}"
            add("bare_value", {"text": f"{d.designation} {label}: {stated}", **real, "value_matches": True})
            if value["lead"]:
                turned = f"{_FLIP[value['lead'].strip()]} {value['number']} {value['unit']}"
                if f"{turned.split(' ', 2)[0]} {turned.split(' ', 2)[1]} {value['number']}" not in " ".join(
                        body.split()):
                    add("flipped_bound", {"text": f"{d.designation}, п. {label}: {turned}", **real,
                                          "value_matches": False})
        sentences = quotable(body)
        if sentences:
            sentence = rng.choice(sentences)
            add("quote", {"text": f"{d.designation}, п. {label}: «{sentence}»", **real, "value_matches": True})
            turned_sentence = flipped(sentence)
            if turned_sentence and turned_sentence not in " ".join(body.split()):
                add("flipped_quote", {"text": f"{d.designation}, п. {label}: «{turned_sentence}»", **real,
                                      "value_matches": False})
    spaced = [d for d in shuffled if _SPACED_RUN_RE.search("\n".join(d.pages[:2]))]
    plain = {re.sub(r"\s*[–—]\s*", "-", m["d"]).rstrip("*") for d in documents
             for m in _REPLACES_RE.finditer("\n".join(d.pages[:4]))}
    for d in spaced:  # what only a letter-spaced title page says a document replaces
        for match in _REPLACES_RE.finditer(unspaced("\n".join(d.pages[:2]))):
            replaced = re.sub(r"\s*[–—]\s*", "-", match["d"]).rstrip("*")
            if replaced in held or replaced in plain or not re.search(r"[.-](?:19|20)?\d{2}$", replaced):
                continue
            add("replaced_spaced", {"text": bare_form(replaced, "", rng).rstrip(" ,()"), "verdict": "superseded",
                                    "replaced_by": d.id})
            break
    return rows


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(
        "../shared/data/construction_ru/russian_construction_standards/metadata")
    documents = load(folder)
    rows = generate(documents) + generate_forms(documents)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    counts = {k: sum(r["kind"] == k for r in rows) for k in {**COUNTS, **FORM_COUNTS}}
    print(f"{len(rows)} citations → {OUT}: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
