"""Embedders: one interface (``base.Embedder``) used by ingest and query-time search alike."""
