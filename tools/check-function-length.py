#!/usr/bin/env python3
"""Fails when a function body in src/**/*.cc is longer than the limit (issue 23 §5).

A long function is a long list of decisions nobody can name: split it into named steps (a status
builder with one function per condition, a supervisor with one function per phase) so that each
step can be read, tested and reviewed on its own.

Usage: tools/check-function-length.py [--root DIR] [--max-lines N] [--exclude PREFIX]... [--report]
       tools/check-function-length.py --self-test
  --root DIR        the source tree (default: this script's parent's parent)
  --max-lines N     the longest function allowed, in lines (default 120)
  --exclude PREFIX  skip files whose path relative to the root starts with PREFIX, e.g.
                    src/controllers/ (repeatable)
  --report          list every function with its length, longest first, and exit 0
  --self-test       check the scanner on the tricky shapes listed in SELF_TEST, and exit
Exit status: 0 when every function fits, 1 listing those that do not, 2 on bad usage.

A function's length is counted from the first line of its signature (its template<> line
included) to the line of its closing brace. Functions are found by brace matching over the
source with comments, string literals (raw strings included), character literals and
preprocessor lines blanked out. Anything whose braces open at namespace or class scope after a
parenthesised signature is a function: free functions, member functions defined in a class or
out of line, constructors with initialiser lists, operators. Lambdas count as part of the
function that contains them; an initialiser at namespace scope (`const auto kX = ...{...};`) is
data, not a function, and is not counted. Macros that expand to function definitions are not
recognised (src/ has none).

Exemption: a declarative table -- a function that only lists data, one entry per line, such as
a flag-spelling table or a map of wire names -- is long because the data is long, and
splitting it would only scatter the list. Such a function may be exempted by the comment
`// function-length: table` alone on the line immediately before its signature. Nothing else is
exempted: a function with decisions in it is split instead.
"""

import argparse
import os
import re
import signal
import sys

DEFAULT_MAX_LINES = 120
EXEMPT_MARK = "// function-length: table"


def blank(text):
    """Returns `text` with comments, string and character literals and preprocessor lines
    replaced by spaces, newlines kept (so offsets and line numbers do not move)."""
    out = list(text)
    n = len(text)
    i = 0
    line_start = True  # only whitespace since the last newline

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if line_start and c == "#":
            # A preprocessor directive, with its backslash continuations.
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                j += 1
            # A comment may start on the directive's line; blanking it with the line is fine.
            wipe(i, j)
            i = j
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
            continue
        if c == '"':
            # A raw string: R"delim( ... )delim", with an optional u8/u/U/L prefix before R.
            k = i - 1
            if k >= 0 and text[k] == "R":
                m = re.match(r'"([^()\\\s]{0,16})\(', text[i:])
                if m:
                    end = text.find(")" + m.group(1) + '"', i + m.end())
                    end = n if end < 0 else end + len(m.group(1)) + 2
                    wipe(i, end)
                    i = end
                    continue
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break  # an unterminated literal: stop at the line's end
                j += 1
            wipe(i, min(j + 1, n))
            i = j + 1
            continue
        if c == "'":
            # A digit separator (1'000'000, 0xFF'FF) is not a character literal.
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] in "_."):
                k -= 1
            if k + 1 < i and text[k + 1].isdigit():
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'":
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break
                j += 1
            wipe(i, min(j + 1, n))
            i = j + 1
            continue
        i += 1
    return "".join(out)


SCOPE_KEYWORDS = re.compile(r"\b(namespace|class|struct|union)\b")
EXTERN_BLOCK = re.compile(r"^\s*extern\s*$")  # extern "C" { (the string is blanked)
ENUM = re.compile(r"\benum\b")
ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")
TEMPLATE_ARGS = re.compile(r"<[^<>;{}]*>")


