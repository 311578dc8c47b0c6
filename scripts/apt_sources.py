#!/usr/bin/env python3
"""apt_sources.py - the package archives this machine's apt is configured
with, so that the scripts fetching Debian sources or a Debian system use
the same ones (a mirror, a proxy, a snapshot) and name no server of their
own.

Reads /etc/apt/sources.list and /etc/apt/sources.list.d/*.list (one-line
form) and *.sources (deb822 form, `Enabled: no` stanzas skipped); files
with any other ending (e.g. renamed to disable them) are skipped, as apt
does.

    apt_sources.py --deb-src   every `deb` entry again as a `deb-src` line
                               (for a private sources.list; apt-get source)
    apt_sources.py --mirror    the URI of the first entry with a plain
                               release suite (no -updates, -security or
                               /updates): a Debian archive for debootstrap
Exit 1 with a message when apt has no such entry."""
import glob
import os
import sys

ETC = "/etc/apt"


def _one_line(path):
    """Entries of a one-line sources.list file."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words or words[0] != "deb":
                continue
            words = words[1:]
            opts = []
            if words and words[0].startswith("["):
                while words:
                    w = words.pop(0)
                    opts.append(w.strip("[]"))
                    if w.endswith("]"):
                        break
                opts = [o for o in opts if o]
            if len(words) >= 2:
                out.append({"uri": words[0], "suites": [words[1]], "components": words[2:], "options": opts})
    return out


def _deb822(path):
    """Entries of a deb822 .sources file."""
    out, stanza, key = [], {}, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines() + [""]
    for line in lines:
        if line.startswith("#"):
            continue
        if not line.strip():
            if stanza and "deb" in stanza.get("types", "").split() and stanza.get("enabled", "yes") != "no":
                opts = ["signed-by=" + stanza["signed-by"]] if "signed-by" in stanza and "\n" not in stanza["signed-by"] else []
                for uri in stanza.get("uris", "").split():
                    out.append({"uri": uri, "suites": stanza.get("suites", "").split(),
                                "components": stanza.get("components", "").split(), "options": opts})
            stanza, key = {}, None
        elif line[0] in " \t" and key:
            stanza[key] += "\n" + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            key = key.strip().lower()
            stanza[key] = value.strip()
    return out


def entries(etc=ETC):
    """Every enabled `deb` entry: dicts of uri, suites, components, options."""
    out = []
    main = os.path.join(etc, "sources.list")
    if os.path.exists(main):
        out += _one_line(main)
    for path in sorted(glob.glob(os.path.join(etc, "sources.list.d", "*"))):
        if path.endswith(".list"):
            out += _one_line(path)
        elif path.endswith(".sources"):
            out += _deb822(path)
    return out


def deb_src_lines(etc=ETC):
    """The `deb` entries as one-line `deb-src` entries, newline-terminated."""
    lines = []
    for e in entries(etc):
        opts = "[%s] " % " ".join(e["options"]) if e["options"] else ""
        for suite in e["suites"]:
            lines.append("deb-src %s%s %s %s\n" % (opts, e["uri"], suite, " ".join(e["components"])))
    return "".join(lines)


def mirror(etc=ETC):
    """The URI of the first entry serving a release itself, or None."""
    for e in entries(etc):
        if any("/" not in s and not s.endswith(("-updates", "-security", "-backports")) for s in e["suites"]):
            return e["uri"]
    return None


def main():
    what = sys.argv[1] if len(sys.argv) == 2 else ""
    if what == "--deb-src":
        text = deb_src_lines()
    elif what == "--mirror":
        m = mirror()
        text = m + "\n" if m else ""
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if not text:
        print("apt_sources.py: no deb entry in %s/sources.list or %s/sources.list.d" % (ETC, ETC), file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
