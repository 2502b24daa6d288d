"""Writing a derived (generated, committed) data file, or checking that it is current."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_output_args(ap: argparse.ArgumentParser, default_out: Path) -> None:
    """--out FILE and --check, as every derive script takes them."""
    ap.add_argument("--out", type=Path, default=default_out, help="where to write (default: %(default)s)")
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing; exit 1 if it differs")


def write_or_check(out: Path, text: str, check: bool, regenerate: str, wrote: str) -> int:
    """--check: 0 when `out` holds `text`, else 1 naming the command that rewrites it.
    Otherwise writes `text` to `out` atomically (a temp file renamed over it), prints `wrote`
    and returns 0."""
    if check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != text:
            print(f"{out} is out of date: run {regenerate}", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    print(wrote)
    return 0
