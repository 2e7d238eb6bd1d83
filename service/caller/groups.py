"""Access-group names: one rule wherever a name enters (tokens, settings, rule files).

A group name is a word — letters, digits, ``_``, ``.``, ``-``, up to 64 characters, starting with a letter or
digit — so a name cannot carry a separator (``"a,b"``) that would make two different lists of groups look alike
in a cache key, a log entry or an engine filter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator

GROUP_RE = re.compile(r"^[^\W_][\w.\-]{0,63}$")


def check_groups(groups: Iterable[str]) -> list[str]:
    """``groups`` as given when every name is valid; ``ValueError`` naming the first that is not."""
    if isinstance(groups, str):
        raise ValueError(f"access groups must be a list of names, not the text {groups!r}")
    names = list(groups)
    for name in names:
        if not isinstance(name, str) or not GROUP_RE.match(name):
            raise ValueError(f"invalid access group name {name!r}: letters, digits, '_', '.', '-' (up to 64), "
                             "starting with a letter or digit")
    return names


def _check_token_groups(tokens: dict[str, list[str]]) -> dict[str, list[str]]:
    for groups in tokens.values():
        check_groups(groups)
    return tokens


#: a settings field holding group names
GroupNames = Annotated[list[str], AfterValidator(check_groups)]
#: a settings field mapping bearer tokens to group names
TokenGroups = Annotated[dict[str, list[str]], AfterValidator(_check_token_groups)]
