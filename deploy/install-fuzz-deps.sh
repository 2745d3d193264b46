#!/usr/bin/env bash
# Installs what the libFuzzer build (tests/fuzz) needs on top of deploy/install-deps.sh:
# Debian 12's clang 14 and its compiler runtime (libFuzzer, AddressSanitizer, UBSan).
# Idempotent: packages already present are skipped.
set -euo pipefail

PACKAGES=(clang libclang-rt-14-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-fuzz-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-fuzz-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