def top_level(header):
    """`header` with everything inside (), [] and <> (template arguments, roughly) removed."""
    flat = header
    while True:
        stripped = TEMPLATE_ARGS.sub(" ", flat)
        if stripped == flat:
            break
        flat = stripped
    out = []
    depth = 0
    for ch in flat:
        if ch in "([":
            if depth == 0:
                out.append(ch)
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
            if depth == 0:
                out.append(ch)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def function_name(header):
    """The (qualified) name before the signature's parameter list, e.g. `policy::poolStatus`
    is reported as `poolStatus` qualified as written: `OwnedApplier::apply`."""
    depth = 0
    for idx, ch in enumerate(header):
        if ch == "(":
            if depth == 0:
                before = header[:idx].rstrip()
                if re.search(r"\boperator$", before):
                    before += "()"  # operator()(...): the name's own parentheses come first
                m = re.search(r"(operator\s*(?:\(\)|[^\w\s(]+|\s+\w[\w:<>\s*&]*))$", before)
                if m:
                    q = re.search(r"([\w:~]*::)?\s*$", before[: m.start()])
                    return ((q.group(1) or "") + re.sub(r"\s+", " ", m.group(1))).strip()
                m = re.search(r"((?:[\w~]+(?:<[^()]*?>)?\s*::\s*)*~?\w+)\s*$", before)
                if m:
                    return re.sub(r"\s+", "", m.group(1))
                return "<anonymous>"
            depth += 1
        elif ch == ")":
            depth -= 1
    return "<anonymous>"


def classify(header):
    """What a `{` at namespace or class scope opens, from the text before it since the last
    `;`, `{` or `}` at that scope: 'scope' (namespace, class, extern "C"), 'function', or
    'other' (an initialiser, an enumerator list)."""
    body = ACCESS.sub("", header)
    flat = top_level(body)
    if EXTERN_BLOCK.match(flat):
        return "scope"
    if ENUM.search(flat):
        return "other"
    if "(" not in flat:
        return "scope" if SCOPE_KEYWORDS.search(flat) else "other"
    head = flat[: flat.index("(")]
    if SCOPE_KEYWORDS.search(head) and not re.search(r"\boperator\b", head):
        # class X : Base<decltype(f())> {  (a template argument with a call in it)
        return "scope"
    # A top-level '=' that is not part of an operator's name makes an initialiser.
    if re.search(r"(?<![=!<>+\-*/%&|^])=(?!=)", re.sub(r"\boperator\s*\S+?\s*\(", "(", flat)):
        return "other"
    return "function"


def scan(path, text):
    """Yields (name, first_line, last_line) for every function in `text`."""
    code = blank(text)
    n = len(code)
    # Line number of every offset, computed lazily from newline positions.
    newlines = [i for i, ch in enumerate(code) if ch == "\n"]

    def line_of(offset):
        lo, hi = 0, len(newlines)
        while lo < hi:
            mid = (lo + hi) // 2
            if newlines[mid] < offset:
                lo = mid + 1
            else:
                hi = mid
        return lo + 1

    def skip_block(open_at):
        """The offset just past the `}` that closes the `{` at `open_at`."""
        depth = 0
        k = open_at
        while k < n:
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    return k + 1
            k += 1
        return n

    header_start = 0
    paren = 0
    i = 0
    while i < n:
        ch = code[i]
        if ch in "([":
            paren += 1
        elif ch in ")]":
            paren = max(0, paren - 1)
        elif ch == ";" and paren == 0:
            header_start = i + 1
        elif ch == "}" and paren == 0:
            header_start = i + 1  # the end of an enclosing scope
        elif ch == "{":
            header = code[header_start:i]
            if paren > 0:
                i = skip_block(i)  # a braced initialiser inside a call
                continue
            kind = classify(header)
            if kind == "function" and ctor_init_brace(header):
                i = skip_block(i)  # member_{value} in a constructor's initialiser list
                continue
            if kind == "scope":
                header_start = i + 1
                i += 1
                continue
            end = skip_block(i)
            if kind == "function":
                stripped = ACCESS.sub("", header)
                offset = header_start + (len(header) - len(stripped))
                offset += len(stripped) - len(stripped.lstrip())
                yield function_name(stripped.strip()), line_of(offset), line_of(end - 1)
                header_start = end
            # An initialiser's `{...}` is followed by its `;`, which resets the header.
            i = end
            continue
        i += 1


