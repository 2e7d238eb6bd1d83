"""The reliability tier shares the search tier's small corpus (built once for this package)."""

from tests.support.corpus import corpus_settings, search_corpus  # noqa: F401
