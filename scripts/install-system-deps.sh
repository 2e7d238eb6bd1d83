#!/usr/bin/env bash
# Debian packages a fresh machine lacks. Idempotent: installs only what is missing; needs root for apt.
set -euo pipefail
needed=(maven tesseract-ocr tesseract-ocr-rus poppler-utils pandoc fonts-dejavu-core redis-server python3-venv)
missing=()
for pkg in "${needed[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${missing[*]} (run as root or install them: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
