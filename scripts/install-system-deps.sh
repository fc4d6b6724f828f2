#!/usr/bin/env bash
# System packages icebook's tests need: a Java 17 runtime (Spark), Debian's Chromium (browser tests),
# Node.js (building the lake browser's JupyterLab extension) and npm (Azurite, the Azure Blob emulator).
# Installs only what is missing; needs root (or sudo) and apt-get.
set -euo pipefail
need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "icebook: please install: ${need[*]} (no apt-get on this machine)" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
echo "icebook: installing system packages: ${need[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
