"""Requests a hostile or curious caller sends through the MCP HTTP transport, and how their answers are
judged: a randomized access-control fuzz and an injection corpus. Used by benchmarks/chaos.py."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

import httpx2

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
#: folder → groups given by the rule file; a principal reads a folder when it shares a group with it
FOLDERS = {"открыто": ["public"], "юристы": ["legal"], "кадры": ["hr"], "юристы-кадры": ["legal", "hr"]}
TOKENS = {"t-public": [], "t-legal": ["legal"], "t-hr": ["hr"], "t-both": ["legal", "hr"]}
WORDS = ["бетон", "арматура", "фундамент", "гидроизоляция", "кладка", "договор", "сотрудник", "смета", "сварка",
         "отпуск", "прочность", "монтаж"]
QUERY_STRING_SYNTAX = ["*", "*:*", "file_path:*", "_exists_:access_groups", "access_groups:legal", "title:* OR *",
                       "+бетон -арматура", "бетон AND (арматура OR *)", "бетон~2", "\"бетон\"~10", "бетон^100",
                       "_id:*", "NOT бетон", "[* TO *]", "{* TO *}", "бетон\\", "\\*", "((((((((((бетон"]
REGEX_AND_WILDCARDS = ["/.*/", "/[а-я]+/", ".*", "б*", "?етон", "*етон*", "бет?н", "\\u0000", "%", "_"]
STRANGE = ["", " ", "\u200b", "\u200b" * 400, "a" * 500, "б" * 501, "\x00бетон", "\ufeffбетон", "бетон\u0301",
           "<script>alert(1)</script>", "'; DROP TABLE chunks; --", "{{suggestion}}", "{{#toJson}}x{{/toJson}}",
           "${jndi:ldap://127.0.0.1/x}", "\"\"\"\"", "«»", "𝕓𝕖𝕥𝕠𝕟", "\n\r\t"]
IDS = ["../../etc/passwd", "0" * 20 + "/../x", "/etc/passwd", "stroidok-chunks", "*", "0" * 20 + ":-1",
       "0" * 20 + ":99999999", "f" * 19, "g" * 20, "0" * 20 + ":1:2", "%2e%2e%2f", "0" * 40, "0" * 41, ""]
FIELD_ATTACKS: list[dict[str, Any]] = [
    {"document_types": ["*"]}, {"document_types": ["pdf OR 1=1"]}, {"document_types": ["../x"]},
    {"source_filter": "*"}, {"source_filter": "/../../"}, {"source_filter": "\\*\\?"}, {"source_filter": ".*"},
    {"cursor": "eyJwIjogOTk5LCAiZiI6ICJ4In0"}, {"cursor": "../../etc"}, {"page": 10**9}, {"limit": -1},
    {"date_range": {"from": "0001-01-01", "to": "9999-12-31"}}, {"date_range": {"from": "x"}},
    {"search_mode": "script"}, {"operator": "XOR"}, {"threshold": 2}, {"index": "stroidok-chunks-files"},
    {"queries": ["*"] * 6}, {"max_chunks": 10**6},
]


def rpc(url: str, token: str, name: str, arguments: dict[str, Any], id_: int = 1) -> dict[str, Any]:
    """One tools/call; returns {"ok": structured} or {"code": ...} (or {"http": status})."""
    body = {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = httpx2.post(url, json=body, headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=120)
    if response.status_code != 200:
        return {"http": response.status_code, "text": response.text[:300]}
    text = response.text
    if "data:" in text:
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    message = json.loads(text)
    if "error" in message:
        return {"code": f"JSONRPC_{message['error'].get('code')}", "text": str(message["error"])[:300]}
    result = message["result"]
    if result.get("isError"):
        raw = result["content"][0]["text"]
        try:
            return {"code": json.loads(raw[raw.index("{"):])["code"], "text": raw[:300]}
        except ValueError:
            return {"code": "UNSTRUCTURED_ERROR", "text": raw[:300]}
    return {"ok": result.get("structuredContent")}


@dataclass
class Tally:
    tried: int = 0
    leaks: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def note(self, what: str, example: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1
        if len(self.examples) < 10:
            self.examples.append(f"{what}: {example[:200]}")


def allowed_docs(doc_groups: dict[str, list[str]], token: str) -> set[str]:
    groups = {"public", *TOKENS[token]}
    return {d for d, g in doc_groups.items() if groups & set(g)}


def random_search(rng: random.Random) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": " ".join(rng.sample(WORDS, rng.randint(1, 3))),
                                 "search_mode": rng.choice(["hybrid", "semantic", "fulltext"]),
                                 "operator": rng.choice(["AND", "OR"]), "limit": rng.randint(1, 20),
                                 "page": rng.randint(1, 4), "max_chunks": rng.randint(1, 3)}
    if rng.random() < 0.3:
        arguments["document_types"] = rng.sample(["txt", "docx", "pdf"], rng.randint(1, 2))
    if rng.random() < 0.3:
        arguments["source_filter"] = rng.choice(list(FOLDERS))
    if rng.random() < 0.2:
        arguments["threshold"] = round(rng.random(), 2)
    return arguments


def acl_fuzz(url: str, doc_groups: dict[str, list[str]], chunk_ids: list[str], requests: int,
             seed: int = 7) -> Tally:
    """Random principals × tools × arguments; a leak is any id, count or facet the principal may not see."""
    rng, tally = random.Random(seed), Tally()
    for i in range(requests):
        token = rng.choice(list(TOKENS))
        allowed = allowed_docs(doc_groups, token)
        tool = rng.choices(["search_documents", "get_document", "list_sources"], [6, 3, 1])[0]
        if tool == "search_documents":
            answer = rpc(url, token, tool, random_search(rng), i)
            results = (answer.get("ok") or {}).get("results", [])
            seen = {r["id"] for r in results} | {c["chunk_id"].split(":")[0] for r in results
                                                 for c in r.get("context_chunks", [])}
            if seen - allowed:
                tally.leaks += 1
                tally.note("leak", f"{token} saw {sorted(seen - allowed)[:2]}")
        elif tool == "get_document":
            target = rng.choice(chunk_ids) if rng.random() < 0.5 else rng.choice(list(doc_groups))
            answer = rpc(url, token, tool, {"id": target}, i)
            doc = target.split(":")[0]
            if "ok" in answer and doc not in allowed:
                tally.leaks += 1
                tally.note("leak", f"{token} opened {target}")
            if "ok" in answer:
                neighbours = {n["chunk_id"].split(":")[0] for n in answer["ok"].get("neighbours", [])}
                if neighbours - allowed:
                    tally.leaks += 1
                    tally.note("leak", f"{token} got neighbours of {target}")
            elif doc in allowed:
                tally.note("allowed document refused", str(answer))
        else:
            answer = rpc(url, token, tool, {}, i)
            if "ok" in answer and answer["ok"]["total_documents"] != len(allowed):
                tally.leaks += 1
                tally.note("leak", f"{token} list_sources counts {answer['ok']['total_documents']} != {len(allowed)}")
        if "ok" not in answer and answer.get("code") not in ("NOT_FOUND",):
            tally.note(str(answer.get("code") or answer.get("http")), str(answer))
        tally.tried += 1
    return tally


def injection_corpus() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = []
    for text in QUERY_STRING_SYNTAX + REGEX_AND_WILDCARDS + STRANGE:
        for mode in ("hybrid", "fulltext", "semantic"):
            cases.append(("search_documents", {"query": text, "search_mode": mode, "operator": "OR"}))
    cases += [("search_documents", {"query": "бетон", **attack}) for attack in FIELD_ATTACKS]
    cases += [("get_document", {"id": i}) for i in IDS]
    cases += [("get_document", {"id": i, "index": "x"}) for i in IDS[:2]]
    cases += [("list_sources", {"groups": ["legal"]}), ("list_sources", {"principal": "admin"})]
    return cases


def pure_syntax(text: str) -> bool:
    """No letter or digit: a query that can only match everything if the syntax were interpreted."""
    return not any(c.isalnum() for c in text)


def run_injections(url: str, doc_groups: dict[str, list[str]]) -> Tally:
    """Success of an injection: an engine or internal error, a traceback, a forbidden document, or
    results for a query that has no words (its syntax was interpreted)."""
    tally = Tally()
    allowed = allowed_docs(doc_groups, "t-public")
    for i, (tool, arguments) in enumerate(injection_corpus()):
        answer = rpc(url, "t-public", tool, arguments, i)
        tally.tried += 1
        text = json.dumps(answer, ensure_ascii=False)
        code = answer.get("code") or answer.get("http")
        bad = code not in (None, "INVALID_QUERY", "NOT_FOUND") or "Traceback" in text
        ok = answer.get("ok") or {}
        ids = {r["id"] for r in ok.get("results", [])} | ({ok["document"]["id"]} if "document" in ok else set())
        leaked = bool(ids - allowed) or (tool == "list_sources" and ok and ok["total_documents"] != len(allowed))
        interpreted = tool == "search_documents" and pure_syntax(arguments["query"]) and ok.get("results")
        if bad or leaked or interpreted:
            tally.leaks += 1
            tally.note("injection succeeded", f"{tool} {json.dumps(arguments, ensure_ascii=False)[:80]} → {text}")
    return tally
