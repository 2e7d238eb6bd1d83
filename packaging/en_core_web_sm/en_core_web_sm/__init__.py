"""Offline stand-in for spaCy's ``en_core_web_sm`` (see the StroiDok docs/ingest.md).

``unstructured`` calls ``spacy.load("en_core_web_sm")`` for sentence splitting and, if the package is
missing, downloads it at run time — impossible offline. English tagging means nothing on Russian text,
so a blank multilingual-safe pipeline with a punctuation sentencizer is all that is needed.
"""

from __future__ import annotations

from typing import Any

__version__ = "3.8.0"


def load(**overrides: Any):
    """What ``spacy.load`` calls for an installed model package; extra options are accepted and ignored."""
    import spacy

    nlp = spacy.blank("xx")
    nlp.add_pipe("sentencizer")
    nlp.max_length = 5_000_000
    return nlp
