#!/bin/sh
# One command from a fresh clone to a full test run: installs what is
# missing, builds everything and runs every test CI gates on.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
cd build && ctest --output-on-failure -j"$(nproc)" -LE bench
