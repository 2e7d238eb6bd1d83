"""What each embedder can do, in one table keyed by its provider: known before it is built (building e5
loads a model), so settings, the ingest and the search all read it here rather than test a provider's name."""

from __future__ import annotations

from dataclasses import dataclass, field

Fusion = dict[str, float | None]


@dataclass(frozen=True)
class Capabilities:
    """An embedder's abilities and the index settings that follow from it."""

    #: a text costs microseconds (navec): it keeps up with any ingest, and its passage units are cheap to embed
    static: bool = False
    #: its vectors depend on corpus statistics, fitted at ingest and stored with the index
    fitted: bool = False
    #: slow enough that an ingest indexes the text first and backfills the vectors (``--vectors auto``)
    text_first: bool = False
    #: its vector size, when the provider alone tells it (else ``STROIDOK_EMBEDDER_DIMENSION``)
    dimension: int | None = None
    #: a model the product ships, which a search can build from the index's record of it
    shipped: bool = False
    #: the hybrid fusion it ranks best with, measured in docs/relevance.md: a weak dense leg (navec) only nudges
    #: BM25; e5 leads at 0.7 with both legs scaled from fixed floors
    fusion: Fusion = field(default_factory=dict)
    #: the class that builds it, ``module:Class`` (imported only when built: e5 loads a model)
    builder: str = ""
    #: its model setting is the last part of the model name an index records (e5's variant)
    variant_in_model: bool = False


CAPABILITIES: dict[str, Capabilities] = {
    "navec": Capabilities(static=True, fitted=True, dimension=300, shipped=True,
                          fusion={"bm25_weight": 0.9, "bm25_lower_bound": None, "dense_lower_bound": None},
                          builder="service.embedders.navec:NavecEmbedder"),
    "e5": Capabilities(text_first=True, dimension=384, shipped=True,
                       fusion={"bm25_weight": 0.3, "bm25_lower_bound": 0.0, "dense_lower_bound": 0.875},
                       builder="service.embedders.e5:E5Embedder", variant_in_model=True),
    "http": Capabilities(builder="service.embedders.http:HttpEmbedder"),
    "sentence-transformers": Capabilities(
        builder="service.embedders.sentence_transformers:SentenceTransformersEmbedder"),
}


def capabilities_of(provider: str | None) -> Capabilities:
    """The table's row for ``provider``; an unknown one can do nothing special."""
    return CAPABILITIES.get(provider or "", Capabilities())
