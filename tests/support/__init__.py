"""What every test tier and the benchmarks share: free ports and waits (``net``), the product's servers as
processes (``servers``), engines and throwaway aliases (``engine``), documents and corpora (``documents``,
``crash``, ``hostile``), probes of a running server (``probes``), and load measurement (``load``).
Benchmarks import from here, never from a test module; nothing here imports a test or a benchmark."""
