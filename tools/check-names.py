#!/usr/bin/env python3
"""Fails on the names docs/contributing.md forbids that clang-tidy's naming check cannot see.

"Namespace" has one spelling: `namespace_name` for a field, a parameter or a local. clang-tidy's
readability-identifier-naming (tools/check-naming.sh) checks the case of a name, not the name
itself, so `ns` passed it everywhere it crept in. This scans src/, test/ and bench/ (comments and
string literals blanked out by the function-length check's scanner) for the identifier `ns`.

Usage: tools/check-names.py [--root DIR]
Exit status: 0 when no forbidden name is used, 1 listing each use.
"""

import argparse
import importlib.util
import os
import re
import sys

FORBIDDEN = {"ns": "namespace_name"}


def load_scanner(here):
    spec = importlib.util.spec_from_file_location(
        "check_function_length", os.path.join(here, "check-function-length.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(here))
    args = parser.parse_args()
    scanner = load_scanner(here)
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(FORBIDDEN) + r")(?![A-Za-z0-9_])")
    found = []
    for top in ("src", "test", "bench"):
        for directory, _, files in os.walk(os.path.join(args.root, top)):
            for name in sorted(files):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8", errors="replace") as source:
                    code = scanner.blank(source.read())
                for match in pattern.finditer(code):
                    line = code.count("\n", 0, match.start()) + 1
                    found.append("%s:%d: `%s` (write `%s`)" % (
                        os.path.relpath(path, args.root), line, match.group(1),
                        FORBIDDEN[match.group(1)]))
    for entry in found:
        print(entry)
    if found:
        print("check-names: %d forbidden name(s)" % len(found), file=sys.stderr)
        return 1
    print("check-names: no forbidden names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
