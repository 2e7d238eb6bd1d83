"""Access groups per file from a sidecar rule file; the default is public.

The rule file is JSON: ``{"rules": [{"pattern": "contracts/**", "groups": ["legal"]}, ...],
"default": ["public"]}``. Patterns are globs on the path relative to the ingested root; the first
matching rule wins.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path

from service.errors import ConfigError


@dataclass(frozen=True)
class AccessRules:
    rules: tuple[tuple[str, tuple[str, ...]], ...]
    default: tuple[str, ...]

    def groups_for(self, relative: str) -> list[str]:
        for pattern, groups in self.rules:
            if fnmatch.fnmatch(relative, pattern):
                return list(groups)
        return list(self.default)


def load_rules(path: Path | None, default: list[str]) -> AccessRules:
    if path is None:
        return AccessRules((), tuple(default))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rules = tuple((r["pattern"], tuple(r["groups"])) for r in data.get("rules", []))
        return AccessRules(rules, tuple(data.get("default", default)))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"access rule file {path} is unreadable: {exc}") from exc
