#!/bin/sh
# report-calls.sh INSTR-REPORT DUMP FUNCTION: the calls of FUNCTION in the
# functions view (CSV, columns found by name), or nothing if it is absent.
set -eu
"$1" --format csv "$2" | awk -F, -v fn="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["function"] == fn { print $col["calls"] }'
