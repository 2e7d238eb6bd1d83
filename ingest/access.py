"""Access groups per file from a sidecar rule file; the default is public.

The rule file is JSON: ``{"rules": [{"pattern": "contracts/**", "groups": ["legal"]}, ...],
"default": ["public"]}``. The first matching rule wins. A pattern is a glob that matches a file when
it matches the file's path below *any* of its folders (as a .gitignore pattern does), so the groups
of a file never depend on which root was given to ``stroidok ingest`` (``ingest docs`` and
``ingest docs/secret`` agree); a pattern starting with ``/`` is matched against the absolute path. A
trailing ``/`` means the folder and everything in it. Paths and patterns are compared in Unicode NFC,
so a folder name written in NFD (macOS) still matches its rule.
"""

from __future__ import annotations

import fnmatch
import json
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from service.errors import ConfigError


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def normalise_pattern(pattern: str) -> str:
    pattern = _nfc(pattern.strip().replace("\\", "/"))
    return pattern + "*" if pattern.endswith("/") else pattern


def path_suffixes(path: Path) -> list[str]:
    """Every tail of the absolute path, shortest first: ``a.pdf``, ``secret/a.pdf``, ..."""
    parts = [_nfc(os.fsdecode(p)) for p in Path(os.path.abspath(path)).parts[1:]]
    return ["/".join(parts[i:]) for i in range(len(parts) - 1, -1, -1)]


def rule_matches(pattern: str, path: Path) -> bool:
    if pattern.startswith("/"):
        return fnmatch.fnmatchcase(_nfc(os.fsdecode(os.path.abspath(path))), pattern)
    return any(fnmatch.fnmatchcase(tail, pattern) for tail in path_suffixes(path))


@dataclass(frozen=True)
class AccessRules:
    rules: tuple[tuple[str, tuple[str, ...]], ...]
    default: tuple[str, ...]

    def groups_for(self, path: Path) -> list[str]:
        for pattern, groups in self.rules:
            if rule_matches(pattern, path):
                return sorted(set(groups))
        return sorted(set(self.default))


def load_rules(path: Path | None, default: list[str]) -> AccessRules:
    if path is None:
        return AccessRules((), tuple(default))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rules = tuple((normalise_pattern(r["pattern"]), tuple(str(g) for g in r["groups"]))
                      for r in data.get("rules", []))
        return AccessRules(rules, tuple(data.get("default", default)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"access rule file {path} is unreadable: {exc}") from exc
