"""``stroidok eval`` needs the eval extra (ir-measures): without it, one clear CONFIG_ERROR naming the extra,
not an import traceback; the product's own commands never import it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evaluation.cli import require_eval_extra
from service.errors import ConfigError


def test_eval_without_its_extra_says_which_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ir_measures", None)  # an import of it fails, as where it is not installed
    with pytest.raises(ConfigError, match=r"stroidok\[eval\]"):
        require_eval_extra()


def test_the_product_runs_without_the_eval_extra() -> None:
    code = ("import sys; sys.modules['ir_measures'] = None; sys.modules['reportlab'] = None\n"
            "import service.cli.commands, service.server.tools, ingest.pipeline, ingest.cli\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
