#!/usr/bin/env python3
"""Checks that folders include one way (docs/architecture.md, "The one door").

Each top folder may include the public headers (include/wheelfit/...) of the folders it builds on,
never of one above it: the core includes none of the others, policies/, transports/ and backends/
include only the core, capi/ and apps/ include the core, policies/ and transports/. Prints every
include that breaks this (file:line and the header), and any folder cycle; exit 1 if there is one.

    scripts/check_layers.py [ROOT]
"""
import os
import re
import sys

ALLOWED = {
    "core": set(),
    "policies": {"core"},
    "transports": {"core"},
    "backends": {"core"},
    "capi": {"core", "policies", "transports"},
    "apps": {"core", "policies", "transports"},
}
SOURCES = (".cpp", ".hpp", ".h", ".c")
INCLUDE = re.compile(r'\s*#\s*include\s*[<"](wheelfit/[^">]+)[">]')


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    owner = {}  # "wheelfit/x/y.hpp" -> top folder
    for top in ALLOWED:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                m = re.search(r"/include/(wheelfit/.+)$", os.path.join(folder, name).replace(os.sep, "/"))
                if m:
                    owner[m.group(1)] = top
    bad, edges = [], {}
    for top, allowed in ALLOWED.items():
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        target = owner.get(m.group(1)) if m else None
                        if target is None or target == top:
                            continue
                        edges.setdefault(top, set()).add(target)
                        if target not in allowed:
                            rel = os.path.relpath(path, root)
                            bad.append(f"{rel}:{number}: {top}/ includes {m.group(1)} of {target}/")
    cycles = sorted(f"{a}/ <-> {b}/" for a in edges for b in edges[a] if a < b and a in edges.get(b, set()))
    for line in bad + [f"folder cycle: {c}" for c in cycles]:
        print(line)
    for top in ALLOWED:
        print(f"{top}/ includes: {', '.join(sorted(edges.get(top, ()))) or 'nothing of the others'}")
    return 1 if bad or cycles else 0


if __name__ == "__main__":
    sys.exit(main())
