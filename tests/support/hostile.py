"""A tree of hostile and broken files, one per kind, with what must become of each. Used by
tests/reliability/test_hostile_files.py and by benchmarks/chaos.py."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.documents import GOST_PDF

GOOD = "Бетонная смесь укладывается слоями толщиной не более 40 см с уплотнением глубинными вибраторами."
CP1251_NAME = "отчёт по бетону.txt".encode("cp1251")
W_NS = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
BILLION_LAUGHS = (b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">'
                  b']>\n<w:document ' + W_NS
                  + b'><w:body><w:p><w:r><w:t>&lol2;</w:t></w:r></w:p></w:body></w:document>')
XXE = (b'<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<w:document ' + W_NS
       + b'><w:body><w:p><w:r><w:t>&xxe;</w:t></w:r></w:p></w:body></w:document>')
PADDED_DTD = b'<?xml version="1.0"?>\n' + b"<!-- " + b" " * 20000 + b" -->\n" + BILLION_LAUGHS.split(b"\n", 1)[1]


def docx_with_part(path: Path, part: str, xml: bytes) -> None:
    import docx

    base = path.with_name(path.name + ".base")
    docx.Document().save(str(base))
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            out.writestr(item, xml if item.filename == part else source.read(item.filename))
    base.unlink()


def zip_bomb(path: Path, member: str, megabytes: int = 600) -> None:
    """A zip whose one member expands to ``megabytes`` of zeros (a few hundred KB on disk)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out, out.open(member, "w", force_zip64=True) as part:
        block = b"0" * (1 << 20)
        for _ in range(megabytes):
            part.write(block)


def xlsx_with_dtd(path: Path) -> None:
    from openpyxl import Workbook

    base = path.with_name(path.name + ".base")
    Workbook().save(base)
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/workbook.xml":
                body = data.split(b"?>", 1)[1] if data.startswith(b"<?xml") else data
                data = b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n' + body
            out.writestr(item, data)
    base.unlink()


