#!/usr/bin/env bash
# Debian's Chromium, which the end-to-end suite drives headless through the
# DevTools protocol (chromedp) to test kubectl kudo dashboard in a real
# browser; installed with apt-get when missing (the machine's only source
# of a browser: no download site is reachable).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [[ $(id -u) != 0 ]]; then
  echo "the dashboard's browser test needs Debian's chromium: apt-get install chromium (as root)" >&2
  exit 1
fi
echo "installing Debian's chromium for the dashboard's browser test" >&2
log=$(mktemp)
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "apt-get could not install chromium" >&2
  exit 1
fi
rm -f "$log"
