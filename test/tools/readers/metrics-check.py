#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# metrics-check.py --openmetrics|--prometheus FILE: a strict reader of what timesync-sources
# writes, in the OpenMetrics text format 1.0 or the Prometheus text format 0.0.4. It refuses
# (exit 1, with the line) anything outside the subset the tool writes: metadata before samples
# and once per family, a UNIT that is the end of its family's name, counters whose samples end
# in _total and info families whose samples end in _info with the value 1 (OpenMetrics), sample
# names equal to their family (Prometheus), escaped label values, a sample twice, and anything
# after "# EOF", which ends an OpenMetrics text and only it. Where Debian's
# python3-prometheus-client is installed its parser of the format reads the text too. Prints
# the families as JSON: {family: {"type": T, "samples": [[name, {label: value}, value]]}}.
import json
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(?:\{(%s(?:,%s)*)\})? (-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)$" % (NAME, LABEL, LABEL))
SUFFIX = {"gauge": ("",), "counter": ("_total",), "info": ("_info",)}


def fail(msg):
    print("metrics-check: " + msg, file=sys.stderr)
    sys.exit(1)


def read(text, om):
    if om:
        if not text.endswith("# EOF\n"):
            fail("no # EOF at the end")
        text = text[:-len("# EOF\n")]
    lines = text.split("\n")
    if lines[-1] != "":
        fail("no newline at the end")
    families, current, seen = {}, None, set()
    for line in lines[:-1]:
        if line.startswith("#"):
            m = re.match(r"^# (TYPE|UNIT|HELP) (%s) (.+)$" % NAME, line)
            if not m or (m.group(1) == "UNIT" and not om):
                fail("bad metadata line: " + line)
            kind, fam, rest = m.groups()
            if fam != current:
                if fam in families:
                    fail("family twice: " + fam)
                families[fam] = {"type": None, "samples": []}
                current = fam
            f = families[fam]
            if kind == "TYPE":
                allowed = ("gauge", "counter", "info") if om else ("gauge", "counter")
                if f["type"] or f["samples"] or rest not in allowed:
                    fail("bad TYPE: " + line)
                f["type"] = rest
            elif kind == "UNIT" and not fam.endswith("_" + rest):
                fail("UNIT not the end of the name: " + line)
            continue
        m = SAMPLE.match(line)
        if not m:
            fail("bad sample line: " + repr(line))
        name, labels, value = m.groups()
        f = families.get(current)
        if f is None or not f["type"]:
            fail("sample without a TYPE: " + line)
        if om:
            if name not in [current + s for s in SUFFIX[f["type"]]]:
                fail("sample %s outside its family %s (%s)" % (name, current, f["type"]))
            if f["type"] == "info" and value != "1":
                fail("info sample not 1: " + line)
            if f["type"] == "counter" and float(value) < 0:
                fail("negative counter: " + line)
        elif name != current:
            fail("sample %s outside its family %s" % (name, current))
        labels = dict((k, v.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\"))
                      for k, v in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', labels or ""))
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            fail("sample twice: " + line)
        seen.add(key)
        f["samples"].append([name, labels, float(value)])
    return families


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("--openmetrics", "--prometheus"):
        fail("usage: metrics-check.py --openmetrics|--prometheus FILE")
    om = sys.argv[1] == "--openmetrics"
    text = open(sys.argv[2]).read()
    families = read(text, om)
    try:
        if om:
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
        else:
            from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        print("metrics-check: python3-prometheus-client not installed, only the strict reader", file=sys.stderr)
    else:
        try:
            n = len(list(text_string_to_metric_families(text)))
        except Exception as e:
            fail("prometheus_client refuses it: %r" % e)
        print("metrics-check: prometheus_client reads %d families" % n, file=sys.stderr)
    json.dump(families, sys.stdout)


main()
