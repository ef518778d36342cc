"""Parsing CEL: cel-python's Lark grammar with cel-go's optional syntax, its LALR
tables built into the package (``built/cel-grammar.json``), syntax errors with
their offset, and the literals and positions of the syntax tree. Lark and
cel-python are imported on first parse.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from dra_migrate.cel.values import _cut
from dra_migrate.k8s.names import INT64_MAX, INT64_MIN, UINT64_MAX
from dra_migrate.package_data import package_file

RESERVED_WORDS = frozenset(
    [
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)


@dataclass(frozen=True, slots=True)
class _SyntaxIssue:
    offset: int
    message: str
    hint: str = ""


class _ParseFailed(Exception):
    def __init__(self, issue: _SyntaxIssue) -> None:
        super().__init__(issue.message)
        self.issue = issue


_TERMINAL_TEXT = {
    "RPAR": "')'",
    "LPAR": "'('",
    "RSQB": "']'",
    "LSQB": "'['",
    "RBRACE": "'}'",
    "LBRACE": "'{'",
    "COLON": "':'",
    "COMMA": "','",
    "DOT": "'.'",
    "QMARK": "'?'",
    "IDENT": "an identifier",
    "STRING_LIT": "a string",
    "INT_LIT": "a number",
}


# cel-go's optional syntax (cel.OptionalTypes, in Kubernetes since 1.28), added to
# cel-python's grammar: ``x.?field`` and ``x[?key]``.
_OPTIONAL_SYNTAX = {
    "member         : member_dot | member_dot_arg | member_index": (
        " | member_dot_opt | member_index_opt"
    ),
    'member_index   : member "[" expr "]"\n': (
        'member_dot_opt : member "." "?" IDENT\nmember_index_opt : member "[" "?" expr "]"\n'
    ),
}


# The LALR tables of the grammar, as data (JSON) in the package: building them takes
# about 0.3 s, loading them about 0.02 s. Written by scripts/build_data.py for the
# grammar, the options and the Lark version of its stamp; tests/hostile/test_hostile_cache_git.py
# holds it current. Where the installed cel-python or Lark differ, the tables are
# built in memory (nothing read from disk but this file and the grammar is used).
GRAMMAR_TABLES = package_file("built", "cel-grammar.json")
_LARK_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "start": "expr",
    "g_regex_flags": re.M,
    "propagate_positions": True,
    "maybe_placeholders": False,
    "priority": "invert",
}


def grammar_source() -> tuple[str, str]:
    """cel-python's CEL grammar with cel-go's optional syntax, and its stamp: what the
    LALR tables are built from (the grammar, the options, the Lark version)."""
    from pathlib import Path

    import celpy  # lazy
    import lark

    from dra_migrate import cache

    grammar = (Path(celpy.__file__).parent / "cel.lark").read_text(encoding="utf-8")
    for rule, optional in _OPTIONAL_SYNTAX.items():
        if rule not in grammar:  # pragma: no cover - a cel-python grammar we do not know
            raise RuntimeError(f"cel-python's CEL grammar has no rule {rule.strip()!r}")
        grammar = grammar.replace(rule, rule + optional)
    key = grammar + repr(sorted(_LARK_OPTIONS.items())) + lark.__version__
    return grammar, cache.digest(key.encode())


def grammar_tables(parser: Any) -> dict[str, Any]:
    """A Lark LALR parser's tables as JSON holds them (``load_tables`` reads them back)."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k != "lexer_callbacks"}
    return {"data": data, "memo": memo}


def load_tables(held: dict[str, Any]) -> dict[str, Any]:
    """``grammar_tables`` as Lark gave them, from their JSON: the numbers JSON keeps as
    object keys (states, tokens, memo entries) and the tuples it keeps as lists."""
    table = held["data"]["parser"]["parser"]
    table["states"] = {
        int(state): {int(token): tuple(action) for token, action in actions.items()}
        for state, actions in table["states"].items()
    }
    table["tokens"] = {int(number): name for number, name in table["tokens"].items()}
    memo = {int(number): entry for number, entry in held["memo"].items()}
    for entry in memo.values():
        options = entry.get("options")
        if isinstance(options, dict) and "empty_indices" in options:
            options["empty_indices"] = tuple(options["empty_indices"])
    return {"data": held["data"], "memo": memo}


@functools.lru_cache(maxsize=1)
def _lark_parser() -> Any:
    """An LALR parser for cel-python's CEL grammar: its tables loaded from the package
    (``GRAMMAR_TABLES``) when they were built for this grammar and Lark, else built."""
    import json

    import lark  # lazy

    def literal_keywords(token: Any) -> Any:
        # cel-python's own callback drops the position of true/false; keep it.
        if token.value in ("true", "false"):
            return lark.Token.new_borrow_pos("BOOL_LIT", token.value, token)
        return token

    callbacks = {"IDENT": literal_keywords}
    grammar, stamp = grammar_source()
    try:
        with open(GRAMMAR_TABLES, encoding="utf-8") as handle:
            built = json.load(handle)
    except (OSError, ValueError):
        built = None
    if isinstance(built, dict) and built.get("stamp") == stamp:
        parser: Any = lark.Lark.__new__(lark.Lark)
        return parser._load(load_tables(built["tables"]), lexer_callbacks=callbacks)
    return lark.Lark(grammar, lexer_callbacks=callbacks, **_LARK_OPTIONS)


