#!/usr/bin/env python3
"""check-includes.py TOOLS_DIR - every #include "x.h" in tools/ names a
header of the file's own stage or of a stage below it (docs/ARCHITECTURE.md).

The stages, each with the stages it may include.  sample/ (the sampler's
perf ring and unwinder) sits on read/ only; cmd/ (the programs) may include
every stage.  A header that is not in tools/ (common/, the generated HTML
page) is not a stage's and is not checked.  A file outside every stage
folder fails too: each source belongs to one stage.

Exit 0 when every include follows the rule; else 1, one line per
offending include: the file, its line, the header and the two stages."""
import os
import re
import sys

BELOW = {
    "read": [],
    "model": ["read"],
    "views": ["read", "model"],
    "export": ["read", "model", "views"],
    "sample": ["read"],
    "cmd": ["read", "model", "views", "export", "sample"],
}
SOURCE = (".c", ".h", ".cc", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    tools = sys.argv[1]
    stage_of = {}  # header base name -> stage
    files = []     # (path relative to tools/, stage or None)
    for root, _, names in os.walk(tools):
        rel = os.path.relpath(root, tools)
        stage = rel.split(os.sep)[0] if rel != "." else None
        for n in sorted(names):
            if n.endswith(SOURCE):
                files.append((os.path.join(rel, n) if rel != "." else n, stage))
                if n.endswith(".h"):
                    stage_of[n] = stage
    bad = []
    for path, stage in sorted(files):
        if stage not in BELOW:
            bad.append("%s: not in a stage folder (%s)" % (path, " ".join(BELOW)))
            continue
        allowed = [stage] + BELOW[stage]
        with open(os.path.join(tools, path), encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = os.path.basename(m.group(1))
                to = stage_of.get(header, "")
                if header in stage_of and to not in allowed:
                    bad.append('%s:%d: includes "%s" of %s/, above %s/ (%s/ may include %s)'
                               % (path, no, m.group(1), to, stage, stage, ", ".join(x + "/" for x in allowed)))
    for b in bad:
        print(b)
    if not files:
        print("no sources under %s" % tools)
        return 1
    print("%d files; %d includes break the stage rule" % (len(files), len(bad)) if bad
          else "%d files follow the stage rule" % len(files))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
