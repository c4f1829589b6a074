#!/usr/bin/env python3
"""Medians of the worker's per-evaluation phase times (KFORGE_WORKER_VERBOSE lines) in one log."""
import re
import statistics
import sys

fields = {}
for line in open(sys.argv[1], errors="replace"):
    body = line.split(": ", 2)[-1]
    for name, value in re.findall(r"([a-z][a-z-]*) (\d+(?:\.\d+)?)", body):
        fields.setdefault(name, []).append(float(value))
print(", ".join(f"{k} {statistics.median(v):.0f}" for k, v in fields.items() if v))
