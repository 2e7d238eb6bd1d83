"""A passage's score does not depend on the process: sums over a set of terms come out the same whatever
order the set iterates in (string hashing differs per process unless PYTHONHASHSEED is set), so equal
passages tie the same way after every restart of the server."""

from __future__ import annotations

import os
import subprocess
import sys

SCORES = """
from service.search.answer.passages import unit_score, window_score, unmark, PRE, POST
weights = {w: 0.1 * (i + 1) for i, w in enumerate(["бетон", "арматур", "класс", "прочност", "защитн", "сло"])}
print(repr(unit_score(list(weights), weights)))
text = " ".join(f"{PRE}{w}{POST}" for w in weights)
chunk = unmark(text)
print(repr(window_score(chunk, [(0, len(chunk.text))], (0, 0), [1.0], weights, {}, 0.0)))
"""


def test_passage_scores_are_the_same_in_every_process() -> None:
    seen = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run([sys.executable, "-c", SCORES], env=env, capture_output=True, text=True, check=True)
        seen.add(out.stdout)
    assert len(seen) == 1, seen
