#!/usr/bin/env python3
"""Checks the layout rules of docs/architecture.md ("The one door") and the size habit (issue 34).

1. Folders include one way: each top folder may include the public headers (include/wheelfit/...)
   of the folders it builds on, never of one above it: the core includes none of the others,
   policies/, transports/ and backends/ include only the core, capi/ and apps/ include the core,
   policies/ and transports/. Prints every include that breaks this, and any folder cycle.
2. No product function (core/, transports/, policies/, backends/, capi/, apps/) runs over 100
   lines, from its signature to its closing brace, comments and blank lines included; each branch
   of an #if is measured both ways (its first branch taken, then all of its conditions false).
3. A façade file (core/src/api/*.cpp) includes no other façade file's private header: only its
   own <stem>.hpp of the .hpp files in core/src/api/.

Prints `file:line: ...` for each break and exits 1 if there is one.

    scripts/check_layers.py [ROOT]
"""
import bisect
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
QUOTED_INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')
FUNCTION_LIMIT = 100
FACADE = os.path.join("core", "src", "api")


def source_files(root, top):
    for folder, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCES):
                yield os.path.join(folder, name)


def rel(path, root):
    return os.path.relpath(path, root).replace(os.sep, "/")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


# --- 1. folders include one way -------------------------------------------------------------------

def check_folders(root):
    """The include breaks and cycles between top folders, and each folder's edges."""
    owner = {}  # "wheelfit/x/y.hpp" -> top folder
    for top in ALLOWED:
        for path in source_files(root, top):
            m = re.search(r"/include/(wheelfit/.+)$", path.replace(os.sep, "/"))
            if m:
                owner[m.group(1)] = top
    bad, edges = [], {}
    for top, allowed in ALLOWED.items():
        for path in source_files(root, top):
            for number, line in enumerate(read(path).split("\n"), 1):
                m = INCLUDE.match(line)
                target = owner.get(m.group(1)) if m else None
                if target is None or target == top:
                    continue
                edges.setdefault(top, set()).add(target)
                if target not in allowed:
                    bad.append(f"{rel(path, root)}:{number}: {top}/ includes {m.group(1)} of {target}/")
    cycles = sorted(f"{a}/ <-> {b}/" for a in edges for b in edges[a] if a < b and a in edges.get(b, set()))
    return bad + [f"folder cycle: {c}" for c in cycles], edges


# --- 2. function sizes ----------------------------------------------------------------------------

def blank(text):
    """Keeps the newlines of text and turns everything else into spaces."""
    return re.sub(r"[^\n]", " ", text)


# Comments, raw strings, string literals and character literals: what strip_comments_and_strings
# blanks. A ' between two hex digits is a digit separator (1'000'000), not a literal.
LITERAL = re.compile(r"""
    //[^\n]*
  | /\*.*?(?:\*/|\Z)
  | (?<!\w)(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\(.*?(?:\)(?P=delim)"|\Z)
  | "(?:\\.|[^"\\\n])*(?:"|$)
  | (?:(?<![0-9A-Fa-f])'|'(?![0-9A-Fa-f]))(?:\\.|[^'\\\n])*(?:'|$)
""", re.S | re.M | re.X)


def strip_comments_and_strings(text):
    """Comments, string and character literals blanked (quotes kept), so braces in them don't count."""
    def keep_lines(m):
        token = m.group(0)
        if token[0] in "\"'" and len(token) >= 2 and token[-1] == token[0]:
            return token[0] + blank(token[1:-1]) + token[-1]
        return blank(token)
    return LITERAL.sub(keep_lines, text)


CONDITIONAL = re.compile(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)")


def conditional_chains(lines):
    """For each #if chain (keyed by its #if line): [its branch count, whether it has an #else,
    whether it is an #if 0]."""
    chains, stack = {}, []
    for number, line in enumerate(lines):
        m = CONDITIONAL.match(line)
        if not m:
            continue
        kind = m.group(1)
        if kind.startswith("if"):
            stack.append(number)
            chains[number] = [1, False, kind == "if" and m.group(2).strip() == "0"]
        elif stack and kind == "endif":
            stack.pop()
        elif stack:
            chains[stack[-1]][0] += 1
            chains[stack[-1]][1] = chains[stack[-1]][1] or kind == "else"
    return chains


def configuration(lines, chains, k):
    """lines with the directives blanked and, in each #if chain, every branch but one: branch k when
    there is one (an #if 0 branch is never taken), else the #else, else none (all conditions false)."""
    out, stack, continued = [], [], False  # stack: [chosen branch, branch index, taken]
    for number, line in enumerate(lines):
        if continued:
            continued = line.rstrip().endswith("\\")
            out.append("")
            continue
        m = CONDITIONAL.match(line)
        if m or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            out.append("")
        if m:
            kind = m.group(1)
            if kind.startswith("if"):
                count, has_else, never = chains[number]
                chosen = min(k, count - 1) if has_else else k
                stack.append([chosen, 0, chosen == 0 and not never])
            elif stack and kind == "endif":
                stack.pop()
            elif stack:
                frame = stack[-1]
                frame[1] += 1
                frame[2] = frame[1] == frame[0]
            continue
        if line.lstrip().startswith("#"):
            continue
        taken = all(frame[2] for frame in stack)
        out.append(line if taken else "")
    return "\n".join(out)


