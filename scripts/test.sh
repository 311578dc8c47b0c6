#!/bin/sh
# One command from a fresh clone to a full test run: installs what is
# missing, builds everything and runs every test CI gates on.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
# The profiles the reports keep (tools/model/profile-cache.h) go in the
# build tree, not the user's ~/.cache.
# Label aarch64 (a cross build and programs under qemu, a few minutes) runs
# in scripts/ci-extra.sh.
cd build && INSTR_REPORT_CACHE="$PWD/report-cache" ctest --output-on-failure -j"$(nproc)" -LE 'bench|aarch64'
