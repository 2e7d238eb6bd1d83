"""Access-group names: one rule wherever a name enters (tokens, settings, rule files, an identity provider's claim).

A group name is a word — letters, digits, ``_``, ``.``, ``-``, up to 64 characters, starting with a letter or
digit — so a name cannot carry a separator (``"a,b"``) that would make two different lists of groups look alike
in a cache key, a log entry or an engine filter. The whole name must be such a word (``"legal\\n"`` is not), it is
taken in Unicode NFC (an NFD ``отдел`` and an NFC one are the same group), and its letters come from one script:
``lеgal`` with a Cyrillic ``е`` is refused rather than made a second group that looks like ``legal``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator

GROUP_RE = re.compile(r"[^\W_][\w.\-]{0,63}")
#: the most groups a caller, a token or a rule holds, and the bytes of their names together: a caller's groups go
#: into every engine request (the access filter, the suggester's collate script), so they are bounded before any
MAX_GROUPS = 256
MAX_GROUP_BYTES = 16 * 1024


def scripts(name: str) -> set[str]:
    """The scripts of a name's letters (``LATIN``, ``CYRILLIC``, ...), by their Unicode names."""
    return {unicodedata.name(c, "?").split(" ", 1)[0] for c in name if c.isalpha()}


def check_group(name: object) -> str:
    """``name`` in NFC when it is a valid group name; ``ValueError`` saying why it is not."""
    normal = unicodedata.normalize("NFC", name) if isinstance(name, str) else None
    if normal is None or not GROUP_RE.fullmatch(normal):
        raise ValueError(f"invalid access group name {name!r}: letters, digits, '_', '.', '-' (up to 64), "
                         "starting with a letter or digit")
    if len(scripts(normal)) > 1:
        raise ValueError(f"invalid access group name {name!r}: letters of several scripts "
                         f"({', '.join(sorted(scripts(normal)))}) look like another name")
    return normal


def group_bytes(names: Iterable[str]) -> int:
    """The UTF-8 bytes of the names together."""
    return sum(len(name.encode("utf-8")) for name in names)


def check_groups(groups: Iterable[str]) -> list[str]:
    """``groups`` in NFC when every name is valid and they are within ``MAX_GROUPS`` and ``MAX_GROUP_BYTES``;
    ``ValueError`` naming the first that is not, or the bound passed."""
    if isinstance(groups, str):
        raise ValueError(f"access groups must be a list of names, not the text {groups!r}")
    names = list(groups)
    if len(names) > MAX_GROUPS:
        raise ValueError(f"{len(names)} access groups, over the {MAX_GROUPS} accepted")
    checked = [check_group(name) for name in names]
    if group_bytes(checked) > MAX_GROUP_BYTES:
        raise ValueError(f"access group names over {MAX_GROUP_BYTES} bytes together")
    return checked


def _check_token_groups(tokens: dict[str, list[str]]) -> dict[str, list[str]]:
    return {token: check_groups(groups) for token, groups in tokens.items()}


#: a settings field holding group names
GroupNames = Annotated[list[str], AfterValidator(check_groups)]
#: a settings field mapping bearer tokens to group names
TokenGroups = Annotated[dict[str, list[str]], AfterValidator(_check_token_groups)]
