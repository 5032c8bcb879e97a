#!/usr/bin/env python3
"""Extract the complete long-option list of an inference engine's CLI parser.

The admission webhooks refuse operator-owned engine flags "in every spelling
the engine's own parser reads as it", which includes every unique prefix that
Python argparse's ``allow_abbrev`` accepts.  Whether a prefix is unique depends
on the engine's WHOLE flag set, so this script reads the engine's own Python
sources (never running them) and writes that set, one option per line, to
``data/engine-flags/<engine>-<version>.txt``.

Supported engines and the parser each one builds:

``vllm``
    the ``vllm serve`` sub-parser: ``vllm/entrypoints/cli/serve.py``
    ``subparser_init`` -> ``make_arg_parser`` (``--headless``,
    ``--api-server-count``, ``--config``, ...) -> ``FrontendArgs.add_cli_args``
    (one flag per dataclass field) -> ``AsyncEngineArgs.add_cli_args`` ->
    ``EngineArgs.add_cli_args`` (literal flag names whose argparse kwargs come
    from ``get_kwargs(<Config dataclass>)``).  A field whose type contains
    ``bool`` (and is not ``bool | str | None`` nor a dataclass) becomes an
    ``argparse.BooleanOptionalAction`` and so also has a ``--no-<flag>`` form;
    the script mirrors vLLM's ``_compute_kwargs`` to decide that statically.

``sglang``
    ``python -m sglang.launch_server`` / ``sglang serve``:
    ``sglang/srt/server_args.py`` ``prepare_server_args`` ->
    ``ServerArgs.add_cli_args`` -> ``add_cli_args_from_dataclass(parser,
    ServerArgs)`` (one flag per ``A[T, "help" | Arg(...)]`` field, honouring
    ``Arg(cli_name=..., aliases=[...], no_cli=True, action=...)``) plus the
    literal ``parser.add_argument`` calls.

Both engines' parsers get argparse's automatic ``-h/--help``; ``--help`` is
listed because it takes part in prefix matching.  Multi-character single-dash
options (vLLM's ``-tp``, ``-asc``, ...) are listed too, single-character short
options (``-h``, ``-q``) are not.

The analysis is a small abstract interpreter over the AST of exactly the
functions the parser is built by.  It fails loudly (exit status 2) on any
``add_argument`` whose option strings it cannot evaluate, so a refresh for a
new engine version either produces the exact list or tells you where to look.
Calls that receive the parser but cannot be resolved statically (for example
vLLM's ``current_platform.pre_register_and_update(parser)``, a hook for
out-of-tree platform plugins) are not followed; they are listed in the
output header.

Sources
-------
``--source`` is either

* a git directory (a bare mirror or a work tree's ``.git`` or a work tree):
  then ``--tag`` is required and every file is read with
  ``git show <tag>:<path>``; the tag's peeled commit id is recorded; or
* a plain directory holding the engine's Python package: a checkout, an
  unpacked sdist, or an unpacked wheel (``unzip vllm-X.whl -d DIR``); the
  package may sit at the top (``DIR/vllm``) or under ``python/``
  (``DIR/python/sglang``, SGLang's repository layout).  Pass ``--commit`` to
  record the commit the tree was built from when it is known.

Usage
-----
::

    python3 tools/extract-engine-flags/extract.py --engine vllm \\
        --source /path/to/vllm.git --tag v0.29.0 \\
        --output data/engine-flags/vllm-0.29.0.txt

    python3 tools/extract-engine-flags/extract.py --engine sglang \\
        --source /tmp/sglang-wheel --version 0.5.18 \\
        --commit 71de97b264b04dcd514cf904003028aefe9775c8 \\
        --output data/engine-flags/sglang-0.5.18.txt

    # only print the shortest prefix argparse reads as each named flag
    python3 tools/extract-engine-flags/extract.py --prefixes \\
        data/engine-flags/vllm-0.29.0.txt --kv-transfer-config --kv-cache-dtype

Options: ``--version`` (default: derived from the tag or the package's
``_version.py``), ``--date`` (default: today, UTC), ``--note TEXT``
(repeatable, extra header lines), ``--method TEXT`` (override the
extraction-method header line).  Only the Python standard library is used
(Python >= 3.9).
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------------------
# Reading sources
# ---------------------------------------------------------------------------


class SourceError(Exception):
    pass


class Source:
    """Reads repository-relative files from a git tag or a directory tree."""

    def __init__(self, path: str, tag: str | None, package: str):
        self.path = os.path.abspath(path)
        self.tag = tag
        self.commit: str | None = None
        self.git_dir: str | None = None
        self.prefix = ""
        self.read_log: list[str] = []
        self._cache: dict[str, str | None] = {}
        if tag is not None:
            self.git_dir = self._find_git_dir(self.path)
            if self.git_dir is None:
                raise SourceError(f"--tag given but {path} is not a git directory")
            try:
                self.commit = self._git("rev-parse", f"{tag}^{{commit}}").strip()
            except subprocess.CalledProcessError as e:
                raise SourceError(f"tag {tag!r} not found in {self.git_dir}") from e
        for prefix in ("", "python/"):
            if self._raw_read(f"{prefix}{package}/__init__.py") is not None:
                self.prefix = prefix
                break
        else:
            raise SourceError(f"no {package}/__init__.py (nor python/{package}/) in {path}")

    @staticmethod
    def _find_git_dir(path: str) -> str | None:
        for cand in (os.path.join(path, ".git"), path):
            if os.path.isfile(os.path.join(cand, "HEAD")) and os.path.isdir(
                os.path.join(cand, "objects")
            ):
                return cand
        return None

    def _git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", self.git_dir, *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def _raw_read(self, rel: str) -> str | None:
        if rel in self._cache:
            return self._cache[rel]
        text: str | None
        if self.git_dir is not None:
            try:
                text = self._git("show", f"{self.tag}:{rel}")
            except subprocess.CalledProcessError:
                text = None
        else:
            p = os.path.join(self.path, rel)
            if os.path.isfile(p):
                with open(p, encoding="utf-8") as f:
                    text = f.read()
            else:
                text = None
        self._cache[rel] = text
        return text

    def read(self, rel: str) -> str | None:
        """Read a package-relative path such as ``vllm/engine/arg_utils.py``."""
        text = self._raw_read(self.prefix + rel)
        if text is not None and (self.prefix + rel) not in self.read_log:
            self.read_log.append(self.prefix + rel)
        return text


# ---------------------------------------------------------------------------
# Modules and name resolution
# ---------------------------------------------------------------------------


@dataclass
class Module:
    name: str
    path: str
    tree: ast.Module
    is_package: bool
    bindings: dict[str, ast.AST] = field(default_factory=dict)


@dataclass(frozen=True)
class ClassRef:
    module: Module
    node: ast.ClassDef

    def __hash__(self) -> int:
        return hash((self.module.name, self.node.name))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ClassRef)
            and other.module.name == self.module.name
            and other.node.name == self.node.name
        )

    @property
    def qualname(self) -> str:
        return f"{self.module.name}.{self.node.name}"


@dataclass(frozen=True)
class FuncRef:
    module: Module
    node: ast.FunctionDef
    owner: ClassRef | None = None

    @property
    def qualname(self) -> str:
        owner = f"{self.owner.node.name}." if self.owner else ""
        return f"{self.module.name}.{owner}{self.node.name}"


@dataclass(frozen=True)
class AliasRef:
    """A module-level ``Name = <type expression>`` binding."""

    module: Module
    expr: ast.expr


@dataclass(frozen=True)
class External:
    """Something the engine package does not define (stdlib, third party)."""

    dotted: str


class Index:
    def __init__(self, src: Source, root_package: str):
        self.src = src
        self.root = root_package
        self.modules: dict[str, Module | None] = {}

    def module(self, name: str) -> Module | None:
        if name in self.modules:
            return self.modules[name]
        mod = None
        if name == self.root or name.startswith(self.root + "."):
            rel = name.replace(".", "/")
            for path, is_pkg in ((rel + ".py", False), (rel + "/__init__.py", True)):
                text = self.src.read(path)
                if text is not None:
                    tree = ast.parse(text, filename=path)
                    mod = Module(name, path, tree, is_pkg)
                    self._bind(mod, tree.body)
                    break
        self.modules[name] = mod
        return mod

    def _bind(self, mod: Module, body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                mod.bindings[st.name] = st
            elif isinstance(st, ast.Assign):
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        mod.bindings[t.id] = st
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                if st.value is not None:
                    mod.bindings[st.target.id] = st
            elif isinstance(st, (ast.Import, ast.ImportFrom)):
                for a in st.names:
                    if a.name == "*":
                        continue
                    key = a.asname or a.name.split(".")[0]
                    mod.bindings[key] = st
            elif isinstance(st, ast.If):
                self._bind(mod, st.body)
                self._bind(mod, st.orelse)
            elif isinstance(st, ast.Try):
                self._bind(mod, st.body)
                for h in st.handlers:
                    self._bind(mod, h.body)
                self._bind(mod, st.orelse)
            elif sys.version_info >= (3, 12) and isinstance(st, ast.TypeAlias):
                mod.bindings[st.name.id] = st

    def _abs_module(self, mod: Module, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = mod.name.split(".")
        base = parts if mod.is_package else parts[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def resolve(self, mod: Module, name: str, depth: int = 0) -> Any:
        """Resolve a module-level name to ClassRef/FuncRef/AliasRef/Module/External."""
        if depth > 20:
            return External(name)
        node = mod.bindings.get(name)
        if node is None:
            return External(name)
        if isinstance(node, ast.ClassDef):
            return ClassRef(mod, node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return FuncRef(mod, node)
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            value = node.value
            if isinstance(value, ast.Name) and value.id != name:
                return self.resolve(mod, value.id, depth + 1)
            return AliasRef(mod, value)
        if sys.version_info >= (3, 12) and isinstance(node, ast.TypeAlias):
            # ``type X = ...``: a TypeAliasType, which get_type_hints() does not
            # look through; treat it as an opaque leaf.
            return External(f"{mod.name}.{name}")
        if isinstance(node, ast.ImportFrom):
            target = self._abs_module(mod, node)
            for a in node.names:
                if (a.asname or a.name) == name:
                    sub = self.module(f"{target}.{a.name}")
                    if sub is not None:
                        return sub
                    tmod = self.module(target)
                    if tmod is None:
                        return External(f"{target}.{a.name}")
                    return self.resolve(tmod, a.name, depth + 1)
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname == name:
                    return self.module(a.name) or External(a.name)
                if a.asname is None and a.name.split(".")[0] == name:
                    return self.module(name) or External(name)
        return External(name)

    def resolve_expr(self, mod: Module, expr: ast.expr) -> Any:
        if isinstance(expr, ast.Name):
            return self.resolve(mod, expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.resolve_expr(mod, expr.value)
            if isinstance(base, Module):
                sub = self.module(f"{base.name}.{expr.attr}")
                return sub or self.resolve(base, expr.attr)
            if isinstance(base, External):
                return External(f"{base.dotted}.{expr.attr}")
            return External(ast.unparse(expr))
        return External(ast.unparse(expr))

    # -- classes ------------------------------------------------------------

    def bases(self, cls: ClassRef) -> list[ClassRef]:
        out = []
        for b in cls.node.bases:
            r = self.resolve_expr(cls.module, b)
            if isinstance(r, ClassRef):
                out.append(r)
        return out

    def mro(self, cls: ClassRef) -> list[ClassRef]:
        """C3 linearisation over the classes the package defines."""

        def merge(seqs: list[list[ClassRef]]) -> list[ClassRef]:
            res: list[ClassRef] = []
            seqs = [s[:] for s in seqs if s]
            while seqs:
                for s in seqs:
                    head = s[0]
                    if not any(head in t[1:] for t in seqs):
                        break
                else:
                    raise ValueError(f"inconsistent MRO for {cls.qualname}")
                res.append(head)
                seqs = [[c for c in t if c != head] for t in seqs]
                seqs = [t for t in seqs if t]
            return res

        bases = self.bases(cls)
        return [cls] + merge([self.mro(b) for b in bases] + [bases])

    def method(self, cls: ClassRef, name: str, skip_self: bool = False) -> FuncRef | None:
        chain = self.mro(cls)
        if skip_self:
            chain = chain[1:]
        for c in chain:
            for st in c.node.body:
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == name:
                    return FuncRef(c.module, st, c)
        return None

    def is_boolean_optional(self, action: Any, depth: int = 0) -> bool:
        """Is an ``action=`` value argparse.BooleanOptionalAction or a subclass?"""
        if isinstance(action, External):
            action = action.dotted
        if isinstance(action, str):
            return action.split(".")[-1] == "BooleanOptionalAction"
        if isinstance(action, ClassRef) and depth < 20:
            for b in action.node.bases:
                if self.is_boolean_optional(self.resolve_expr(action.module, b), depth + 1):
                    return True
            return False
        if isinstance(action, ast.AST):
            return False
        raise ExtractionError(f"cannot tell whether action {action!r} is a BooleanOptionalAction")

    def dataclass_fields(self, cls: ClassRef) -> dict[str, tuple[ClassRef, ast.AnnAssign]]:
        """Like dataclasses.fields(): inherited fields first, in definition order."""
        out: dict[str, tuple[ClassRef, ast.AnnAssign]] = {}
        for c in reversed(self.mro(cls)):
            if not is_dataclass_def(c.node) and c != cls:
                continue
            for st in c.node.body:
                if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
                    continue
                ann = st.annotation
                if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                    ann = ast.parse(ann.value, mode="eval").body
                head = ann.value if isinstance(ann, ast.Subscript) else ann
                head_name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
                if head_name in ("ClassVar", "InitVar", "KW_ONLY"):
                    continue
                out[st.target.id] = (c, st)
        return out


def is_dataclass_def(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name in ("dataclass", "config"):
            return True
    return False


# ---------------------------------------------------------------------------
# vLLM: does get_kwargs() make a field a BooleanOptionalAction?
# ---------------------------------------------------------------------------

_TYPING_UNION = {"Union", "Optional"}


def type_leaves(index: Index, mod: Module, expr: ast.expr, depth: int = 0) -> set[str]:
    """Flatten a type expression like vLLM's get_type_hints(): look through
    Annotated, Union/Optional/``|`` and plain (non-``type``) aliases.  Leaves
    are tagged strings: ``bool``, ``str``, ``None``, ``dataclass:<name>``,
    ``literal``, ``<generic origin>[]``, or ``other:<name>``."""
    if depth > 30:
        return {"other:?"}
    if isinstance(expr, ast.Constant):
        if expr.value is None:
            return {"None"}
        if isinstance(expr.value, str):
            return type_leaves(index, mod, ast.parse(expr.value, mode="eval").body, depth + 1)
        return {f"other:{expr.value!r}"}
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return type_leaves(index, mod, expr.left, depth + 1) | type_leaves(
            index, mod, expr.right, depth + 1
        )
    if isinstance(expr, ast.Subscript):
        head = expr.value
        head_name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
        args = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        if head_name == "Annotated":
            return type_leaves(index, mod, args[0], depth + 1)
        if head_name in _TYPING_UNION:
            out = set()
            for a in args:
                out |= type_leaves(index, mod, a, depth + 1)
            if head_name == "Optional":
                out.add("None")
            return out
        if head_name == "Literal":
            return {"literal"}
        return {f"{head_name}[]"}
    if isinstance(expr, (ast.Name, ast.Attribute)):
        if isinstance(expr, ast.Name) and expr.id in ("bool", "str", "int", "float", "dict", "list", "set", "tuple", "bytes"):
            if expr.id not in mod.bindings:
                return {expr.id}
        r = index.resolve_expr(mod, expr)
        if isinstance(r, AliasRef):
            if isinstance(r.expr, ast.Call):
                return {f"other:{ast.unparse(expr)}"}  # NewType/TypeVar/...
            return type_leaves(index, r.module, r.expr, depth + 1)
        if isinstance(r, ClassRef):
            if is_dataclass_def(r.node):
                return {f"dataclass:{r.node.name}"}
            return {f"other:{r.node.name}"}
        return {f"other:{ast.unparse(expr)}"}
    return {f"other:{ast.unparse(expr)}"}


def vllm_field_is_boolean_optional(index: Index, cls: ClassRef, name: str) -> bool:
    fields_ = index.dataclass_fields(cls)
    if name not in fields_:
        raise KeyError(f"{cls.qualname} has no dataclass field {name!r}")
    owner, st = fields_[name]
    leaves = type_leaves(index, owner.module, st.annotation)
    if any(l.startswith("dataclass:") for l in leaves):
        return False  # parse_dataclass branch comes first
    if leaves == {"bool", "str", "None"}:
        return False  # optional-valued flag: nargs="?"
    return "bool" in leaves


# ---------------------------------------------------------------------------
# The abstract interpreter
# ---------------------------------------------------------------------------


class Unknown:
    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = Unknown()


class ParserObj:
    """The parser (or one of its argument groups)."""


@dataclass
class KwargsOf:
    """The dict returned by vLLM's ``get_kwargs(cls)``, with edits made to it."""

    cls: ClassRef
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)

    def fields(self, index: Index) -> list[str]:
        return [f for f in index.dataclass_fields(self.cls) if f not in self.deleted]


