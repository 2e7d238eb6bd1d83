from __future__ import annotations

from pathlib import Path

import pytest

from service.engine.java import candidate_homes, find_jdk, parse_java_major
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


def test_find_jdk_lists_what_it_saw_when_nothing_fits(tmp_path: Path) -> None:
    old = fake_jdk(tmp_path / "old", "17.0.1")

    with pytest.raises(JavaNotFound) as caught:
        find_jdk([old], [tmp_path / "empty"])

    assert "Java 21 or newer" in caught.value.message
    assert caught.value.details["seen"] == [f"{old.resolve()} (Java 17)"]
    assert caught.value.code == "JAVA_NOT_FOUND"
