#!/usr/bin/env python3
"""Lists Rust functions longer than a limit (default 150 lines), longest first.

Usage: scripts/long-functions.py [--limit N] [PATH ...]   (default paths: engine/src editor/src src)

A function runs from its `fn` line to the brace that closes its body, found by brace depth with
strings, chars, lifetimes and comments skipped. Nested functions and closures count inside their
enclosing function as well as on their own. Exits 1 when any function is over the limit.
"""
import os
import re
import sys


def strip(src):
    """Returns the source with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', src[i:]) and not (i and (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'r(#*)"', src[i:])
            end = src.find('"' + m.group(1), i + len(m.group(0)))
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a): only the former is blanked.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions(path):
    with open(path, encoding="utf-8") as f:
        text = strip(f.read())
    line_of = []
    line = 1
    for ch in text:
        line_of.append(line)
        if ch == "\n":
            line += 1
    for m in FN.finditer(text):
        # The body opens at the first `{` after the signature, unless a `;` comes first (a trait
        # method without a body).
        i = m.end()
        depth_paren = 0
        while i < len(text):
            ch = text[i]
            if ch in "([":
                depth_paren += 1
            elif ch in ")]":
                depth_paren -= 1
            elif ch == ";" and depth_paren == 0:
                i = -1
                break
            elif ch == "{" and depth_paren == 0:
                break
            i += 1
        if i < 0 or i >= len(text):
            continue
        depth, j = 0, i
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        start, end = line_of[m.start()], line_of[min(j, len(text) - 1)]
        yield m.group(1), start, end - start + 1


def main(argv):
    limit = 150
    paths = []
    args = iter(argv)
    for a in args:
        if a == "--limit":
            limit = int(next(args))
        else:
            paths.append(a)
    paths = paths or ["engine/src", "editor/src", "src"]
    long = []
    for root in paths:
        files = [root] if os.path.isfile(root) else [
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".rs")
        ]
        for path in sorted(files):
            for name, start, length in functions(path):
                if length > limit:
                    long.append((length, path, start, name))
    for length, path, start, name in sorted(long, reverse=True):
        print(f"{length:5} {path}:{start} {name}")
    print(f"{len(long)} function(s) over {limit} lines")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