def ctor_init_brace(header):
    """True when the `{` after `header` is a member's braced initialiser (`: a_{x}`), not the
    constructor's body: inside an initialiser list, after a name."""
    flat = top_level(header)
    m = re.search(r"\)[^:]*?(?<!:):(?!:)", flat)
    if not m:
        return False
    return re.search(r"[\w>]\s*$", flat) is not None and not re.search(
        r"\b(const|noexcept|override|final|mutable|try)\s*$", flat
    )


# The shapes the scanner must get right: (source, expected [(name, first_line, last_line)]).
SELF_TEST = [
    (
        # Braces in strings, raw strings, character literals and comments; digit separators.
        'int f() {\n'
        '  const char* a = "}{";\n'
        '  const char* b = R"x(} " {)x";\n'
        "  char c = '}';  // }\n"
        "  /* { */ int n = 1'000;\n"
        "  return n;\n"
        "}\n",
        [("f", 1, 7)],
    ),
    (
        # A table at namespace scope is data; functions in a class and in namespaces count.
        "namespace a {\n"
        "namespace {\n"
        "const std::vector<int> kTable = {\n"
        "    1, 2,\n"
        "};\n"
        "}  // namespace\n"
        "class C : public B<decltype(g())> {\n"
        " public:\n"
        "  C(int v) : v_{v}, w_(v) {\n"
        "    go();\n"
        "  }\n"
        "  bool operator==(const C&) const = default;\n"
        "  int get() const { return v_; }\n"
        "};\n"
        "}  // namespace a\n",
        [("C", 9, 11), ("get", 13, 13)],
    ),
    (
        # A template's first line is the template<> line; lambdas belong to their function.
        "template <typename T>\n"
        "auto h(T t) -> std::vector<T> {\n"
        "  auto l = [](int y) { return y; };\n"
        "  return {t};\n"
        "}\n"
        "enum class E { A, B };\n"
        "#define X { \\\n"
        "  }\n"
        'extern "C" {\n'
        "bool S::operator()(int) const {\n"
        "  return true;\n"
        "}\n"
        "}\n",
        [("h", 1, 5), ("S::operator()", 10, 12)],
    ),
]


def self_test():
    failed = 0
    for source, expected in SELF_TEST:
        got = list(scan("self-test.cc", source))
        if got != expected:
            failed += 1
            print(f"self-test: expected {expected}, got {got} for:\n{source}", file=sys.stderr)
    return 1 if failed else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(here))
    parser.add_argument("--max-lines", type=int, default=DEFAULT_MAX_LINES)
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()

    src = os.path.join(args.root, "src")
    if not os.path.isdir(src):
        print(f"check-function-length: {src} is not a directory", file=sys.stderr)
        return 2
    found = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for filename in sorted(filenames):
            if not filename.endswith(".cc"):
                continue
            path = os.path.join(dirpath, filename)
            rel = os.path.relpath(path, args.root).replace(os.sep, "/")
            if any(rel.startswith(prefix) for prefix in args.exclude):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            raw_lines = text.split("\n")
            for name, first, last in scan(rel, text):
                previous = raw_lines[first - 2].strip() if first >= 2 else ""
                exempt = previous.startswith(EXEMPT_MARK)
                found.append((last - first + 1, rel, first, name, exempt))

    if args.report:
        for length, rel, first, name, exempt in sorted(found, reverse=True):
            mark = " (table)" if exempt else ""
            print(f"{length:5d}  {rel}:{first}  {name}{mark}")
        return 0
    too_long = [f for f in found if f[0] > args.max_lines and not f[4]]
    if not too_long:
        return 0
    for length, rel, first, name, _ in sorted(too_long, key=lambda f: (f[1], f[2])):
        print(f"{rel}:{first}: {name} is {length} lines (at most {args.max_lines})")
    print(
        f"check-function-length: {len(too_long)} function(s) over {args.max_lines} lines; split "
        "them into named steps (a declarative table may be marked `// function-length: table`)",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `--report | head` ends quietly
    sys.exit(main())
