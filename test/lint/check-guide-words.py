#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-guide-words.py GUIDE DIR...: every text that docs/GUIDE.md quotes in its sections
# "Firewall", "Rolling out to a fleet" and "Troubleshooting" ("..." in the text and the tables)
# is what the daemon says: each piece of a quote between placeholders (S, A, T, N, REASON,
# CAUSE, DATE, KEY, PORT, ...), sentence ends and semicolons is found in a string literal of the
# C sources in the DIRs (src/timesync, src/shared, tools; adjacent literals joined, printf
# conversions as gaps; a reason and the line it goes into are pieces apart), or is a text of
# libc (strerror) or of libssl's certificate verification, which the daemon passes on. A quote
# that the daemon no longer says fails, with the piece that is missing.
import errno
import os
import re
import sys

SECTIONS = ("Firewall", "Rolling out to a fleet", "Troubleshooting")
PLACEHOLDERS = {"S", "A", "T", "N", "M", "X", "REASON", "CAUSE", "DATE", "KEY", "PORT", "NAME", "ERROR", "TIME",
                "ADDRESS", "OFFSET", "..."}
# X509_verify_cert_error_string() texts that the guide quotes (libssl's words, not ours).
LIBSSL = ("hostname mismatch", "certificate has expired", "certificate is not yet valid",
          "unable to get local issuer certificate", "self-signed certificate in certificate chain")

LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
GLUE = re.compile(r'^\s*(?:PRI[a-zA-Z0-9]+\s*)?$')
CONVERSION = re.compile(r"%[-+ #0]*(?:\*|[0-9]+)?(?:\.(?:\*|[0-9]+))?(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcsp%m]")


def c_literals(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"^\s*//.*$", " ", text, flags=re.M)
    out, prev_end, current = [], None, None
    for m in LITERAL.finditer(text):
        body = m.group(1).replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        if current is not None and GLUE.match(text[prev_end:m.start()]):
            glue = text[prev_end:m.start()].strip()
            current += ("%d" if glue else "") + body
        else:
            if current is not None:
                out.append(current)
            current = body
        prev_end = m.end()
    if current is not None:
        out.append(current)
    return [CONVERSION.sub("\x01", s) for s in out]


def guide_quotes(path):
    """The quotes of each paragraph, list item and table row of the sections (a quote may span
    lines within one)."""
    blocks, section, cur = [], None, []
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            blocks.append((section, " ".join(cur)))
            section, cur = line[3:].strip(), []
            continue
        if not line.strip() or line.lstrip().startswith(("- ", "|", "```")):
            blocks.append((section, " ".join(cur)))
            cur = []
        if line.strip():
            cur.append(line.strip())
    blocks.append((section, " ".join(cur)))
    quotes = []
    for section, text in blocks:
        if section not in SECTIONS:
            continue
        # Code spans are commands and file names, not the daemon's words.
        text = re.sub(r"`[^`]*`", " ", text)
        quotes += [(section, q) for q in re.findall(r'"([^"]+)"', text)]
    return quotes


def pieces(quote):
    words = re.split(r"(\s+)", quote)
    parts, cur = [], ""
    for w in words:
        bare = w.strip(".,:;()")
        if w.strip() and (w.strip() in PLACEHOLDERS or (bare in PLACEHOLDERS and bare != "")):
            parts.append(cur)
            cur = ""
        else:
            cur += w
    parts.append(cur)
    out = []
    for p in parts:
        for s in re.split(r"(?<=[.?;])\s+", p):
            s = s.strip().strip(".,:;").strip()
            if len(s) >= 3:
                out.append(s)
    return out


def fits(p, literal):
    """p is what literal (conversions as \x01) prints for some values: it starts inside one fixed
    part, ends inside a later one, and at least half of p is fixed text."""
    segs = literal.split("\x01")
    if len(segs) < 2 or not any(len(w) >= 4 and w in literal for w in p.split()):
        return False
    for i in range(len(segs) - 1):
        s = segs[i]
        for k in range(len(s) + 1):
            suf = s[k:]
            if not p.startswith(suf):
                continue
            rest = p[len(suf):]
            for j in range(i + 1, len(segs)):
                mid = "".join("(.*?)" + re.escape(segs[t]) for t in range(i + 1, j))
                end = "(?:" + "|".join(re.escape(segs[j][:m]) for m in range(len(segs[j]), -1, -1)) + ")"
                m = re.fullmatch(mid + "(.*?)" + end, rest, re.S)
                if m and len(p) - sum(len(g) for g in m.groups()) >= len(p) / 2:
                    return True
    return False


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: check-guide-words.py GUIDE DIR...")
    literals = []
    for d in sys.argv[2:]:
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                literals += c_literals(os.path.join(d, name))
    external = [os.strerror(e) for e in errno.errorcode] + list(LIBSSL)
    quotes = guide_quotes(sys.argv[1])
    if len(quotes) < 5:
        sys.exit(f"only {len(quotes)} quotes found in {sys.argv[1]}: the sections moved?")
    bad = 0
    for section, q in quotes:
        for p in pieces(q):
            if any(p in s for s in literals) or any(p in e for e in external if len(e) > 3):
                continue
            if any(fits(p, s) for s in literals if "\x01" in s):
                continue
            print(f'{sys.argv[1]}, section {section}: "{q}": the daemon never says "{p}"')
            bad += 1
    print(f"{len(quotes)} quotes checked, {bad} pieces not found")
    sys.exit(1 if bad else 0)


main()