def build(root: Path, outside: Path, big_mb: int = 5) -> dict[str, str]:
    """Write every kind under ``root`` (``outside`` holds what links point to). Returns name → expectation:
    ``indexed``, ``skipped``, or a phrase the failure reason must contain."""
    root.mkdir(parents=True)
    outside.mkdir(parents=True, exist_ok=True)
    kinds: dict[str, tuple[Callable[[Path], object], str]] = {
        "good.txt": (lambda p: p.write_text(GOOD, encoding="utf-8"), "indexed"),
        "truncated.pdf": (lambda p: p.write_bytes(GOST_PDF.read_bytes()[:5000]), "not a readable PDF"),
        "zero.pdf": (lambda p: p.write_bytes(b""), "not a readable PDF"),
        "docx-named.pdf": (lambda p: docx_with_part(p, "x", b""), "not a readable PDF"),
        "empty.txt": (lambda p: p.write_bytes(b""), "no text found"),
        "whitespace.txt": (lambda p: p.write_text(" \n\t\n " * 100), "no text found"),
        "garbage.docx": (lambda p: p.write_bytes(os.urandom(4096)), "not a ZIP archive"),
        "pdf-named.docx": (lambda p: p.write_bytes(GOST_PDF.read_bytes()[:20000]), "not a ZIP archive"),
        "bomb.docx": (lambda p: zip_bomb(p, "word/document.xml"), "zip bomb"),
        "bomb.xlsx": (lambda p: zip_bomb(p, "xl/worksheets/sheet1.xml"), "zip bomb"),
        "laughs.docx": (lambda p: docx_with_part(p, "word/document.xml", BILLION_LAUGHS), "DTD"),
        "xxe.docx": (lambda p: docx_with_part(p, "word/document.xml", XXE), "DTD"),
        "padded-dtd.docx": (lambda p: docx_with_part(p, "word/document.xml", PADDED_DTD), "DTD"),
        "xxe.xlsx": (xlsx_with_dtd, "DTD"),
        "escapes.txt": (lambda p: p.write_text("\x1b[31mКРАСНЫЙ\x1b[0m текст про \x07арматуру\x00 и \x1b]0;t\x07бетон",
                                               encoding="utf-8"), "indexed"),
        "binary.txt": (lambda p: p.write_bytes(bytes(range(256)) * 64), "indexed|no text found|encoding"),
        "utf16.txt": (lambda p: p.write_text("Арматура класса А500С, шаг 200 мм.", encoding="utf-16"), "indexed"),
        "cp1251.txt": (lambda p: p.write_bytes("Гидроизоляция фундаментов битумной мастикой.".encode("cp1251")),
                       "indexed"),
        "one-line.txt": (lambda p: p.write_text("бетон " * (big_mb * 1024 * 1024 // 12), encoding="utf-8"), "indexed"),
        "script.html": (lambda p: p.write_text("<html><script>alert(1)</script><p>Кладка из кирпича М150.</p></html>",
                                               encoding="utf-8"), "indexed"),
    }
    expected = {}
    for name, (make, want) in kinds.items():
        make(root / name)
        expected[name] = want
    with open(os.path.join(os.fsencode(root), CP1251_NAME), "wb") as f:
        f.write("Защитный слой бетона для арматуры фундаментов — не менее 40 мм.".encode("cp1251"))
    expected["отчёт по бетону.txt"] = "indexed"
    (root / "evil\x1b[31m\nname.txt").write_text("Имя файла с управляющими символами.", encoding="utf-8")
    expected["evil\\x1b[31m\\x0aname.txt"] = "indexed"
    (root / "locked.txt").write_text("закрытый текст", encoding="utf-8")
    (root / "locked.txt").chmod(0)
    expected["locked.txt"] = "permission denied"
    (root / "closed-folder").mkdir()
    (root / "closed-folder" / "inside.txt").write_text("текст в закрытой папке", encoding="utf-8")
    (root / "closed-folder").chmod(0)
    expected["closed-folder"] = "permission denied"
    (outside / "secret.txt").write_text("пароль администратора базы", encoding="utf-8")
    (root / "passwd.txt").symlink_to(outside / "secret.txt")
    expected["passwd.txt"] = "outside the ingested folders"
    (root / "good-link.txt").symlink_to(root / "good.txt")
    expected["good-link.txt"] = "skipped"
    (root / "dangling.txt").symlink_to(root / "nowhere.txt")
    expected["dangling.txt"] = "no such file"
    (root / "loop-a.txt").symlink_to(root / "loop-b.txt")
    (root / "loop-b.txt").symlink_to(root / "loop-a.txt")
    expected["loop-a.txt"] = expected["loop-b.txt"] = "symbolic links"
    os.mkfifo(root / "pipe.txt")
    expected["pipe.txt"] = "not a regular file"
    deep = root.joinpath(*["уровень"] * 40)
    deep.mkdir(parents=True)
    (deep / "глубоко.txt").write_text("Документ на сороковом уровне вложенности папок.", encoding="utf-8")
    expected["глубоко.txt"] = "indexed"
    long_name = "д" * 120 + ".txt"  # 242 bytes in UTF-8: near the 255-byte limit
    (root / long_name).write_text("Файл с очень длинным именем.", encoding="utf-8")
    expected[long_name] = "indexed"
    return expected


def unlock(root: Path) -> None:
    """Make the tree removable again."""
    for path in (root / "closed-folder", root / "locked.txt"):
        if path.exists() or path.is_symlink():
            path.chmod(0o755)


def outcome_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def meets(outcome: dict[str, Any], want: str) -> bool:
    """``want``: ``indexed``, ``skipped``, or phrases (``a|b``) one of which the failure reason contains."""
    if want in ("indexed", "skipped"):
        return bool(outcome["status"] == want)
    return any(outcome["status"] == w or (outcome["status"] == "failed" and w.lower() in outcome["reason"].lower())
               for w in want.split("|"))
