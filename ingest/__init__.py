"""Batch ingestion: folders of documents into the chunk index. May import ``service``, never the reverse."""
