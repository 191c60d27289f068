#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""render-gen.py: cases for mad-render's differential test (t/bats/mad-render-diff.bats).

usage: render-gen.py SEED COUNT OUTDIR
       render-gen.py --split CASES OUTDIR

The first form writes COUNT random but valid templates with their data,
OUTDIR/N.j2 and OUTDIR/N.yaml or OUTDIR/N.json (N = 1..COUNT), and the
names in OUTDIR/list.  The same SEED gives the same files.  The templates
mix every construct of the subset (t/oracle/render-spec.md): text with
shell metacharacters, {{ }} with every filter, if/elif/else, for over lists,
dicts and .items(), loop.*, set, comments, every whitespace-control form,
#SBATCH lines.  "Valid" means that they render without an error: the
generator evaluates every expression itself, for every pass of every loop,
and only writes what is defined, well typed and in range (no division by
zero, no non-ASCII text into lower/upper, no newline into sbatch...).

The second form splits the hand-written cases (t/oracle/render-cases.txt)
into the same layout: OUTDIR/NAME.j2, the data files NAME.yaml, NAME.json,
NAME.2.yaml..., NAME.args (the arguments before the template, one a line),
NAME.expect (the expected output, when the case gives it), NAME.error (when
the case must fail: a piece of the oracle's message), NAME.data-error (when
that error is in a data file) and OUTDIR/list.

