"""Access groups per file from a sidecar rule file; the default is public.

The rule file is JSON: ``{"rules": [{"pattern": "contracts/**", "groups": ["legal"]}, ...],
"default": ["public"]}``. The first matching rule wins. A pattern is a glob that matches a file when
it matches the file's path below *any* of its folders (as a .gitignore pattern does), so the groups
of a file never depend on which root was given to ``stroidok ingest`` (``ingest docs`` and
``ingest docs/secret`` agree); a pattern starting with ``/`` is matched against the absolute path, as the rule
file writes it and with the links of its folder part resolved (the walk sees resolved paths). A
trailing ``/`` means the folder and everything in it. Paths and patterns are compared in Unicode NFC,
so a folder name written in NFD (macOS) still matches its rule. The file fails closed: a key it does not know
(``"rule"`` for ``"rules"``), a key given twice in one object, an entry without a pattern or groups, a pattern of
the wrong type is ``CONFIG_ERROR``, never "no rules, every file public".
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from service.errors import ConfigError
from service.settings.groups import GroupNames, check_groups


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def normalise_pattern(pattern: str) -> str:
    pattern = _nfc(pattern.strip().replace("\\", "/"))
    return pattern + "*" if pattern.endswith("/") else pattern


def path_suffixes(path: Path) -> list[str]:
    """Every tail of the absolute path, shortest first: ``a.pdf``, ``secret/a.pdf``, ..."""
    parts = [_nfc(os.fsdecode(p)) for p in Path(os.path.abspath(path)).parts[1:]]
    return ["/".join(parts[i:]) for i in range(len(parts) - 1, -1, -1)]


_GLOB = re.compile(r"[*?\[]")


def resolved_pattern(pattern: str) -> str:
    """An absolute pattern with the links of its folder part (the components before the first wildcard)
    resolved, as the walk's paths are; a relative one unchanged."""
    if not pattern.startswith("/"):
        return pattern
    parts = pattern.split("/")
    fixed = next((i for i, part in enumerate(parts) if _GLOB.search(part)), len(parts))
    folder = "/".join(parts[:fixed]) or "/"
    rest = "/".join(parts[fixed:])
    real = _nfc(os.path.realpath(folder))
    return f"{real.rstrip('/')}/{rest}" if rest else real


def rule_matches(pattern: str, path: Path) -> bool:
    if pattern.startswith("/"):
        absolute = _nfc(os.fsdecode(os.path.abspath(path)))
        return any(fnmatch.fnmatchcase(absolute, p) for p in {pattern, resolved_pattern(pattern)})
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

    def digest(self) -> str:
        """What the rules decide, as a short digest the index records (the same rules, however written, agree)."""
        canonical = json.dumps({"rules": [[p, sorted(set(g))] for p, g in self.rules],
                                "default": sorted(set(self.default))}, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def describe(self) -> str:
        return (f"{len(self.rules)} rule(s), default {', '.join(sorted(set(self.default)))}" if self.rules
                else f"no rules (every file {', '.join(sorted(set(self.default)))})")


class Rule(BaseModel):
    """One entry of the rule file: exactly a pattern and its groups."""

    model_config = ConfigDict(extra="forbid", strict=True)
    pattern: str = Field(min_length=1)
    groups: GroupNames


class RuleFile(BaseModel):
    """The rule file: ``rules`` and ``default``, nothing else."""

    model_config = ConfigDict(extra="forbid", strict=True)
    rules: list[Rule]
    default: GroupNames | None = None


class DuplicateKey(ValueError):
    """A JSON object of the rule file names one key twice."""


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise DuplicateKey(next(k for i, k in enumerate(keys) if k in keys[:i]))
    return dict(pairs)


def refuse_duplicate_keys(raw: bytes) -> None:
    """``DuplicateKey`` when any object of the JSON ``raw`` names a key twice (JSON parsers keep the last, so
    ``{"rules": [...], "rules": []}`` would read as no rules); text that is no JSON is left to the validation."""
    try:
        json.loads(raw, object_pairs_hook=_unique)
    except DuplicateKey:
        raise
    except ValueError:
        return


def load_rules(path: Path | None, default: list[str]) -> AccessRules:
    """The rules of ``path`` (none: every file gets ``default``); CONFIG_ERROR for a file that is not exactly
    the rule file's form."""
    if path is None:
        return AccessRules((), tuple(default))
    try:
        raw = path.read_bytes()
        refuse_duplicate_keys(raw)
        data = RuleFile.model_validate_json(raw)
    except OSError as exc:
        raise ConfigError(f"access rule file {path} is unreadable: {exc}") from exc
    except DuplicateKey as exc:
        raise ConfigError(f"access rule file {path} gives the key {str(exc)[:80]!r} twice in one object: which one "
                          "holds is not said, so the file is refused") from exc
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'the file'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"access rule file {path} is not a rule file ({problems[:600]}); expected "
                          '{"rules": [{"pattern": "...", "groups": ["..."]}], "default": ["..."]}') from exc
    rules = tuple((normalise_pattern(r.pattern), tuple(r.groups)) for r in data.rules)
    return AccessRules(rules, tuple(data.default if data.default is not None else check_groups(default)))


def rules_refusal(recorded: dict[str, str] | None, rules: AccessRules, changed: bool) -> str | None:
    """Why a run must not use ``rules`` on an index whose groups were decided by ``recorded``, or None. Other
    rules (or none, say a cron job without the setting) would silently re-decide every document's groups:
    only ``--access-rules-changed`` says that is meant."""
    if recorded is None or changed or recorded.get("digest") == rules.digest():
        return None
    return (f"this index's access groups were decided by other rules ({recorded.get('summary', '?')}, digest "
            f"{recorded.get('digest')}); this run has {rules.describe()} (digest {rules.digest()}). Set "
            "STROIDOK_INGEST_ACCESS_RULES to the same rule file, or pass --access-rules-changed to re-decide "
            "every document's groups by these rules")
