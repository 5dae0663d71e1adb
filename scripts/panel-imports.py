#!/usr/bin/env python3
"""Fails when a panel imports another panel's file.

The editor's panels (`editor/src/panels/`) are small structs that read a narrow context and send
commands; what two panels share lives outside `panels/` (`cx`, `widgets`, `posing`, `dock`,
`document`). A panel is a file `panels/NAME.rs` or a folder `panels/NAME/`; only
`panels/mod.rs` (the dock's tab viewer, which holds every panel) may name them all.

Checked: every path that reaches a panel module, `crate::panels::NAME`, `super::NAME` from a
panel's top file and `super::super::NAME` from a file inside a panel's folder, including
`{...}` groups. Prints each import of a sibling with its file and line and exits 1 if any.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PANELS = ROOT / "editor" / "src" / "panels"


def panel_names():
    names = set()
    for p in PANELS.iterdir():
        if p.is_dir():
            names.add(p.name)
        elif p.suffix == ".rs" and p.name != "mod.rs":
            names.add(p.stem)
    return names


def owner(path):
    rel = path.relative_to(PANELS).parts
    if len(rel) == 1:
        return None if rel[0] == "mod.rs" else rel[0][:-3]
    return rel[0]


def depth_to_panels(path):
    """How many `super::` lead from this file's module to `panels`."""
    rel = path.relative_to(PANELS).parts
    if len(rel) == 1:
        return 1  # panels/NAME.rs
    if rel[-1] == "mod.rs":
        return len(rel) - 1  # panels/NAME/mod.rs -> 1
    return len(rel)  # panels/NAME/sub.rs -> 2


def names_after(text, prefix):
    """The first path segment(s) after each `prefix` in text, with line numbers."""
    out = []
    for m in re.finditer(re.escape(prefix) + r"(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)", text):
        seg = m.group(1)
        line = text.count("\n", 0, m.start()) + 1
        if seg.startswith("{"):
            for part in seg[1:-1].split(","):
                part = part.strip().split("::")[0].split(" as ")[0].strip()
                if part:
                    out.append((part, line))
        else:
            out.append((seg, line))
    return out


def main():
    names = panel_names()
    bad = []
    for path in sorted(PANELS.rglob("*.rs")):
        me = owner(path)
        if me is None:
            continue
        text = path.read_text()
        found = names_after(text, "crate::panels::")
        found += names_after(text, "super::" * depth_to_panels(path))
        for name, line in found:
            if name in names and name != me:
                bad.append(f"{path.relative_to(ROOT)}:{line}: panel '{me}' imports panel '{name}'")
    for b in bad:
        print(b)
    if bad:
        print(f"error: {len(bad)} import(s) of a sibling panel; move the shared piece out of panels/ "
              "(cx, widgets, posing, dock, document) or send a Command", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