@dataclass
class FieldKw:
    """``get_kwargs(cls)[name]``: the argparse kwargs of one field."""

    owner: KwargsOf
    name: str

    @property
    def overrides(self) -> dict[str, Any]:
        return self.owner.overrides.setdefault(self.name, {})


@dataclass
class KwDict:
    """A literal dict used as ``**kwargs`` (``{**field_kwargs, "action": ...}``)."""

    base: FieldKw | None
    items: dict[str, Any]


@dataclass
class Added:
    options: list[str]
    negatable: bool
    where: str


class ExtractionError(Exception):
    pass


class Interpreter:
    def __init__(self, index: Index):
        self.index = index
        self.added: list[Added] = []
        self.unfollowed: list[str] = []
        self.parsers: list[str] = []
        self.dataclass_adders: set[str] = {"add_cli_args_from_dataclass"}
        self._stack: list[str] = []

    # -- entry ---------------------------------------------------------------

    def call_function(self, fn: FuncRef, args: list[Any], kwargs: dict[str, Any],
                      bound_cls: ClassRef | None = None) -> Any:
        key = fn.qualname
        if key in self._stack:
            return UNKNOWN
        self._stack.append(key)
        try:
            env: dict[str, Any] = {}
            params = [a.arg for a in fn.node.args.posonlyargs + fn.node.args.args]
            decos = {getattr(d, "id", getattr(d, "attr", "")) for d in fn.node.decorator_list}
            if fn.owner is not None and "staticmethod" not in decos and params:
                env[params[0]] = bound_cls or fn.owner
                params = params[1:]
            for p, v in zip(params, args):
                env[p] = v
            for k, v in kwargs.items():
                env[k] = v
            frame = Frame(self, fn, env, bound_cls or fn.owner)
            frame.run(fn.node.body)
            return frame.retval
        finally:
            self._stack.pop()