CONTAINER = re.compile(r'(^|[\s>])(namespace|class|struct|union|enum)\b|^extern\s*"[^"]*"$')
FUNCTION_HEAD = re.compile(r"\)\s*(const|noexcept(\s*\([^)]*\))?|override|final|mutable|&&?|->[^;{]*|\s)*$")
CONTROL = re.compile(r"^(if|for|while|switch|else|do|try|catch|return)\b")
BRACE = re.compile(r"[{}]")
NEWLINE = re.compile(r"\n")
STATEMENT = re.compile(r"[;{}]")
CTOR_INIT = re.compile(r"\)\s*(noexcept\s*)?:(?!:)")
LEADING = re.compile(r"\s*((public|private|protected)\s*:(?!:)\s*)*")


def brace_pairs(text):
    """Each '{' offset mapped to its '}' (the end of text when unbalanced)."""
    pairs, stack = {}, []
    for m in BRACE.finditer(text):
        if m.group(0) == "{":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    for i in stack:
        pairs[i] = len(text) - 1
    return pairs


def function_name(head):
    head = re.sub(r"\[\[.*?\]\]|__attribute__\s*\(\(.*?\)\)", " ", head)
    head = re.sub(r"operator\s*\(\s*\)", "operator()", head)
    depth = 0
    for i, c in enumerate(head):
        if c == "(" and depth == 0 and not (head.startswith("()", i) and head[:i].rstrip().endswith("operator")):
            m = re.search(r"(operator\s*\S+|[\w:~]+)\s*$", head[:i])
            return m.group(1) if m else "lambda"
        if c in "<>":
            depth += 1 if c == "<" else -1
    return "lambda"


def functions_in(text):
    """(length in lines, first line, name) of each function body in text (comments and strings
    blanked, directives removed); lambdas and local classes count as part of their function."""
    pairs = brace_pairs(text)
    starts = [m.start() for m in NEWLINE.finditer(text)]
    line_of = lambda offset: bisect.bisect_left(starts, offset) + 1  # noqa: E731
    found = []

    def scan(start, end):
        last = start
        m = STATEMENT.search(text, start, end)
        while m:
            i = m.start()
            if text[i] != "{":
                last = i + 1
                m = STATEMENT.search(text, i + 1, end)
                continue
            close = pairs[i]
            head = " ".join(text[last:i].split())
            bare = re.sub(r"^template\s*<.*?>\s*", "", head)
            before = text[last:i].rstrip()
            if head.count("(") > head.count(")") or (CTOR_INIT.search(head) and before[-1:] not in ")}"):
                m = STATEMENT.search(text, close + 1, end)  # a brace inside a parameter list, or a member initializer
                continue
            if CONTAINER.search(bare) and "(" not in bare:
                scan(i + 1, close)
            elif (FUNCTION_HEAD.search(head) or (CTOR_INIT.search(head) and head.endswith("}"))) \
                    and not head.endswith("=") and not CONTROL.match(head):
                first = line_of(LEADING.match(text, last, i).end())
                found.append((line_of(close) - first + 1, first, function_name(bare)))
            last = close + 1
            m = STATEMENT.search(text, close + 1, end)

    scan(0, len(text))
    return found


def functions(source):
    """The functions of C++ source text, each measured in the longest of its #if configurations."""
    lines = strip_comments_and_strings(source).split("\n")
    chains = conditional_chains(lines)
    widest = 1 + max((count for count, _, _ in chains.values()), default=0)
    longest, seen = {}, set()
    for k in range(widest):
        text = configuration(lines, chains, k)
        if text in seen:
            continue
        seen.add(text)
        for length, first, name in functions_in(text):
            if first not in longest or longest[first][0] < length:
                longest[first] = (length, first, name)
    return sorted(longest.values(), key=lambda f: f[1])


def check_function_sizes(root, tops=tuple(ALLOWED), limit=FUNCTION_LIMIT):
    bad = []
    for top in tops:
        for path in source_files(root, top):
            for length, first, name in functions(read(path)):
                if length <= limit:
                    continue
                bad.append(f"{rel(path, root)}:{first}: {name} is {length} lines (limit {limit})")
    return bad


# --- 3. the façade's private headers --------------------------------------------------------------

def check_facade_includes(root):
    bad = []
    facade = os.path.join(root, FACADE)
    if not os.path.isdir(facade):
        # A renamed façade must not turn this check off silently.
        if os.path.isdir(os.path.join(root, "core", "src")):
            bad.append(f"{FACADE}: the façade's folder is missing (renamed? update FACADE in scripts/check_layers.py)")
        return bad
    for name in sorted(os.listdir(facade)):
        if not name.endswith(".cpp"):
            continue
        own = os.path.splitext(name)[0] + ".hpp"
        path = os.path.join(facade, name)
        for number, line in enumerate(read(path).split("\n"), 1):
            m = QUOTED_INCLUDE.match(line)
            if not m:
                continue
            for base in (facade, os.path.join(root, "core", "src")):
                target = os.path.normpath(os.path.join(base, m.group(1)))
                if os.path.dirname(target) == os.path.normpath(facade) and target.endswith(".hpp") \
                        and os.path.basename(target) != own and os.path.isfile(target):
                    bad.append(f"{rel(path, root)}:{number}: includes {os.path.basename(target)}, "
                               "another façade file's private header")
                    break
    return bad


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    folder_breaks, edges = check_folders(root)
    size_breaks = check_function_sizes(root)
    include_breaks = check_facade_includes(root)
    for line in folder_breaks + size_breaks + include_breaks:
        print(line)
    for top in ALLOWED:
        print(f"{top}/ includes: {', '.join(sorted(edges.get(top, ()))) or 'nothing of the others'}")
    return 1 if folder_breaks or size_breaks or include_breaks else 0


if __name__ == "__main__":
    sys.exit(main())
