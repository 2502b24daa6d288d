#!/usr/bin/env python3
"""The layout checker itself (scripts/check_layers.py): how it measures functions, and what it
reports on a small tree with known breaks and near-misses. Run by ctest (label layout).

    test_check_layers.py SOURCE_ROOT

Each case prints one line; exits 1 if any case failed (its line says what differed), 0 otherwise.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(sys.argv[1] if len(sys.argv) > 1 else "..", "scripts"))
import check_layers  # noqa: E402


def function(name, lines, inner=None, params=""):
    """A function named name that runs exactly lines lines, signature to closing brace: whole
    copies of inner (a list of lines) as its body, padded with statements."""
    inner = inner or ["  x += 1;"]
    body = inner * ((lines - 3) // len(inner))
    body += ["  x += 1;"] * (lines - 3 - len(body))
    return [f"int {name}({params}) {{", "  int x = 0;"] + body + ["}"]


LAMBDA = ["  auto f = [&](int y) {", "    return y + 1;", "  };", "  x = f(x);"]
TRICKY = ['  const char* s = "}{ { // not a brace";', "  /* } */ x += '}';", "  // }}}", "  x += 1'000'000;",
          "  x += '{' + 0xFF'FF;", '  const char* r = R"x(}"{)x";']


def ifdef_function(name, windows_lines, posix_lines):
    """name defined once, its body in #ifdef _WIN32 / #else branches: windows_lines + posix_lines
    lines in all, since both branches lie between its braces."""
    win = function("unused", windows_lines)[2:-1]
    posix = function("unused", posix_lines)[2:-1]
    return [f"int {name}() {{", "  int x = 0;", "#ifdef _WIN32"] + win + ["#else"] + posix + ["#endif", "}"]


# (what it shows, source lines, expected (first line, length, name) of each function over 100)
MEASURE_CASES = [
    ("101 lines is over", function("f", 101), [(1, 101, "f")]),
    ("100 lines is not", function("f", 100), []),
    ("lambdas count with their function", function("f", 101, LAMBDA), [(1, 101, "f")]),
    ("lambdas alone are not functions", function("f", 100, LAMBDA), []),
    ("braces in strings and comments", function("f", 101, TRICKY), [(1, 101, "f")]),
    ("a brace default argument", function("f", 101, params="Opts o = {}"), [(1, 101, "f")]),
    ("namespace and class bodies are entered",
     ["namespace a {", "struct S {", " public:"] + ["  " + s for s in function("g", 101)] + ["};", "}"],
     [(4, 101, "g")]),
    ("extern \"C\" bodies are entered", ['extern "C" {'] + function("c_api", 101) + ["}"], [(2, 101, "c_api")]),
    ("both branches lie inside the function", ifdef_function("p", 60, 41), [(1, 101, "p")]),
    ("both branches, 100 lines in all", ifdef_function("p", 50, 50), []),
    ("a function only in the #ifdef branch", ["#ifdef _WIN32"] + function("w", 101) + ["#endif"],
     [(2, 101, "w")]),
    ("a function only in the #else branch", ["#ifdef _WIN32", "#else"] + function("w", 101) + ["#endif"],
     [(3, 101, "w")]),
    ("an #elif branch is taken too", ["#if A"] + function("m", 20) + ["#elif B"] + function("m", 101)
     + ["#else"] + function("m", 20) + ["#endif"], [(23, 101, "m")]),
    ("a signature per branch, one body", ["#ifdef _WIN32", "int s(int a) {", "#else", "int s(long a) {", "#endif"]
     + ["  a += 1;"] * 97 + ["}"], [(2, 102, "s")]),
    ("an #if 0 block is never taken", ["#if 0"] + function("dead", 150) + ["#endif"], []),
    ("a function per branch, each under", ["#ifdef _WIN32"] + function("q", 100) + ["#else"]
     + function("q", 90) + ["#endif"], []),
    ("a comment above is not counted", ["// one", "// two"] + function("f", 100), []),
    ("a table is not a function", ["const int t[] = {"] + ["  1,"] * 150 + ["};"], []),
]


def check_measure(name, lines, expected):
    got = [(first, length, fn) for length, first, fn in check_layers.functions("\n".join(lines) + "\n")
           if length > check_layers.FUNCTION_LIMIT]
    return None if got == expected else f"expected {expected}, got {got}"


# A tree with known breaks (the expected lines) and near-misses that must stay silent.
TREE = {
    "core/src/sizes.cpp": function("too_long", 101) + function("just_fits", 100),
    "core/src/uses.cpp": ['#include "wheelfit/t/t.hpp"'],
    "transports/include/wheelfit/t/t.hpp": ["#pragma once"],
    "core/src/api/alpha.cpp": ['#include "alpha.hpp"', '#include "beta.hpp"', '#include "../api/beta.hpp"',
                                  '#include "other/beta.hpp"'],
    "core/src/api/alpha.hpp": ["#pragma once"],
    "core/src/api/beta.cpp": ['#include "beta.hpp"', '#include "wheelfit/x.hpp"'],
    "core/src/api/beta.hpp": ["#pragma once"],
    "core/src/other/beta.hpp": ["#pragma once"],
    "core/src/mirror/publish.cpp": function("publish", 120),
    "core/src/api/fleet.cpp": ['#include "common.hpp"'] + function("read_index_part", 50),
    "core/src/api/common.hpp": ["#pragma once"],
    "tests/test_long.cpp": function("test_only", 150),
    "apps/tool/main.cpp": ["#ifdef _WIN32"] + function("main", 120) + ["#else"] + function("main", 20) + ["#endif"],
}
EXPECTED = [
    "core/src/uses.cpp:1: core/ includes wheelfit/t/t.hpp of transports/",
    "core/src/sizes.cpp:1: too_long is 101 lines (limit 100)",
    "apps/tool/main.cpp:2: main is 120 lines (limit 100)",
    "core/src/api/alpha.cpp:2: includes beta.hpp, another façade file's private header",
    "core/src/api/alpha.cpp:3: includes beta.hpp, another façade file's private header",
    "core/src/mirror/publish.cpp:1: publish is 120 lines (limit 100)",
    "core/src/api/fleet.cpp:1: includes common.hpp, another façade file's private header",
]


def check_tree():
    with tempfile.TemporaryDirectory() as root:
        for path, lines in TREE.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
        script = os.path.join(os.path.dirname(check_layers.__file__), "check_layers.py")
        run = subprocess.run([sys.executable, script, root], capture_output=True, text=True)
        breaks = [line for line in run.stdout.splitlines() if ": " in line and " includes: " not in line]
        if run.returncode != 1:
            return f"exit {run.returncode}, expected 1"
        return None if sorted(breaks) == sorted(EXPECTED) else f"expected {EXPECTED}, got {breaks}"


def check_no_facade():
    """A core without the façade's folder (renamed, FACADE not updated) is a break, not a pass."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "core", "src", "util"))
        r = subprocess.run([sys.executable, check_layers.__file__, root], capture_output=True, text=True)
        if r.returncode != 1 or "the façade's folder is missing" not in r.stdout:
            return f"exit {r.returncode}, output {r.stdout!r}"
    return ""


def main() -> int:
    failed = 0
    problem = check_no_facade()
    print(f"{'FAIL' if problem else 'ok'}: a core without the façade's folder{': ' + problem if problem else ''}")
    failed += bool(problem)
    for name, lines, expected in MEASURE_CASES:
        problem = check_measure(name, lines, expected)
        print(f"{'FAIL' if problem else 'ok'}: {name}{': ' + problem if problem else ''}")
        failed += bool(problem)
    problem = check_tree()
    print(f"{'FAIL' if problem else 'ok'}: a tree with known breaks{': ' + problem if problem else ''}")
    failed += bool(problem)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
