"""Time `engine up` (cold start to green) and `engine down` for a throwaway node, N rounds.

Run: .venv/bin/python -m benchmarks.engine_startup --rounds 3
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time

from service.engine.launcher.process import EngineProcess
from tests.support.engine import managed_engine_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--heap", default="1g")
    args = parser.parse_args()
    engine = EngineProcess(managed_engine_settings(args.heap))
    engine.install()
    ups, downs = [], []
    try:
        for _ in range(args.rounds):
            ups.append(engine.up().seconds)
            began = time.monotonic()
            engine.down()
            downs.append(time.monotonic() - began)
    finally:
        engine.down()
        shutil.rmtree(engine.paths.root, ignore_errors=True)
    print(f"rounds={args.rounds} heap={args.heap}")
    print(f"up to green: median {statistics.median(ups):.1f}s  min {min(ups):.1f}s  max {max(ups):.1f}s")
    print(f"down:        median {statistics.median(downs):.1f}s  min {min(downs):.1f}s  max {max(downs):.1f}s")


if __name__ == "__main__":
    main()
