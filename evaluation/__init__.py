"""Measuring the product: ``stroidok eval`` (relevance through the shipped ingest and search), judged answers,
and the sample folders the demo and the benchmarks ingest. Imports ``service`` and ``ingest``; neither imports it."""