Plain python3 and python3-yaml only.
"""
import json
import os
import posixpath
import random
import re
import sys

import yaml

INT_TEXT = re.compile(r"[+-]?[0-9]+\Z")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# ------------------------------------------------------------------ split


def decode_esc(s):
    """\\n newline, \\t tab, \\s space, \\r carriage return, \\\\ backslash."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append({"n": "\n", "t": "\t", "s": " ", "r": "\r", "\\": "\\"}.get(s[i + 1], "\\" + s[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_cases(path, outdir):
    """The cases file: lines that start with '#:' are comments, anywhere.
    Blocks start with '=== NAME', then free text, then
    sections '--- KIND [FLAG]...' running to the next section or block:
      --- yaml | --- json     a data file (-c), several in order
      --- define              -D key=value lines
      --- template            the template
      --- expect              the expected output (optional)
      --- error [data]        the case fails; the section holds a piece of
                              the oracle's message (may be empty); "data":
                              the error is in a data file (NAME.data-error)
    Empty lines at the end of a section are dropped (they separate cases).
    Every other line ends in a newline; the flag 'noeol' drops the last one.
    The flag 'esc' joins the lines WITHOUT newlines and decodes \\n \\t \\s
    (space) \\r \\\\: for blank lines at the end, trailing blanks, tabs and
    carriage returns that an editor would lose."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cases, cur, sec = [], None, None
    for ln in lines:
        if ln.startswith("#:"):
            continue  # a comment of the cases file, anywhere
        if ln.startswith("=== "):
            cur = {"name": ln[4:].strip(), "sections": []}
            cases.append(cur)
            sec = None
        elif ln.startswith("--- ") and cur is not None:
            words = ln[4:].split()
            sec = {"kind": words[0], "flags": set(words[1:]), "lines": []}
            cur["sections"].append(sec)
        elif sec is not None:
            sec["lines"].append(ln)
    os.makedirs(outdir, exist_ok=True)
    names = []
    for c in cases:
        name = c["name"]
        if not re.match(r"[a-z0-9][a-z0-9-]*\Z", name) or name in names:
            sys.exit(f"render-gen.py: {path}: bad or repeated case name {name!r}")
        names.append(name)
        args, ndata, kinds = [], 0, set()
        for s in c["sections"]:
            while s["lines"] and s["lines"][-1] == "":
                s["lines"].pop()
            if "esc" in s["flags"]:
                body = decode_esc("".join(s["lines"]))
            else:
                body = "".join(x + "\n" for x in s["lines"])
                if "noeol" in s["flags"] and body.endswith("\n"):
                    body = body[:-1]
            kind = s["kind"]
            kinds.add(kind)
            if kind in ("yaml", "json"):
                ndata += 1
                fn = f"{name}.{kind}" if ndata == 1 else f"{name}.{ndata}.{kind}"
                args += ["-c", fn]
            elif kind == "define":
                for d in s["lines"]:
                    args += ["-D", d]
                continue
            elif kind == "template":
                fn = f"{name}.j2"
            elif kind == "expect":
                fn = f"{name}.expect"
            elif kind == "error":
                fn = f"{name}.error"
                body = body.strip() + "\n"
                if "data" in s["flags"]:  # an error in a data file
                    open(os.path.join(outdir, name + ".data-error"), "w").close()
            else:
                sys.exit(f"render-gen.py: {path}: case {name}: unknown section {kind!r}")
            with open(os.path.join(outdir, fn), "w", encoding="utf-8", newline="") as f:
                f.write(body)
        if "template" not in kinds:
            sys.exit(f"render-gen.py: {path}: case {name} has no template")
        if "expect" in kinds and "error" in kinds:
            sys.exit(f"render-gen.py: {path}: case {name} both expects output and an error")
        with open(os.path.join(outdir, name + ".args"), "w", encoding="utf-8") as f:
            f.write("".join(a + "\n" for a in args))
    with open(os.path.join(outdir, "list"), "w") as f:
        f.write("".join(n + "\n" for n in names))
    return names


# ------------------------------------------------------------------ values
# The generator's own model of the contract: enough to know that an
# expression is defined, well typed and in range in every pass.

LIMIT = 10 ** 12  # keeps every integer far from the 64-bit edge


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def text(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    return str(v)


def is_scalar(v):
    return v is None or isinstance(v, (bool, int, str))


class Loop:
    def __init__(self, i, n):
        self.index, self.index0 = i + 1, i
        self.first, self.last, self.length = i == 0, i == n - 1, n


class Expr:
    def __init__(self, src, vals, level, test=False):
        self.src, self.vals, self.level = src, vals, level
        self.test = test  # "x is ...": no second "is" may follow


# Jinja2's grammar, loosest first (see jinja2/parser.py): or, and, not,
# compare, + -, ~, * // %, unary -, filters and tests, attributes and
# subscripts, atoms.
OR, AND, NOT, CMP, ADD, CONCAT, MUL, UNARY, FILTER, POSTFIX, ATOM = range(1, 12)


def par(e, level):
    # A test is always parenthesized as an operand: Jinja2 reads a name or
    # a literal right after "is TEST" as the test's argument
    # ("x is defined not in l" is not "(x is defined) not in l").
    return e.src if e.level >= level and not e.test else f"({e.src})"


# ------------------------------------------------------------------ strings

SAFE_WORDS = ["abc", "node01", "a.b", "x_y-z", "/scratch/run/out.log", "user@host", "50%",
              "+1", "a:b,c", "-n", "42", "-7", "0", "007", "Hello", "v1.2.3", "a/b/", "/",
              "//x", "x", "MAD_RANK", "_x1", "GPU", "lib64", "a,b,c", "e-mail", "x.y.z"]
NASTY = ["a b", "it's", 'say "hi"', "$(touch PWNED)", "`touch PWNED`", "line1\nline2", "*",
         "?", "[ab]", "~", "~user", "!x", "a=b", "#c", "tab\there", "back\\slash", "é", "日本語",
         "", "false", "None", "True", " lead", "trail ", "a;b", "a|b", "a&b", "a>b", "<in",
         "${HOME}", "$HOME", "\\n", "'", "''", '"', "\\", "{}", "}}", "{{ x }}", "%}", "a#b",
         "ünïcödé", "😀", "--flag=x y", "x'y\"z", "\t", "\n", "  ", "-", "=", "--", "a\\'b",
         "{% if %}", "#}", "\\\\", "'\\''", "Ωmega", "A\u00a0B", "x\n", "\ny"]
ALPHABET = ("abcxyzABZ019_-./@%+:,= \t\n'\"$`\\*?[]~!#;|&<>(){}é日😀")


def rand_string(rng):
    r = rng.random()
    if r < 0.35:
        return rng.choice(SAFE_WORDS)
    if r < 0.75:
        return rng.choice(NASTY)
    if r < 0.98:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(500, 3000)))


def ident(rng):
    return rng.choice(["A", "x", "MAD_X", "_y", "PATH2", "my_var", "OMP_NUM_THREADS", "a1"])


def literal(s, rng):
    """S as a Jinja2 string literal, with the supported escapes only."""
    q = rng.choice("'\"")
    out = []
    for c in s:
        if c == "\\":
            out.append("\\\\")
        elif c == q:
            out.append("\\" + q)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append(rng.choice(["\\t", "\t"]))
        elif c in "'\"" and rng.random() < 0.3:
            out.append("\\" + c)  # an escape that is not needed
        else:
            out.append(c)
    return q + "".join(out) + q


def ascii_text(v):
    return isinstance(v, str) and all(32 <= ord(c) < 127 or c in "\t\n" for c in v)


def sbatch_ok(v):
    return is_int(v) or (isinstance(v, str) and not any(c in v for c in "\n\r\0"))


# ------------------------------------------------------------------ data


def make_data(rng, fmt):
    d = {}
    for i in range(1, rng.randint(2, 5)):
        d[f"s{i}"] = rand_string(rng)
    d["name"] = rng.choice(["job", "my job", "it's", "a-b_c", "x" * rng.randint(1, 40)])
    d["n1"] = str(rng.randint(-50, 400))
    d["n2"] = rng.choice(["0", "-3", "+12", "0007", str(rng.randint(1, 99))])
    d["l1"] = [rand_string(rng) for _ in range(rng.randint(0, 4))]
    d["l2"] = [rng.randint(-20, 20) for _ in range(rng.randint(1, 4))]
    d["names"] = [ident(rng) for _ in range(rng.randint(1, 3))]
    d["env"] = {ident(rng) + str(i): rand_string(rng) for i in range(rng.randint(1, 4))}
    d["cfg"] = {"a": {"b": rand_string(rng), "c": [rand_string(rng) for _ in range(rng.randint(1, 3))]},
                "name": rand_string(rng), "my-key": rand_string(rng)}
    d["recs"] = [{"name": rand_string(rng), "n": rng.randint(0, 9)} for _ in range(rng.randint(1, 3))]
    d["empty"] = rng.choice([[], "", {}])
    if fmt == "json":
        d["i1"] = rng.randint(-1000, 1000)
        d["i2"] = rng.choice([0, 1, -1, 7, 2 ** 31, -(2 ** 33), rng.randint(-9, 9)])
        d["b1"] = rng.random() < 0.5
        d["b2"] = rng.random() < 0.5
        d["z"] = None
        d["mixed"] = [rng.choice([1, "1", True, None, "x y", -4]) for _ in range(rng.randint(1, 4))]
    else:
        # YAML: every scalar is a string
        def strs(v):
            if isinstance(v, dict):
                return {k: strs(x) for k, x in v.items()}
            if isinstance(v, list):
                return [strs(x) for x in v]
            return text(v)
        d = strs(d)
    return d


def dump_data(d, fmt, rng):
    if fmt == "json":
        return json.dumps(d, ensure_ascii=rng.random() < 0.3, indent=rng.choice([None, 1, 2]))
    out = yaml.safe_dump(d, allow_unicode=rng.random() < 0.8, sort_keys=False, width=4096,
                         default_flow_style=rng.choice([False, None]))
    if yaml.load(out, Loader=yaml.BaseLoader) != d:
        raise AssertionError("YAML does not read back")
    return out


# ------------------------------------------------------------------ expressions


class Ctx:
    """The names in scope, and the passes (instances) the code runs in: each
    a dict name -> value.  Under an if or a for, the instances are those
    where the branch runs, one per pass of every enclosing loop."""

    def __init__(self, inst, names):
        self.inst = inst
        self.names = names  # names usable in expressions

    def child(self, inst, extra=()):
        return Ctx(inst, self.names + [n for n in extra if n not in self.names])

    def vals(self, name):
        return [i[name] for i in self.inst]


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.fresh = 0

    def new_name(self, prefix):
        self.fresh += 1
        return f"{prefix}{self.fresh}"

    # typed producers: each returns an Expr or None

    def names_where(self, ctx, pred):
        return [n for n in ctx.names if n != "loop" and all(pred(v) for v in ctx.vals(n))]

    def paths(self, ctx, pred):
        """Names, attributes and subscripts whose value satisfies PRED everywhere."""
        out = [Expr(n, ctx.vals(n), ATOM) for n in self.names_where(ctx, pred)]
        for n in self.names_where(ctx, lambda v: isinstance(v, (dict, list))):
            vals = ctx.vals(n)
            if all(isinstance(v, dict) for v in vals) and vals:
                keys = set(vals[0])
                for v in vals[1:]:
                    keys &= set(v)
                for k in sorted(keys):
                    sub = [v[k] for v in vals]
                    if NAME_RE.match(k) and self.rng.random() < 0.6:
                        e = Expr(f"{n}.{k}", sub, POSTFIX)
                    else:
                        e = Expr(f"{n}[{literal(k, self.rng)}]", sub, POSTFIX)
                    if all(pred(v) for v in sub):
                        out.append(e)
                    if all(isinstance(v, (dict, list)) for v in sub):
                        out += self.deeper(e, pred)
            elif all(isinstance(v, list) for v in vals) and vals:
                m = min(len(v) for v in vals)
                for i in range(-m, m):
                    sub = [v[i] for v in vals]
                    e = Expr(f"{n}[{i}]", sub, POSTFIX)
                    if all(pred(v) for v in sub):
                        out.append(e)
                    if all(isinstance(v, (dict, list)) for v in sub):
                        out += self.deeper(e, pred)
        return out

    def deeper(self, e, pred):
        out = []
        vals = e.vals
        if all(isinstance(v, dict) for v in vals):
            keys = set(vals[0])
            for v in vals[1:]:
                keys &= set(v)
            for k in sorted(keys):
                sub = [v[k] for v in vals]
                if all(pred(v) for v in sub):
                    src = f"{e.src}.{k}" if NAME_RE.match(k) else f"{e.src}[{literal(k, self.rng)}]"
                    out.append(Expr(src, sub, POSTFIX))
        elif all(isinstance(v, list) for v in vals):
            m = min(len(v) for v in vals)
            for i in range(-m, m):
                sub = [v[i] for v in vals]
                if all(pred(v) for v in sub):
                    out.append(Expr(f"{e.src}[{i}]", sub, POSTFIX))
        return out

    def const(self, ctx, v, src=None):
        if src is None:
            if isinstance(v, str):
                src = literal(v, self.rng)
            elif isinstance(v, bool):
                src = self.rng.choice(["true", "True"] if v else ["false", "False"])
            elif v is None:
                src = self.rng.choice(["none", "None"])
            else:
                src = str(v)
        lvl = ATOM
        if is_int(v) and v < 0:
            src, lvl = f"-{-v}", UNARY
        return Expr(src, [v] * len(ctx.inst), lvl)

    def pick_path(self, ctx, pred):
        ps = self.paths(ctx, pred)
        return self.rng.choice(ps) if ps else None

    def gen(self, ctx, want, depth):
        """An expression of type WANT (str, int, bool, scalar, list, dict, any)."""
        for _ in range(12):
            e = self.try_gen(ctx, want, depth)
            if e is not None:
                return e
        return self.fallback(ctx, want)

    def fallback(self, ctx, want):
        v = {"str": "x y", "int": 3, "bool": True, "scalar": "s", "list": ["a", "b c"],
             "dict": None, "any": "t"}[want]
        if want == "dict":
            return Expr("cfg", ctx.vals("cfg"), ATOM)
        if want == "list":
            return Expr("['a', 'b c']", [["a", "b c"]] * len(ctx.inst), ATOM)
        return self.const(ctx, v)

    def try_gen(self, ctx, want, depth):
        rng = self.rng
        if want == "scalar":
            want = rng.choice(["str", "str", "int", "bool", "none"])
            if want == "none":
                if rng.random() < 0.5 and "z" in ctx.names:
                    return Expr("z", ctx.vals("z"), ATOM)
                return self.const(ctx, None)
        if want == "any":
            want = rng.choice(["str", "int", "bool", "list", "dict", "str"])
        leaf = depth <= 0 or rng.random() < 0.3
        if want == "str":
            return self.gen_str(ctx, depth, leaf)
        if want == "int":
            return self.gen_int(ctx, depth, leaf)
        if want == "bool":
            return self.gen_bool(ctx, depth, leaf)
        if want == "list":
            if rng.random() < 0.7:
                p = self.pick_path(ctx, lambda v: isinstance(v, list) and all(is_scalar(x) for x in v))
                if p:
                    return p
            items = [self.gen(ctx, "scalar", depth - 1) for _ in range(rng.randint(0, 3))]
            return Expr("[" + ", ".join(i.src for i in items) + "]",
                        [[i.vals[k] for i in items] for k in range(len(ctx.inst))], ATOM)
        if want == "dict":
            return self.pick_path(ctx, lambda v: isinstance(v, dict))
        raise AssertionError(want)

    def gen_str(self, ctx, depth, leaf):
        rng = self.rng
        r = rng.random()
        if leaf:
            if r < 0.5:
                p = self.pick_path(ctx, lambda v: isinstance(v, str))
                if p:
                    return p
            return self.const(ctx, rand_string(rng) if rng.random() < 0.7 else rng.choice(SAFE_WORDS))
        d = depth - 1
        k = rng.randrange(13)
        if k == 0:  # a ~ b
            a, b = self.gen(ctx, "scalar", d), self.gen(ctx, "scalar", d)
            return Expr(f"{par(a, MUL)} ~ {par(b, MUL)}",
                        [text(x) + text(y) for x, y in zip(a.vals, b.vals)], CONCAT)
        if k == 1:  # str + str
            a, b = self.gen(ctx, "str", d), self.gen(ctx, "str", d)
            return Expr(f"{par(a, ADD)} + {par(b, CONCAT)}",
                        [x + y for x, y in zip(a.vals, b.vals)], ADD)
        if k == 2:  # lower / upper / trim of ASCII text
            a = self.gen(ctx, "str", d)
            if not all(ascii_text(v) for v in a.vals):
                return None
            f = rng.choice(["lower", "upper", "trim"])
            fn = {"lower": str.lower, "upper": str.upper, "trim": str.strip}[f]
            return Expr(f"{par(a, UNARY)} | {f}", [fn(v) for v in a.vals], FILTER)
        if k == 3:  # replace
            a = self.gen(ctx, "str", d)
            old = rng.choice(["a", " ", "'", "/", "x", "$", "é", "\n", "ab", "."])
            new = rng.choice(["", "_", "A", "''", " ", "\\", "日", "-"])
            return Expr(f"{par(a, UNARY)} | replace({literal(old, rng)}, {literal(new, rng)})",
                        [v.replace(old, new) for v in a.vals], FILTER)
        if k == 4:  # basename / dirname
            a = self.gen(ctx, "str", d) if rng.random() < 0.5 else self.const(
                ctx, rng.choice(["/a/b/c", "a/b/", "/", "//x", "a", "", "../x y/z", "/tmp//f", "a//b"]))
            f = rng.choice(["basename", "dirname"])
            fn = posixpath.basename if f == "basename" else posixpath.dirname
            return Expr(f"{par(a, UNARY)} | {f}", [fn(v) for v in a.vals], FILTER)
        if k == 5:  # string
            a = self.gen(ctx, "scalar", d)
            return Expr(f"{par(a, UNARY)} | string", [text(v) for v in a.vals], FILTER)
        if k == 6:  # default
            alt = self.gen(ctx, "str", d)
            c = rng.randrange(4)
            if c == 0:
                return Expr(f"{rng.choice(['missing', 'undefined_x', 'nope'])} | default({alt.src})",
                            alt.vals, FILTER)
            if c == 1:
                p = self.pick_path(ctx, lambda v: isinstance(v, dict))
                if p is None or p.level < POSTFIX:
                    return None
                return Expr(f"{p.src}.no_such_key | default({alt.src})", alt.vals, FILTER)
            a = self.gen(ctx, "str", d)
            if c == 2:
                return Expr(f"{par(a, UNARY)} | default({alt.src})", a.vals, FILTER)
            return Expr(f"{par(a, UNARY)} | default({alt.src}, true)",
                        [x if x else y for x, y in zip(a.vals, alt.vals)], FILTER)
        if k == 7:  # join
            a = self.gen(ctx, "list", d)
            sep = rng.choice([",", " ", "", ", ", "'", ":", "\n"])
            if not all(isinstance(v, list) for v in a.vals):
                return None
            return Expr(f"{par(a, UNARY)} | join({literal(sep, rng)})",
                        [sep.join(text(x) for x in v) for v in a.vals], FILTER)
        if k == 8:  # first / last of a list of strings
            p = self.pick_path(ctx, lambda v: isinstance(v, list) and v and all(isinstance(x, str) for x in v))
            if p is None:
                return None
            f = rng.choice(["first", "last"])
            return Expr(f"{par(p, UNARY)} | {f}", [v[0] if f == "first" else v[-1] for v in p.vals], FILTER)
        if k == 9:  # a or b / a and b, both strings
            a, b = self.gen(ctx, "str", d), self.gen(ctx, "str", d)
            if rng.random() < 0.5:
                return Expr(f"{par(a, OR)} or {par(b, AND)}", [x or y for x, y in zip(a.vals, b.vals)], OR)
            return Expr(f"{par(a, AND)} and {par(b, NOT)}", [x and y for x, y in zip(a.vals, b.vals)], AND)
        if k == 10:  # the loop variable or a set name
            return self.pick_path(ctx, lambda v: isinstance(v, str))
        if k == 11:  # string filters chained
            a = self.gen(ctx, "str", d)
            if not all(ascii_text(v) for v in a.vals):
                return None
            return Expr(f"{par(a, UNARY)} | trim | upper | replace('A', 'a')",
                        [v.strip().upper().replace("A", "a") for v in a.vals], FILTER)
        # parenthesized
        a = self.gen(ctx, "str", d)
        return Expr(f"({a.src})", a.vals, ATOM)

    def gen_int(self, ctx, depth, leaf):
        rng = self.rng
        ok = lambda v: is_int(v) and abs(v) < LIMIT  # noqa: E731
        if leaf:
            r = rng.random()
            if r < 0.4:
                p = self.pick_path(ctx, ok)
                if p:
                    return p
            if r < 0.55 and "loop" in ctx.names:
                a = rng.choice(["index", "index0", "length"])
                return Expr(f"loop.{a}", [getattr(i["loop"], a) for i in ctx.inst], POSTFIX)
            return self.const(ctx, rng.choice([0, 1, 2, 3, 7, 10, 42, -1, -5, 100, 12345]))
        d = depth - 1
        k = rng.randrange(9)
        if k in (0, 1):  # + - *
            a, b = self.gen(ctx, "int", d), self.gen(ctx, "int", d)
            op = rng.choice(["+", "-", "*"])
            if op == "*":
                vals = [x * y for x, y in zip(a.vals, b.vals)]
                s = f"{par(a, MUL)} * {par(b, UNARY)}"
                lvl = MUL
            else:
                vals = [x + y if op == "+" else x - y for x, y in zip(a.vals, b.vals)]
                s = f"{par(a, ADD)} {op} {par(b, CONCAT)}"
                lvl = ADD
            if not all(ok(v) for v in vals):
                return None
            return Expr(s, vals, lvl)
        if k in (2, 3):  # // % (Python's floor), the divisor never zero
            a, b = self.gen(ctx, "int", d), self.gen(ctx, "int", d)
            if any(y == 0 for y in b.vals):
                return None
            op = rng.choice(["//", "%"])
            vals = [x // y if op == "//" else x % y for x, y in zip(a.vals, b.vals)]
            return Expr(f"{par(a, MUL)} {op} {par(b, UNARY)}", vals, MUL)
        if k == 4:  # unary minus: its operand takes no filter
            a = self.gen(ctx, "int", d)
            src = f"-{a.src}" if a.level >= POSTFIX else f"-({a.src})"
            return Expr(src, [-v for v in a.vals], UNARY)
        if k == 5:  # | int
            p = self.pick_path(ctx, lambda v: (isinstance(v, str) and INT_TEXT.match(v)
                                               and abs(int(v)) < LIMIT) or ok(v))
            if p is None:
                lit = rng.choice(["12", "-3", "+4", "007", "0", "-0"])
                p = self.const(ctx, lit)
            return Expr(f"{par(p, UNARY)} | int", [int(v) for v in p.vals], FILTER)
        if k == 6:  # | length
            p = self.pick_path(ctx, lambda v: isinstance(v, (str, list, dict)))
            if p is None:
                return None
            return Expr(f"{par(p, UNARY)} | length", [len(v) for v in p.vals], FILTER)
        if k == 7:  # first / last of ints
            p = self.pick_path(ctx, lambda v: isinstance(v, list) and v and all(is_int(x) for x in v))
            if p is None:
                return None
            f = rng.choice(["first", "last"])
            return Expr(f"{par(p, UNARY)} | {f}", [v[0] if f == "first" else v[-1] for v in p.vals], FILTER)
        a = self.gen(ctx, "int", d)
        return Expr(f"({a.src})", a.vals, ATOM)

    def gen_bool(self, ctx, depth, leaf):
        rng = self.rng
        if leaf:
            r = rng.random()
            if r < 0.3:
                p = self.pick_path(ctx, lambda v: isinstance(v, bool))
                if p:
                    return p
            if r < 0.5 and "loop" in ctx.names:
                a = rng.choice(["first", "last"])
                return Expr(f"loop.{a}", [getattr(i["loop"], a) for i in ctx.inst], POSTFIX)
            return self.const(ctx, rng.random() < 0.5)
        d = depth - 1
        k = rng.randrange(10)
        if k in (0, 1):  # compare int with int, str with str
            t = rng.choice(["int", "str"])
            a, b = self.gen(ctx, t, d), self.gen(ctx, t, d)
            op = rng.choice(["==", "!=", "<", "<=", ">", ">="])
            fn = {"==": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y,
                  "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y}[op]
            return Expr(f"{par(a, ADD)} {op} {par(b, ADD)}",
                        [fn(x, y) for x, y in zip(a.vals, b.vals)], CMP)
        if k == 2:  # in / not in
            c = rng.randrange(3)
            if c == 0:
                a, b = self.gen(ctx, "str", d), self.gen(ctx, "str", d)
                if rng.random() < 0.5:
                    a = self.const(ctx, rng.choice(["a", "", " ", "x", "'", "é"]))
            elif c == 1:
                b = self.gen(ctx, "list", d)
                a = self.gen(ctx, rng.choice(["str", "int"]), d)
                if not all(isinstance(v, list) for v in b.vals):
                    return None
            else:
                b = self.gen(ctx, "dict", d)
                if b is None:
                    return None
                a = self.const(ctx, rng.choice(["a", "name", "b", "zz", "my-key"]))
            neg = rng.random() < 0.4
            vals = [(x in y) != neg for x, y in zip(a.vals, b.vals)]
            return Expr(f"{par(a, ADD)} {'not in' if neg else 'in'} {par(b, ADD)}", vals, CMP)
        if k == 3:  # is defined
            c = rng.randrange(3)
            if c == 0:
                n = rng.choice(["missing", "nope", "s1", "name", "l1", "cfg"])
                vals = [n in ctx.names] * len(ctx.inst)
                src = n
            elif c == 1:
                p = self.pick_path(ctx, lambda v: isinstance(v, dict))
                if p is None or p.level < POSTFIX:
                    return None
                key = rng.choice(["a", "name", "zz", "b"])
                vals = [key in v for v in p.vals]
                src = f"{p.src}.{key}"
            else:
                n = rng.choice(ctx.names)
                if n == "loop":
                    return None
                vals = [True] * len(ctx.inst)
                src = n
            neg = rng.random() < 0.4
            return Expr(f"{src} is {'not ' if neg else ''}defined", [v != neg for v in vals], FILTER, True)
        if k == 4:  # is none
            a = self.gen(ctx, "scalar", d)
            neg = rng.random() < 0.4
            src = f"({a.src})" if a.test else par(a, UNARY)
            return Expr(f"{src} is {'not ' if neg else ''}none",
                        [(v is None) != neg for v in a.vals], FILTER, True)
        if k == 5:  # not
            a = self.gen(ctx, "any", d)
            return Expr(f"not {par(a, NOT)}", [not v for v in a.vals], NOT)
        if k in (6, 7):  # and / or of booleans
            a, b = self.gen(ctx, "bool", d), self.gen(ctx, "bool", d)
            if k == 6:
                return Expr(f"{par(a, AND)} and {par(b, NOT)}", [x and y for x, y in zip(a.vals, b.vals)], AND)
            return Expr(f"{par(a, OR)} or {par(b, AND)}", [x or y for x, y in zip(a.vals, b.vals)], OR)
        if k == 8:  # chained comparison of integers
            a, b, c = (self.gen(ctx, "int", d) for _ in range(3))
            return Expr(f"{par(a, ADD)} <= {par(b, ADD)} < {par(c, ADD)}",
                        [x <= y < z for x, y, z in zip(a.vals, b.vals, c.vals)], CMP)
        a = self.gen(ctx, "bool", d)
        return Expr(f"({a.src})", a.vals, ATOM)

    # ------------------------------------------------------------------ statements

    def text_chunk(self):
        """Template text: never starts or ends with a quote (the quote rule),
        never holds a tag opener, never ends with '{'."""
        return self.rng.choice(["echo ", "export ", "x=", " ", "  ", "cd ", "srun ", "--opt=",
                                "a b ", "$HOME/", "${X}", "; ", " && ", "# note ", "(", ")",
                                "-", "=", "=x", "\t", " | ", "> out.txt ", "}}", "%}", "#}",
                                "é ", "a'b", "say \"x\" now", "\\", "}", "[", "]", "*", "$"])

    def tag(self, kind, body):
        rng = self.rng
        o, c = {"var": ("{{", "}}"), "block": ("{%", "%}"), "comment": ("{#", "#}")}[kind]
        lw = rng.choice(["", "", "", "-"] + (["+"] if kind != "var" else []))
        rw = rng.choice(["", "", "", "-"] + (["+"] if kind != "var" else []))
        sp1 = rng.choice([" ", " ", "", "  "]) if lw == "" else rng.choice([" ", "  "])
        if body[:1] in "-+":
            sp1 = " "  # {{-5}} would be whitespace control
        sp2 = rng.choice([" ", " ", "", "  "]) if rw == "" else rng.choice([" ", "  "])
        return f"{o}{lw}{sp1}{body}{sp2}{rw}{c}"

    def output(self, ctx):
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            e = self.gen(ctx, "scalar", rng.randint(0, 3))
            return self.tag("var", e.src)
        if r < 0.7:
            e = self.gen(ctx, rng.choice(["str", "int"]), rng.randint(0, 2))
            if not all(isinstance(v, str) or is_int(v) for v in e.vals):
                return self.tag("var", e.src)
            return self.tag("var", f"{par(e, UNARY)} | raw")
        if r < 0.85:
            e = self.gen(ctx, rng.choice(["str", "int"]), rng.randint(0, 2))
            if not all(sbatch_ok(v) for v in e.vals):
                return self.tag("var", e.src)
            return self.tag("var", f"{par(e, UNARY)} | sbatch")
        p = self.pick_path(ctx, lambda v: isinstance(v, str) and NAME_RE.match(v))
        if p is None:
            p = self.const(ctx, ident(rng))
        return self.tag("var", f"{par(p, UNARY)} | envname")

    def line(self, ctx):
        rng = self.rng
        parts = [rng.choice(["", "", "  ", "\t"])]
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.5:
                parts.append(self.text_chunk())
            parts.append(self.output(ctx))
            if rng.random() < 0.1:
                parts.append(self.tag("comment", rng.choice(["c", "{{ x }}", "it's", "a\nb", ""])))
        if rng.random() < 0.5:
            parts.append(self.text_chunk())
        return "".join(parts) + "\n"

    def sbatch_line(self, ctx):
        rng = self.rng
        opt = rng.choice(["--job-name=", "--comment=", "--output=", "-N ", "--nodes=", "--export="])
        if opt in ("-N ", "--nodes="):
            e = self.gen(ctx, "int", 1)
            return f"#SBATCH {opt}{self.tag('var', par(e, UNARY) + ' | int')}\n"
        e = self.gen(ctx, "str", rng.randint(0, 2))
        if not all(sbatch_ok(v) for v in e.vals):
            e = self.const(ctx, rng.choice(["a b", "it's", "x\\y", "plain", "#x", "é", ""]))
        f = "sbatch" if rng.random() < 0.9 else "raw"
        if f == "raw" and not all(ascii_text(v) and "\n" not in v for v in e.vals):
            f = "sbatch"
        return f"#SBATCH {opt}{self.tag('var', par(e, UNARY) + ' | ' + f)}\n"

    def block_tag(self, body):
        """A block tag on its own line (indented or not) or inline."""
        rng = self.rng
        r = rng.random()
        if r < 0.6:
            return rng.choice(["", "  ", "\t", " "]) + self.tag("block", body) + rng.choice(["\n", "\n", "  \n", ""])
        return rng.choice(["", "x ", "; "]) + self.tag("block", body) + rng.choice(["", " ", "\n"])

    def block(self, ctx, depth, budget):
        rng = self.rng
        out = []
        for _ in range(budget):
            r = rng.random()
            if r < 0.35 or depth <= 0 and r < 0.7:
                out.append(self.line(ctx))
            elif r < 0.42:
                out.append(self.sbatch_line(ctx))
            elif r < 0.5:
                txt = rng.choice(["a comment", "{{ not printed }}", "it's", "line\nbreak", "%}"])
                out.append(rng.choice(["", "  "]) + self.tag("comment", txt) + rng.choice(["\n", ""]))
            elif r < 0.62:
                name = self.new_name("v")
                e = self.gen(ctx, rng.choice(["scalar", "str", "int", "list", "bool"]), rng.randint(0, 3))
                out.append(self.block_tag(f"set {name} = {e.src}"))
                for inst, v in zip(ctx.inst, e.vals):
                    inst[name] = v
                ctx.names.append(name)
            elif r < 0.8 and depth > 0:
                out.append(self.if_block(ctx, depth, budget))
            elif depth > 0:
                out.append(self.for_block(ctx, depth, budget))
            else:
                out.append(self.line(ctx))
        return "".join(out)

    def if_block(self, ctx, depth, budget):
        rng = self.rng
        parts = []
        remaining = list(range(len(ctx.inst)))
        n_elif = rng.choice([0, 0, 1, 2])
        for j in range(1 + n_elif):
            t = self.gen(ctx, rng.choice(["bool", "bool", "any"]), rng.randint(0, 3))
            taken = [i for i in remaining if t.vals[i]]
            remaining = [i for i in remaining if not t.vals[i]]
            parts.append(self.block_tag(("if " if j == 0 else "elif ") + t.src))
            parts.append(self.sub_block(ctx, taken, depth, budget))
        if rng.random() < 0.5:
            parts.append(self.block_tag("else"))
            parts.append(self.sub_block(ctx, remaining, depth, budget))
        parts.append(self.block_tag("endif"))
        return "".join(parts)

    def sub_block(self, ctx, idx, depth, budget):
        # A branch that never runs is still written for the values it would
        # see (the enclosing ones), so that dead code stays realistic.
        inst = [dict(ctx.inst[i]) for i in (idx or range(len(ctx.inst)))]
        sub = Ctx(inst, list(ctx.names))
        return self.block(sub, depth - 1, max(1, budget // 2))

    def for_block(self, ctx, depth, budget):
        rng = self.rng
        r = rng.random()
        new_inst = []
        if r < 0.25:  # for k, v in d.items()
            d = self.gen(ctx, "dict", 0)
            if d is None or not all(isinstance(v, dict) for v in d.vals):
                return self.line(ctx)
            k, v = self.new_name("k"), self.new_name("x")
            head = f"for {k}, {v} in {par(d, POSTFIX)}.items()"
            for inst, dv in zip(ctx.inst, d.vals):
                for i, (kk, vv) in enumerate(dv.items()):
                    ni = dict(inst)
                    ni.update({k: kk, v: vv, "loop": Loop(i, len(dv))})
                    new_inst.append(ni)
            names = [k, v]
        elif r < 0.35:  # for k in d
            d = self.gen(ctx, "dict", 0)
            if d is None or not all(isinstance(v, dict) for v in d.vals):
                return self.line(ctx)
            k = self.new_name("k")
            head = f"for {k} in {d.src}"
            for inst, dv in zip(ctx.inst, d.vals):
                for i, kk in enumerate(dv):
                    ni = dict(inst)
                    ni.update({k: kk, "loop": Loop(i, len(dv))})
                    new_inst.append(ni)
            names = [k]
        else:  # for x in list
            lst = self.gen(ctx, "list", 1)
            if rng.random() < 0.2:
                lst = self.pick_path(ctx, lambda v: isinstance(v, list)) or lst
            if not all(isinstance(v, list) for v in lst.vals):
                return self.line(ctx)
            # sometimes the loop name shadows a data name
            x = self.new_name("x") if rng.random() < 0.85 else rng.choice(["s1", "name"])
            head = f"for {x} in {lst.src}"
            for inst, lv in zip(ctx.inst, lst.vals):
                for i, item in enumerate(lv):
                    ni = dict(inst)
                    ni.update({x: item, "loop": Loop(i, len(lv))})
                    new_inst.append(ni)
            names = [x]
        if len(new_inst) > 120:
            return self.line(ctx)
        if not new_inst:  # an empty loop: write its body for a stand-in item
            for inst in ctx.inst:
                ni = dict(inst)
                ni.update({n: rng.choice(["a b", "x"]) for n in names})
                ni["loop"] = Loop(0, 1)
                new_inst.append(ni)
        sub = Ctx(new_inst, [n for n in ctx.names if n not in names] + names + ["loop"])
        body = self.block(sub, depth - 1, max(1, budget // 2))
        return self.block_tag(head) + body + self.block_tag("endfor")

    def template(self, data):
        ctx = Ctx([dict(data)], list(data))
        rng = self.rng
        head = "#!/bin/sh\n" if rng.random() < 0.5 else ""
        if rng.random() < 0.5:
            head += "".join(self.sbatch_line(ctx) for _ in range(rng.randint(1, 3)))
        body = self.block(ctx, rng.randint(1, 3), rng.randint(3, 9))
        tail = rng.choice(["", "\n", "done\n", "end"])
        return keep_sbatch_lines(head + body + tail)


SBATCH_JOINED = re.compile(r"(#SBATCH[^\n]*)-([}%#]})\n")
SBATCH_NEXT = re.compile(r"(#SBATCH[^\n]*\n[ \t\n]*\{[{%#])-")


def keep_sbatch_lines(src):
    """mad-render checks the #SBATCH rule on the output line: every value
    printed while the output's line starts with #SBATCH must end in
    | sbatch, | int or | raw.  The #SBATCH lines written here do; keep the
    newline that ends them, so that what follows starts a new line: no
    '-' on their last tag's right, nor on the left of the next tag."""
    while True:
        t = SBATCH_NEXT.sub(r"\1", SBATCH_JOINED.sub(r"\1\2\n", src))
        if t == src:
            return t
        src = t


def generate(seed, count, outdir):
    os.makedirs(outdir, exist_ok=True)
    names = []
    for n in range(1, count + 1):
        rng = random.Random(f"{seed}/{n}")
        fmt = rng.choice(["yaml", "json"])
        data = make_data(rng, fmt)
        src = Gen(rng).template(data)
        with open(os.path.join(outdir, f"{n}.j2"), "w", encoding="utf-8", newline="") as f:
            f.write(src)
        with open(os.path.join(outdir, f"{n}.{fmt}"), "w", encoding="utf-8", newline="") as f:
            f.write(dump_data(data, fmt, rng))
        names.append(str(n))
    with open(os.path.join(outdir, "list"), "w") as f:
        f.write("".join(x + "\n" for x in names))


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "--split":
        split_cases(a[1], a[2])
        return 0
    if len(a) == 3 and a[1].isdigit():
        generate(a[0], int(a[1]), a[2])
        return 0
    sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
    return 64


if __name__ == "__main__":
    sys.exit(main())
