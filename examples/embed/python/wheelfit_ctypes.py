#!/usr/bin/env python3
"""wheelfit's C API (libwheelfit.so, wheelfit/wheelfit.h) from Python with ctypes alone.

    python3 wheelfit_ctypes.py --lib /usr/local/lib/libwheelfit.so.0 [--call resolve|explain|detect] request.json

prints the result object (what `wheelfit resolve --json`, `explain --json`, `detect --json` or `doctor --json`
prints) and exits with wheelfit's exit code. A request is one JSON object: {"configs": [...]} or {"envs": [{"name", "python",
"packages"}]}, plus "machine" (profile keys), "index", "backend", ... (see wheelfit.h).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys


class Wheelfit:
    """A thin binding: JSON in, (exit code, JSON object) out."""

    def __init__(self, path: str) -> None:
        self._lib = ctypes.CDLL(path)
        self._lib.wheelfit_version.restype = ctypes.c_char_p
        self._lib.wheelfit_version.argtypes = []
        for call in (self._lib.wheelfit_resolve_json, self._lib.wheelfit_explain_json, self._lib.wheelfit_detect_json,
                     self._lib.wheelfit_doctor_json):
            call.restype = ctypes.c_int
            call.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        self._lib.wheelfit_free.restype = None
        self._lib.wheelfit_free.argtypes = [ctypes.c_void_p]

    def version(self) -> str:
        return self._lib.wheelfit_version().decode()

    def resolve(self, request: dict) -> tuple[int, dict]:
        return self._call(self._lib.wheelfit_resolve_json, request)

    def explain(self, request: dict) -> tuple[int, dict]:
        return self._call(self._lib.wheelfit_explain_json, request)

    def detect(self, request: dict | None = None) -> tuple[int, dict]:
        return self._call(self._lib.wheelfit_detect_json, request or {})

    def doctor(self, request: dict | None = None) -> tuple[int, dict]:
        return self._call(self._lib.wheelfit_doctor_json, request or {})

    def _call(self, call, request: dict) -> tuple[int, dict]:
        out = ctypes.c_void_p()
        code = call(json.dumps(request).encode(), ctypes.byref(out))
        if not out.value:
            raise MemoryError("wheelfit returned no result (out of memory)")
        try:
            text = ctypes.string_at(out.value).decode()
        finally:
            self._lib.wheelfit_free(out)
        return code, json.loads(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="path of libwheelfit.so")
    ap.add_argument("--call", choices=("resolve", "explain", "detect", "doctor"), default="resolve")
    ap.add_argument("request", help="a JSON request file, or - for standard input")
    args = ap.parse_args()
    text = sys.stdin.read() if args.request == "-" else open(args.request, encoding="utf-8").read()
    code, result = getattr(Wheelfit(args.lib), args.call)(json.loads(text))
    print(json.dumps(result, indent=2))
    return code


if __name__ == "__main__":
    sys.exit(main())
