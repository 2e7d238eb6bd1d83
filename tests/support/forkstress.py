"""The fork race, as a program: threaded BLAS (an SVD the size of the SIF fit) runs in the
main thread while a parse pool keeps starting fresh workers. Run by tests and by benchmarks/chaos.py.

    python -m tests.support.forkstress forkserver 200   # the product's pool: must finish
    python -m tests.support.forkstress fork 200         # a plain fork pool: may hang for ever
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
from pebble import ProcessPool


def tiny(n: int) -> int:
    return n * 2


def main(kind: str, jobs: int) -> None:
    import multiprocessing

    from ingest.pool import worker_context
    from ingest.worker import init_worker

    context = worker_context(False) if kind == "forkserver" else multiprocessing.get_context("fork")
    stop = threading.Event()
    matrix = np.random.default_rng(0).standard_normal((20000, 300))
    svds = 0

    def blas() -> None:
        nonlocal svds
        while not stop.is_set():
            np.linalg.svd(matrix, full_matrices=False)
            svds += 1

    began = time.perf_counter()
    with ProcessPool(max_workers=2, max_tasks=1, initializer=init_worker, initargs=(2048,), context=context) as pool:
        thread = threading.Thread(target=blas, daemon=True)
        thread.start()
        results = [f.result(timeout=120) for f in [pool.schedule(tiny, (i,)) for i in range(jobs)]]
        stop.set()
        thread.join()
    assert results == [i * 2 for i in range(jobs)]
    print(f"{kind}: {jobs} worker starts beside {svds} SVDs in {time.perf_counter() - began:.1f}s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
