"""The ingest: workers, file bounds, OCR, default groups (``STROIDOK_INGEST_*``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.settings.groups import GroupNames


class IngestSettings(BaseSettings):
    """Batch ingestion defaults (CLI flags override them)."""

    model_config = SettingsConfigDict(env_prefix="STROIDOK_INGEST_", extra="ignore")

    pdf_parser: Literal["pdfium", "unstructured"] = Field(default="pdfium", description="The PDF text layer "
                                                          "through pypdfium2 (fast) or unstructured.")
    pdf_tables: bool = Field(default=True, description="Ruled tables of born-digital PDF pages that caption one "
                             "read as rows under their headers (pdfplumber, ~0.15 s a page: docs/scale.md).")
    chunk_chars: int = Field(default=2000, ge=200, le=20000, description="Measured best: docs/relevance.md.")
    chunk_overlap: int = Field(default=250, ge=0, le=5000, description="Characters a chunk repeats of the one "
                               "before it.")
    batch_size: int = Field(default=500, ge=1, le=10000, description="Chunks per bulk request.")
    workers: int = Field(default_factory=lambda: max(1, min(4, os.cpu_count() or 1)), ge=1, le=64,
                         description="Parse worker processes (default: the cores, at most 4).")
    file_timeout_s: float = Field(default=600.0, gt=0, description="Per-file parse time cap.")
    page_timeout_s: float = Field(default=20.0, ge=0, description="Added to the cap for every page of a PDF "
                                  "(OCR reads a scan page by page: ~4-5 s a page on one core here).")
    stall_timeout_s: float | None = Field(default=None, gt=0, description="No progress for this long stops the run "
                                          "with INGEST_STALLED (default: the longest per-step bound + 300 s).")
    file_memory_mb: int = Field(default=4096, ge=256, description="Per-file parse address-space cap.")
    max_file_mb: int = Field(default=512, ge=1, description="Larger files are refused unparsed.")
    ocr_languages: str = Field(default="rus+eng", description="tesseract's languages for scanned pages.")
    ocr_min_chars: int = Field(default=20, ge=0, description="A PDF page with fewer characters is a scan.")
    vectors: Literal["auto", "now", "later"] = Field(default="auto", description=(
        "now: embed while ingesting; later: index text and metadata only, `stroidok embed` adds vectors; auto: "
        "now for fast embedders (navec, http), for e5 text first and the vectors right after in the same run."))
    text_first_after_s: float = Field(default=60.0, ge=0, description=(
        "A first ingest into an index fits the embedder's statistics on fit_sample chunks before it writes; when "
        "parsing has not reached that sample after this long (scans, a slow machine), it writes text first — "
        "searchable by BM25 at once — fits on what it has parsed once it reaches the sample or ends, and adds "
        "the early chunks' vectors before the run ends."))
    access_rules: Path | None = Field(default=None, description="JSON file: path patterns to access groups.")
    hard_links: Literal["refuse", "same-groups"] = Field(default="refuse", description=(
        "A file with several names (hard links): refused (a name may lie under other access groups), or, "
        "same-groups, taken under its first name when the run finds every name under the same groups (trees "
        "deduplicated by hard links)."))
    default_groups: GroupNames = Field(default_factory=lambda: ["public"], description="The groups of a file no "
                                       "access rule names.")