class Frame:
    def __init__(self, interp: Interpreter, fn: FuncRef, env: dict[str, Any],
                 cls: ClassRef | None):
        self.i = interp
        self.index = interp.index
        self.fn = fn
        self.mod = fn.module
        self.env = env
        self.cls = cls
        self.retval: Any = UNKNOWN

    def where(self, node: ast.AST) -> str:
        return f"{self.mod.path}:{getattr(node, 'lineno', '?')} ({self.fn.qualname})"

    # -- statements ------------------------------------------------------------

    def run(self, body: list[ast.stmt]) -> None:
        for st in body:
            self.stmt(st)

    def stmt(self, st: ast.stmt) -> None:
        if isinstance(st, ast.Expr):
            self.eval(st.value)
        elif isinstance(st, ast.Assign):
            val = self.eval(st.value)
            for t in st.targets:
                self.assign(t, val)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.assign(st.target, self.eval(st.value))
        elif isinstance(st, ast.AugAssign):
            self.eval(st.value)
        elif isinstance(st, ast.Delete):
            for t in st.targets:
                self.delete(t)
        elif isinstance(st, ast.Return):
            val = self.eval(st.value) if st.value is not None else None
            if self.retval is UNKNOWN or isinstance(val, (ParserObj, KwargsOf)):
                self.retval = val
        elif isinstance(st, ast.If):
            # Follow every branch: the union of what any run can register.
            self.eval(st.test)
            self.run(st.body)
            self.run(st.orelse)
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                self.eval(item.context_expr)
            self.run(st.body)
        elif isinstance(st, ast.Try):
            self.run(st.body)
            for h in st.handlers:
                self.run(h.body)
            self.run(st.orelse)
            self.run(st.finalbody)
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            self.for_loop(st)
        elif isinstance(st, ast.While):
            self.run(st.body)
            self.run(st.orelse)
        # imports, defs, pass, raise, assert, global: nothing to register

    def for_loop(self, st: ast.For) -> None:
        it = st.iter
        # ``for key, value in <get_kwargs(cls)>.items():``
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr == "items"
        ):
            owner = self.eval(it.func.value)
            if isinstance(owner, KwargsOf):
                for name in owner.fields(self.index):
                    self.assign(st.target, (name, FieldKw(owner, name)))
                    self.run(st.body)
                self.run(st.orelse)
                return
        self.eval(it)
        self.assign(st.target, UNKNOWN)
        self.run(st.body)
        self.run(st.orelse)

    def assign(self, target: ast.expr, val: Any) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = val
        elif isinstance(target, (ast.Tuple, ast.List)):
            vals = val if isinstance(val, tuple) and len(val) == len(target.elts) else None
            for n, t in enumerate(target.elts):
                self.assign(t, vals[n] if vals else UNKNOWN)
        elif isinstance(target, ast.Subscript):
            base = self.eval(target.value)
            key = self.eval(target.slice)
            if isinstance(base, FieldKw) and isinstance(key, str):
                base.overrides[key] = val
            elif isinstance(base, KwargsOf) and isinstance(key, str):
                if isinstance(val, FieldKw):
                    base.overrides[key] = dict(val.overrides)
                    base.deleted.discard(key)
                else:
                    raise ExtractionError(
                        f"{self.where(target)}: a whole field's kwargs replaced; "
                        "extend the extractor"
                    )

    def delete(self, target: ast.expr) -> None:
        if isinstance(target, ast.Subscript):
            base = self.eval(target.value)
            key = self.eval(target.slice)
            if isinstance(base, KwargsOf) and isinstance(key, str):
                base.deleted.add(key)
            elif isinstance(base, FieldKw) and isinstance(key, str):
                base.overrides[key] = _DELETED

    # -- expressions -----------------------------------------------------------

    def eval(self, e: ast.expr | None) -> Any:
        if e is None:
            return None
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            if e.id in self.env:
                return self.env[e.id]
            return self.index.resolve(self.mod, e.id)
        if isinstance(e, ast.Attribute):
            base = self.eval(e.value)
            if isinstance(base, Module):
                sub = self.index.module(f"{base.name}.{e.attr}")
                return sub or self.index.resolve(base, e.attr)
            if isinstance(base, External):
                return External(f"{base.dotted}.{e.attr}")
            if isinstance(base, ClassRef):
                m = self.index.method(base, e.attr)
                if m is not None:
                    return m
                return External(f"{base.qualname}.{e.attr}")
            return UNKNOWN
        if isinstance(e, ast.Subscript):
            base = self.eval(e.value)
            key = self.eval(e.slice)
            if isinstance(base, KwargsOf) and isinstance(key, str):
                return FieldKw(base, key)
            if isinstance(base, FieldKw) and isinstance(key, str):
                return base.overrides.get(key, UNKNOWN)
            return UNKNOWN
        if isinstance(e, (ast.List, ast.Tuple)):
            vals = [self.eval(x) for x in e.elts]
            return vals if isinstance(e, ast.List) else tuple(vals)
        if isinstance(e, ast.Dict):
            base: FieldKw | None = None
            items: dict[str, Any] = {}
            for k, v in zip(e.keys, e.values):
                if k is None:
                    val = self.eval(v)
                    if isinstance(val, FieldKw):
                        base = val
                    elif isinstance(val, KwDict):
                        base = val.base or base
                        items.update(val.items)
                    continue
                kv = self.eval(k)
                if isinstance(kv, str):
                    items[kv] = self.eval(v)
            return KwDict(base, items)
        if isinstance(e, ast.JoinedStr):
            parts = []
            for v in e.values:
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                elif isinstance(v, ast.FormattedValue):
                    x = self.eval(v.value)
                    if not isinstance(x, (str, int)):
                        return UNKNOWN
                    parts.append(str(x))
            return "".join(parts)
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            left, right = self.eval(e.left), self.eval(e.right)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, list) and isinstance(right, list):
                return left + right
            return UNKNOWN
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, (ast.BoolOp, ast.Compare, ast.UnaryOp, ast.IfExp)):
            for child in ast.iter_child_nodes(e):
                if isinstance(child, ast.expr):
                    self.eval(child)
            return UNKNOWN
        return UNKNOWN

    def call(self, e: ast.Call) -> Any:
        func = e.func
        # Methods on strings (``key.replace("_", "-")``).
        if isinstance(func, ast.Attribute) and func.attr in ("replace", "lower", "strip", "lstrip", "rstrip", "removeprefix"):
            recv = self.eval(func.value)
            if isinstance(recv, str):
                args = [self.eval(a) for a in e.args]
                if all(isinstance(a, str) for a in args):
                    return getattr(recv, func.attr)(*args)
                return UNKNOWN
        # ``get_kwargs(SomeConfig)``
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if fname == "get_kwargs" and len(e.args) == 1:
            cls = self.eval(e.args[0])
            if isinstance(cls, ClassRef):
                return KwargsOf(cls)
            raise ExtractionError(f"{self.where(e)}: get_kwargs() of an unresolved class")
        if fname in ("deepcopy", "copy") and len(e.args) == 1:
            return self.eval(e.args[0])
        if isinstance(func, ast.Attribute):
            recv = self.eval(func.value)
            if func.attr == "add_argument":
                self.add_argument(e)
                return UNKNOWN
            if func.attr in ("add_argument_group", "add_mutually_exclusive_group"):
                self.eval_args(e)
                return ParserObj()
            if func.attr == "pop" and isinstance(recv, FieldKw):
                key = self.eval(e.args[0]) if e.args else None
                default = self.eval(e.args[1]) if len(e.args) > 1 else None
                val = recv.overrides.pop(key, default) if isinstance(key, str) else UNKNOWN
                return val
            if func.attr == "pop" and isinstance(recv, KwargsOf):
                key = self.eval(e.args[0]) if e.args else None
                if isinstance(key, str):
                    recv.deleted.add(key)
                    return FieldKw(recv, key)
            if func.attr == "update" and isinstance(recv, FieldKw):
                arg = self.eval(e.args[0]) if e.args else None
                if isinstance(arg, KwDict):
                    recv.overrides.update(arg.items)
                elif isinstance(arg, dict):
                    recv.overrides.update(arg)
                return None
        # Constructing a parser.
        if fname in ("ArgumentParser", "FlexibleArgumentParser", "add_parser"):
            kw = {k.arg: self.eval(k.value) for k in e.keywords if k.arg}
            self.i.parsers.append(
                f"{self.where(e)}: {fname}("
                + ", ".join(f"{k}={v!r}" for k, v in kw.items() if k in ("allow_abbrev", "add_help", "prefix_chars"))
                + ")"
            )
            return ParserObj()
        # ``super().method(...)``
        target: Any
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and getattr(func.value.func, "id", "") == "super"
        ):
            owner = self.fn.owner
            target = self.index.method(owner, func.attr, skip_self=True) if owner else None
            bound = self.cls
        elif isinstance(func, ast.Attribute):
            recv = self.eval(func.value)
            target = self.index.method(recv, func.attr) if isinstance(recv, ClassRef) else None
            bound = recv if isinstance(recv, ClassRef) else None
        else:
            target = self.eval(func)
            bound = None
        args = [self.eval(a.value if isinstance(a, ast.Starred) else a) for a in e.args]
        kwargs = {k.arg: self.eval(k.value) for k in e.keywords if k.arg}
        tracked = [a for a in list(args) + list(kwargs.values()) if isinstance(a, (ParserObj, KwargsOf))]
        if isinstance(target, FuncRef) and target.node.name in self.i.dataclass_adders:
            if len(args) >= 2 and isinstance(args[1], ClassRef):
                self.sglang_dataclass_args(args[1], e)
                return None
            raise ExtractionError(f"{self.where(e)}: {target.node.name} with an unresolved class")
        if isinstance(target, FuncRef) and tracked:
            return self.i.call_function(target, args, kwargs, bound)
        if tracked:
            self.i.unfollowed.append(f"{self.where(e)}: {ast.unparse(e)}")
            # a call handed the parser and returning it: keep the parser
            return next((a for a in tracked if isinstance(a, ParserObj)), UNKNOWN)
        return UNKNOWN

    def eval_args(self, e: ast.Call) -> None:
        for a in e.args:
            self.eval(a)
        for k in e.keywords:
            self.eval(k.value)

    # -- registering options -----------------------------------------------------

    def add_argument(self, e: ast.Call) -> None:
        options: list[str] = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value)
                if v is None:
                    continue
                if not (isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)):
                    raise ExtractionError(f"{self.where(e)}: cannot evaluate *{ast.unparse(a.value)}")
                options.extend(v)
                continue
            v = self.eval(a)
            if not isinstance(v, str):
                raise ExtractionError(f"{self.where(e)}: cannot evaluate option string {ast.unparse(a)}")
            options.append(v)
        if not options or not all(o.startswith("-") for o in options):
            return  # a positional argument
        action: Any = UNKNOWN
        field_kw: FieldKw | None = None
        explicit_action = False
        for k in e.keywords:
            if k.arg == "action":
                action = self.eval(k.value)
                explicit_action = True
            elif k.arg is None:
                v = self.eval(k.value)
                if isinstance(v, FieldKw):
                    field_kw = v
                elif isinstance(v, KwDict):
                    field_kw = v.base
                    if "action" in v.items:
                        action = v.items["action"]
                        explicit_action = True
                else:
                    raise ExtractionError(f"{self.where(e)}: cannot evaluate **{ast.unparse(k.value)}")
        if field_kw is not None and not explicit_action and "action" in field_kw.overrides:
            action = field_kw.overrides["action"]
            explicit_action = True
        if explicit_action:
            if action is _DELETED:
                negatable = False  # ``del kw["action"]``: argparse's default "store"
            elif action is UNKNOWN:
                raise ExtractionError(f"{self.where(e)}: cannot evaluate the action of {options}")
            else:
                negatable = self.index.is_boolean_optional(action)
        elif field_kw is not None:
            negatable = vllm_field_is_boolean_optional(self.index, field_kw.owner.cls, field_kw.name)
        else:
            negatable = False
        self.i.added.append(Added(options, negatable, self.where(e)))

    def sglang_dataclass_args(self, cls: ClassRef, e: ast.Call) -> None:
        """Mirror sglang.srt.arg_groups.arg_utils.add_cli_args_from_dataclass."""
        if not is_dataclass_def(cls.node):
            raise ExtractionError(
                f"{self.where(e)}: {cls.qualname} is not a literal @dataclass; its fields "
                "are assembled at import time (SGLang >= 0.5.2x builds ServerArgs from "
                "arg_groups/fields/ namespaces) - extend the extractor for that layout"
            )
        before = len(self.i.added)
        for name, (owner, st) in self.index.dataclass_fields(cls).items():
            ann = st.annotation
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                ann = ast.parse(ann.value, mode="eval").body
            if not isinstance(ann, ast.Subscript):
                continue
            head = self.index.resolve_expr(owner.module, ann.value)
            head_name = head.dotted.split(".")[-1] if isinstance(head, External) else ""
            if isinstance(head, AliasRef):
                head_name = ast.unparse(head.expr).split(".")[-1]
            if head_name != "Annotated":
                continue
            elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            meta: dict[str, Any] | None = None
            for m in elts[1:]:
                meta = self._sglang_meta(owner.module, m)
                if meta is not None:
                    break
            if meta is None or meta.get("no_cli") is True:
                continue
            cli_name = meta.get("cli_name") or "--" + name.replace("_", "-")
            aliases = meta.get("aliases") or []
            if not (isinstance(cli_name, str) and isinstance(aliases, list) and all(isinstance(a, str) for a in aliases)):
                raise ExtractionError(f"{owner.module.path}:{st.lineno}: cannot evaluate cli_name/aliases of {name}")
            action = meta.get("action")
            negatable = action is not None and self.index.is_boolean_optional(action)
            self.i.added.append(
                Added([cli_name, *aliases], negatable, f"{owner.module.path}:{st.lineno} (field {name})")
            )
        if len(self.i.added) == before:
            raise ExtractionError(f"{self.where(e)}: no A[T, ...] CLI field found in {cls.qualname}")

    def _sglang_meta(self, mod: Module, m: ast.expr) -> dict[str, Any] | None:
        """Arg(...) -> its keywords; a string -> {} (help only); else None."""
        if isinstance(m, ast.Call):
            callee = self.index.resolve_expr(mod, m.func)
            cname = callee.node.name if isinstance(callee, ClassRef) else ast.unparse(m.func).split(".")[-1]
            if cname != "Arg":
                return None
            out: dict[str, Any] = {}
            for k in m.keywords:
                if k.arg is None:
                    raise ExtractionError(f"{mod.path}:{m.lineno}: Arg(**...) not supported")
                if k.arg in ("cli_name", "aliases", "no_cli"):
                    v = ast.literal_eval(k.value)
                elif k.arg == "action":
                    if isinstance(k.value, ast.Constant):
                        v = k.value.value
                    else:
                        v = self.index.resolve_expr(mod, k.value)
                else:
                    continue
                out[k.arg] = v
            if m.args:
                out.setdefault("help", "positional")
            return out
        if isinstance(m, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            if isinstance(m, ast.Constant) and not isinstance(m.value, str):
                return None
            return {}
        if isinstance(m, ast.Name):
            r = self.index.resolve(mod, m.id)
            if isinstance(r, AliasRef):
                return self._sglang_meta(r.module, r.expr)
            raise ExtractionError(f"{mod.path}:{m.lineno}: cannot evaluate Annotated metadata {m.id}")
        return None


_DELETED = object()


# ---------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------


def find_func(index: Index, modname: str, qual: str) -> FuncRef:
    mod = index.module(modname)
    if mod is None:
        raise ExtractionError(f"module {modname} not found")
    parts = qual.split(".")
    r = index.resolve(mod, parts[0])
    if len(parts) == 2:
        if not isinstance(r, ClassRef):
            raise ExtractionError(f"{modname}.{parts[0]} is not a class")
        m = index.method(r, parts[1])
        if m is None:
            raise ExtractionError(f"{modname}.{qual} not found")
        return m
    if not isinstance(r, FuncRef):
        raise ExtractionError(f"{modname}.{qual} is not a function")
    return r


@dataclass
class Result:
    options: list[str]
    added: list[Added]
    unfollowed: list[str]
    parsers: list[str]
    abbrev_mentions: list[str]
    entry: str
    version: str | None


def collect(interp: Interpreter) -> list[str]:
    out: set[str] = set()
    for a in interp.added:
        for o in a.options:
            out.add(o)
            if a.negatable and o.startswith("--"):
                out.add("--no-" + o[2:])
    return sorted(out)


def scan_allow_abbrev(src: Source) -> list[str]:
    hits = []
    for rel in src.read_log:
        text = src._raw_read(rel) or ""
        for n, line in enumerate(text.splitlines(), 1):
            if "allow_abbrev" in line:
                hits.append(f"{rel}:{n}: {line.strip()}")
    return hits


def package_version(src: Source, package: str) -> str | None:
    for rel in (f"{package}/_version.py", f"{package}/version.py"):
        text = src.read(rel)
        if text:
            m = re.search(r"""__version__\s*=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", text)
            if m:
                return m.group(1)
    return None


MIN_FLAGS = 50


def package_commit(src: Source, package: str) -> str | None:
    text = src.read(f"{package}/_version.py") or ""
    m = re.search(r"""commit_id\s*=\s*['"]g?([0-9a-f]{7,40})['"]""", text)
    return m.group(1) if m else None


def extract_vllm(src: Source) -> Result:
    index = Index(src, "vllm")
    interp = Interpreter(index)
    serve = find_func(index, "vllm.entrypoints.cli.serve", "ServeSubcommand.subparser_init")
    # The top-level ``vllm`` parser and the serve sub-parser class.
    # Read for the allow_abbrev scan: the top-level parser and the parser class.
    index.module("vllm.entrypoints.cli.main")
    index.module("vllm.utils.argparse_utils")
    interp.call_function(serve, [ParserObj()], {})
    result_opts = collect(interp)
    result_opts.append("--help")  # argparse add_help=True
    return Result(
        sorted(set(result_opts)), interp.added, interp.unfollowed, interp.parsers,
        scan_allow_abbrev(src), serve.qualname, package_version(src, "vllm"),
    )


def extract_sglang(src: Source) -> Result:
    index = Index(src, "sglang")
    interp = Interpreter(index)
    entry = find_func(index, "sglang.srt.server_args", "prepare_server_args")
    index.module("sglang.launch_server")
    index.module("sglang.srt.arg_groups.arg_utils")
    interp.call_function(entry, [["--help"]], {})
    result_opts = collect(interp)
    if not any("add_help=False" in p for p in interp.parsers):
        result_opts.append("--help")
    return Result(
        sorted(set(result_opts)), interp.added, interp.unfollowed, interp.parsers,
        scan_allow_abbrev(src), entry.qualname, package_version(src, "sglang"),
    )


ENGINES = {
    "vllm": ("vllm", extract_vllm, "vllm serve (vllm.entrypoints.cli.serve)"),
    "sglang": ("sglang", extract_sglang, "python3 -m sglang.launch_server / sglang serve"),
}


def listed(options: list[str]) -> list[str]:
    """Long options plus multi-character single-dash options."""
    return [o for o in options if o.startswith("--") or (o.startswith("-") and len(o) > 2)]


# ---------------------------------------------------------------------------
# Prefix analysis (what argparse allow_abbrev reads as a flag)
# ---------------------------------------------------------------------------


def shortest_unique_prefix(flags: list[str], target: str) -> str | None:
    """Shortest ``--x`` that argparse (allow_abbrev) resolves to ``target``.

    A token resolves to ``target`` if it equals it, or if it is a prefix of
    ``target`` and of no other option string (an exact match with another
    option wins over any prefix match).  Returns None when only the full
    spelling is accepted."""
    others = [f for f in flags if f != target]
    for n in range(3, len(target)):
        p = target[:n]
        if p in others:
            continue
        if not any(f.startswith(p) for f in others):
            return p
    return None


def read_flag_file(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def render(engine: str, src: Source, res: Result, version: str, date: str,
           method: str | None, notes: list[str], source_label: str | None = None) -> str:
    opts = listed(res.options)
    singles = [o for o in opts if not o.startswith("--")]
    negs = [o for o in opts if o.startswith("--no-")]
    h = [
        f"# engine: {engine}",
        f"# version: {version}" + (f" (tag {src.tag})" if src.tag else ""),
        f"# commit: {src.commit or 'unknown'}",
        f"# parser: {ENGINES[engine][2]}; entry {res.entry}",
        f"# source: {source_label or ('git directory ' + str(src.git_dir) if src.git_dir else 'directory tree ' + src.path)}",
        "# files read:",
    ]
    h += [f"#   {r}" for r in src.read_log]
    h += [
        "# method: " + (method or
            "tools/extract-engine-flags/extract.py: static AST analysis of the "
            "functions that build the parser (no engine code executed)"),
        f"# date: {date}",
        "# allow_abbrev: "
        + ("ON (argparse default; no allow_abbrev anywhere in the files read)"
           if not res.abbrev_mentions else "MENTIONED - check:"),
    ]
    h += [f"#   {m}" for m in res.abbrev_mentions]
    h += [f"# parser constructed: {p}" for p in res.parsers]
    if res.unfollowed:
        h.append("# calls handed the parser but not followed (cannot be resolved statically):")
        h += [f"#   {u}" for u in res.unfollowed]
    h += [
        f"# counts: {len(opts)} listed = {len(opts) - len(singles)} '--' options "
        f"(of which {len(negs)} '--no-' negations) + {len(singles)} multi-character "
        "single-dash options",
        "# listed: every '--' option string of the parser, including the '--no-X' forms of",
        "#   BooleanOptionalAction flags and argparse's own --help; ALSO the multi-character",
        "#   single-dash options (e.g. -tp) - they never match a '--' prefix; single-character",
        "#   short options (-h, -q, ...) are omitted.",
    ]
    h += [f"# note: {n}" for n in notes]
    return "\n".join(h + opts) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=sorted(ENGINES))
    ap.add_argument("--source", help="git dir or directory tree holding the engine package")
    ap.add_argument("--tag", help="git tag to read (required for a git source)")
    ap.add_argument("--version", help="engine version for the header")
    ap.add_argument("--commit", help="commit id to record for a directory source")
    ap.add_argument("--date", default=_dt.datetime.now(_dt.timezone.utc).date().isoformat())
    ap.add_argument("--method", help="override the extraction-method header line")
    ap.add_argument("--source-label", help="describe the source in the header (e.g. the wheel's file name)")
    ap.add_argument("--note", action="append", default=[], help="extra header note (repeatable)")
    ap.add_argument("--output", "-o", help="write here instead of stdout")
    ap.add_argument("--prefixes", metavar="FLAGFILE",
                    help="instead of extracting: print the shortest unique prefix of each flag named after it")
    ap.add_argument("flags", nargs="*", help="with --prefixes: the flags to analyse")
    # The flags analysed by --prefixes start with "--", so stop option parsing there.
    if argv is None:
        argv = sys.argv[1:]
    if "--prefixes" in argv:
        i = argv.index("--prefixes")
        flags = read_flag_file(argv[i + 1])
        for t in argv[i + 2:]:
            if t not in flags:
                print(f"{t}\tNOT A FLAG OF THIS PARSER")
                continue
            p = shortest_unique_prefix(flags, t)
            stem = t[: len(p) - 1] if p else t[:-1]
            sharing = sorted(f for f in flags if f != t and f.startswith(stem))
            print(f"{t}\t{p or '(full spelling only)'}\t{' '.join(sharing)}")
        return 0
    args = ap.parse_args(argv)
    if not (args.engine and args.source):
        ap.error("--engine and --source are required")
    package, fn, _ = ENGINES[args.engine]
    try:
        src = Source(args.source, args.tag, package)
        if args.commit:
            src.commit = args.commit
        res = fn(src)
    except (SourceError, ExtractionError, KeyError) as e:
        print(f"extract.py: {e}", file=sys.stderr)
        return 2
    if len(listed(res.options)) < MIN_FLAGS:
        print(
            f"extract.py: only {len(listed(res.options))} options found (expected hundreds); "
            "the engine's parser layout has probably changed - extend the extractor",
            file=sys.stderr,
        )
        for u in res.unfollowed:
            print(f"  not followed: {u}", file=sys.stderr)
        return 2
    if src.commit is None:
        abbrev = package_commit(src, package)
        if abbrev:
            src.commit = f"{abbrev} (abbreviated, from {package}/_version.py; pass --commit for the full id)"
    version = args.version or (args.tag.lstrip("v") if args.tag else None) or res.version or "unknown"
    text = render(args.engine, src, res, version, args.date, args.method, args.note,
                  args.source_label)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
