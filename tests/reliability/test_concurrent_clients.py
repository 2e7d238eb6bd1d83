"""Many agents at once over streamable HTTP: every call answers, in every mode and operator.

The server runs as a user starts it, with its query cache on (the state its worker threads share) and small
enough that entries expire and are evicted while others are written."""

from __future__ import annotations

import itertools
from collections import Counter

import anyio
import pytest
from mcp import Client

from service.settings import Settings
from tests.support.servers import error_of, http_server, server_env

pytestmark = pytest.mark.integration

CLIENTS = 100
CALLS_EACH = 3
QUESTIONS = ("монтажный стык колонн", "анкерные болты фундамента", "защитный слой бетона", "огнестойкость")
MODES = ("hybrid", "fulltext", "semantic")
OPERATORS = ("AUTO", "AND", "OR", "PHRASE")


async def agents(url: str) -> tuple[int, Counter[str]]:
    """``CLIENTS`` sessions calling at once; the number of answers and the error codes of failed calls."""
    combos = itertools.cycle(itertools.product(QUESTIONS, MODES, OPERATORS))
    answered, failed = 0, Counter[str]()

    async def agent(calls: list[tuple[str, str, str]]) -> None:
        nonlocal answered
        async with Client(url, read_timeout_seconds=300) as client:
            for query, mode, operator in calls:
                result = await client.call_tool("search_documents", {"query": query, "search_mode": mode,
                                                                     "operator": operator, "limit": 3})
                if result.is_error:
                    failed[error_of(result)["code"]] += 1
                else:
                    answered += 1

    async with anyio.create_task_group() as group:
        for _ in range(CLIENTS):
            group.start_soon(agent, [next(combos) for _ in range(CALLS_EACH)])
    return answered, failed


def test_a_hundred_clients_in_every_mode_and_operator_get_answers_never_internal_errors(
        opensearch_url: str, corpus_settings: Settings) -> None:
    env = server_env(corpus_settings.index.alias, opensearch_url, STROIDOK_SEARCH_RATE_LIMIT="100000/minute",
                     STROIDOK_SEARCH_CACHE_TTL_S="0.2", STROIDOK_SEARCH_CACHE_SIZE="8")
    with http_server(env) as (url, _):
        answered, failed = anyio.run(agents, url)
    assert not failed, f"failed calls by code: {dict(failed)}"
    assert answered == CLIENTS * CALLS_EACH
