"""The managed single-node OpenSearch: Java discovery, artifact assembly, process lifecycle."""