@functools.lru_cache(maxsize=512)
def _parse(expression: str) -> Any:
    """The Lark tree of ``expression``; raises _ParseFailed with the position."""
    import lark  # lazy

    parser = _lark_parser()
    try:
        tree = parser.parse(expression)
    except lark.exceptions.UnexpectedCharacters as exc:
        offset = int(exc.pos_in_stream or 0)
        char = expression[offset] if offset < len(expression) else ""
        if char in "'\"":
            raise _ParseFailed(_SyntaxIssue(offset, "unterminated string literal")) from None
        raise _ParseFailed(_SyntaxIssue(offset, f"unexpected character {char!r}")) from None
    except lark.exceptions.UnexpectedToken as exc:
        token = exc.token
        expected = sorted(_TERMINAL_TEXT[t] for t in (exc.expected or ()) if t in _TERMINAL_TEXT)
        hint = ("expected " + " or ".join(expected)) if expected and len(expected) <= 3 else ""
        if token.type == "$END":
            return_offset = len(expression.rstrip())
            raise _ParseFailed(
                _SyntaxIssue(return_offset, "unexpected end of expression", hint)
            ) from None
        offset = int(token.start_pos or 0)
        raise _ParseFailed(_SyntaxIssue(offset, f"unexpected {token.value!r}", hint)) from None
    except lark.exceptions.UnexpectedInput as exc:  # pragma: no cover - other lark failures
        raise _ParseFailed(_SyntaxIssue(int(exc.pos_in_stream or 0), "syntax error")) from None
    except lark.exceptions.LarkError as exc:  # pragma: no cover
        raise _ParseFailed(_SyntaxIssue(0, f"syntax error: {exc}")) from None
    for token in tree.scan_values(lambda v: getattr(v, "type", None) in ("INT_LIT", "UINT_LIT")):
        if _int_literal(str(token)) is None:
            raise _ParseFailed(
                _SyntaxIssue(
                    int(token.start_pos or 0),
                    f"integer literal {_cut(str(token))} out of range",
                    f"CEL integers are 64-bit: int up to {INT64_MAX}, uint up to {UINT64_MAX}",
                )
            )
    return tree


def _int_literal(text: str) -> int | None:
    """The value of a CEL int or uint literal (``42``, ``0x2A``, ``42u``), None when it is
    out of its 64-bit range; the digits are counted before they are converted."""
    unsigned = text[-1:] in ("u", "U")
    digits = text.rstrip("uU")
    hexadecimal = digits[:2] in ("0x", "0X")
    body = (digits[2:] if hexadecimal else digits).lstrip("0")
    if len(body) > (16 if hexadecimal else 20):
        return None
    value = int(body or "0", 16 if hexadecimal else 10)
    # -INT64_MIN is kept for the int literal that a minus sign turns into the smallest int64
    return value if value <= (UINT64_MAX if unsigned else -INT64_MIN) else None


def _start(node: Any) -> int:
    if not hasattr(node, "meta"):  # a token
        return int(getattr(node, "start_pos", None) or 0)
    meta = node.meta
    if not meta.empty and meta.start_pos is not None:
        return int(meta.start_pos)
    return 0


def _end(node: Any) -> int:
    if not hasattr(node, "meta"):
        return int(getattr(node, "end_pos", None) or 0)
    meta = node.meta
    if not meta.empty and meta.end_pos is not None:
        return int(meta.end_pos)
    return 0


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_ESCAPE_RE = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)", re.S
)


def _decode_string(token_text: str) -> tuple[str, int]:
    """Value of a CEL string literal and the offset of its first content character."""
    i = 0
    raw = False
    while token_text[i] in "rRbB":
        raw = raw or token_text[i] in "rR"
        i += 1
    quote = token_text[i : i + 3] if token_text[i : i + 3] in ('"""', "'''") else token_text[i]
    body = token_text[i + len(quote) : len(token_text) - len(quote)]
    content_offset = i + len(quote)
    if raw:
        return body, content_offset

    def unescape(m: re.Match[str]) -> str:
        esc = m.group(0)[1:]
        if esc[0] in "xuU":
            return chr(int(esc[1:], 16))
        if esc[0].isdigit():
            return chr(int(esc, 8))
        return _ESCAPES.get(esc, esc)

    return _ESCAPE_RE.sub(unescape, body), content_offset
