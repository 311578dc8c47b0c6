#!/bin/sh
# Makes docs/timeline.png, the picture of the HTML timeline on the front
# page: runs the primes example instrumented, exports its dump with
# `instr-report --export html` and photographs the page in headless
# Chromium (Debian `chromium`).  Run after a build (scripts/demo.sh makes
# one); the numbers in the picture are those of this run on this machine.
#
#   scripts/screenshot-timeline.sh [BUILD_DIR] [OUT_PNG]
#   (defaults: build, docs/timeline.png)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
out=${2:-$src/docs/timeline.png}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
chromium=$(command -v chromium || command -v chromium-browser || :)
[ -n "$chromium" ] || { echo "screenshot-timeline.sh: no chromium (apt-get install chromium)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$build/examples/primes" >/dev/null
"$build/bin/instr-report" --export html -o primes.html primes.*.instr
# --no-sandbox: Chromium's sandbox refuses to start as root.
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --window-size=1400,400 --hide-scrollbars \
    --virtual-time-budget=5000 --screenshot="$out" "file://$work/primes.html" 2>/dev/null
[ -s "$out" ] || { echo "screenshot-timeline.sh: Chromium wrote no $out" >&2; exit 1; }
echo "$out"
