"""Fetch the engine's three Maven Central artifacts and assemble a runnable OpenSearch from them.

The integ-test zip carries every module but no JDK and no plugins; the k-NN and neural-search plugin
zips are installed into it with the distribution's own ``opensearch-plugin``, k-NN first (neural-search
depends on it). Everything is cached under ``EngineSettings.home``: a second run downloads nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from service.engine.launcher.java import Jdk
from service.errors import ArtifactDownloadFailed, EngineAssemblyFailed
from service.settings import EngineSettings

_MARKER = ".stroidok-assembled.json"


@dataclass(frozen=True)
class Artifact:
    """One Maven coordinate and the plugin name it installs as (None for the distribution)."""

    group: str
    artifact: str
    version: str
    plugin: str | None = None

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}:zip"

    @property
    def filename(self) -> str:
        return f"{self.artifact}-{self.version}.zip"


def engine_artifacts(version: str) -> tuple[Artifact, Artifact, Artifact]:
    """Distribution, k-NN, neural-search, in install order. Plugins are versioned ``X.Y.Z.0``."""
    plugin_version = f"{version}.0"
    return (
        Artifact("org.opensearch.distribution.integ-test-zip", "opensearch", version),
        Artifact("org.opensearch.plugin", "opensearch-knn", plugin_version, plugin="opensearch-knn"),
        Artifact("org.opensearch.plugin", "neural-search", plugin_version, plugin="opensearch-neural-search"),
    )


def _is_valid_zip(path: Path) -> bool:
    return path.is_file() and zipfile.is_zipfile(path)


def fetch_artifact(artifact: Artifact, settings: EngineSettings) -> Path:
    """The cached zip of ``artifact``, downloaded with Maven when missing or corrupt."""
    target = settings.artifacts_dir / artifact.filename
    if _is_valid_zip(target):
        return target
    settings.artifacts_dir.mkdir(parents=True, exist_ok=True)
    if shutil.which(settings.maven) is None:
        raise ArtifactDownloadFailed(
            f"Maven ('{settings.maven}') is needed to fetch {artifact.coordinate} and was not found; "
            "install it (`apt-get install maven`) or run `make install`."
        )
    logger.info("downloading {} from Maven Central", artifact.coordinate)
    cmd = [settings.maven, "-B", "-q", "dependency:copy", f"-Dartifact={artifact.coordinate}",
           f"-DoutputDirectory={settings.artifacts_dir}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0 or not _is_valid_zip(target):
        tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
        target.unlink(missing_ok=True)
        raise ArtifactDownloadFailed(
            f"could not download {artifact.coordinate} with Maven (exit {done.returncode})",
            details={"command": " ".join(cmd), "output_tail": tail},
        )
    return target


def read_marker(install_dir: Path) -> dict[str, Any] | None:
    """What a finished assembly recorded, or None when the install is missing or half-done."""
    marker = install_dir / _MARKER
    if not marker.is_file():
        return None
    data: dict[str, Any] = json.loads(marker.read_text())
    return data


def _extract_distribution(zip_path: Path, install_dir: Path) -> None:
    staging = install_dir.with_name(install_dir.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(staging)
    (top,) = [p for p in staging.iterdir() if p.is_dir()]
    for script in (top / "bin").iterdir():
        script.chmod(0o755)
    shutil.rmtree(install_dir, ignore_errors=True)
    top.rename(install_dir)
    shutil.rmtree(staging, ignore_errors=True)


def _install_plugin(install_dir: Path, zip_path: Path, jdk: Jdk) -> None:
    env = {"PATH": "/usr/bin:/bin", "OPENSEARCH_JAVA_HOME": str(jdk.home)}
    cmd = [str(install_dir / "bin" / "opensearch-plugin"), "install", "--batch", zip_path.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise EngineAssemblyFailed(
            f"installing plugin {zip_path.name} failed (exit {done.returncode})",
            details={"output_tail": (done.stdout + done.stderr).strip().splitlines()[-15:]},
        )


def ensure_installed(settings: EngineSettings, jdk: Jdk) -> Path:
    """A runnable OpenSearch with k-NN and neural-search under ``settings.install_dir`` (cached)."""
    install_dir = settings.install_dir
    artifacts = engine_artifacts(settings.version)
    wanted = [a.plugin for a in artifacts if a.plugin]
    marker = read_marker(install_dir)
    if marker and marker.get("plugins") == wanted:
        return install_dir
    zips = [fetch_artifact(a, settings) for a in artifacts]
    logger.info("assembling OpenSearch {} in {}", settings.version, install_dir)
    _extract_distribution(zips[0], install_dir)
    for artifact, zip_path in zip(artifacts[1:], zips[1:], strict=True):
        logger.info("installing plugin {}", artifact.plugin)
        _install_plugin(install_dir, zip_path, jdk)
    (install_dir / _MARKER).write_text(json.dumps({"version": settings.version, "plugins": wanted}))
    return install_dir
