"""Redaction of personal data and secrets, before anything is written.

Built-in detectors: e-mail, phone numbers in international form, payment
cards (Luhn), IBAN (mod-97 checksum), IPv4 and IPv6 addresses, JWTs, bearer
tokens and API keys with the providers' prefixes. Each finding becomes a
pseudonym that is the same for the same value everywhere in one import (a
tool argument still matches the conversation that produced it) and keeps the
type's shape: a placeholder e-mail is an e-mail, a placeholder card passes
Luhn, a placeholder IBAN passes its checksum, a placeholder IP parses.

User rules (the user's own ``toolproof.yaml``, key ``redact``) add RE2
patterns and allow-lists::

    redact:
      allow: [support@example.com]        # values never redacted
      rules:
        - {name: order_id, regex: "ORD-[0-9]{6}"}

Strings that hold JSON (messages, arguments and results inside attributes) are
decoded and redacted value by value too, so ``\\uXXXX`` escapes hide nothing;
text that holds JSON escapes without being JSON itself (a quoted object inside
a sentence, a truncated body) is also read with its escapes decoded, so
``alice\\u0040example.com`` is found, and replaced where it stands.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolproof._shared.json_escapes import decode, unescaped
from toolproof._shared.suite_regex import Pattern, RegexError, compile_regex
from toolproof.errors import UserError

__all__ = ["KINDS", "Redactor", "redactor_from_config"]

KINDS = ("email", "phone", "card", "iban", "ipv4", "ipv6", "jwt", "bearer", "api_key")

_API_KEY = (
    r"(?:sk-(?:proj-|ant-(?:api\d\d-)?|lf-)?[A-Za-z0-9_-]{16,}"
    r"|pk-lf-[A-Za-z0-9_-]{8,}"
    r"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|hf_[A-Za-z0-9]{30,})"
)

#: (kind, pattern) in priority order: an earlier kind wins an overlap. ASCII classes:
#: text in Czech, Russian, Chinese or Korean written right against a value (no space)
#: must not hide it, so letters of other scripts are not "word" characters here.
_PATTERNS = [
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    ("bearer", r"(?i)\bbearer[ \t]+[A-Za-z0-9._~+/=-]{8,}"),
    ("api_key", r"(?<![A-Za-z0-9_-])" + _API_KEY),
    (
        "email",
        # the local part may hold Latin letters with diacritics ("jan.novák@…"), never
        # other scripts: CJK or Cyrillic text written against an address stays text
        r"[A-Za-z0-9._%+\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f-]{1,64}"
        r"@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}",
    ),
    ("iban", r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"),
    # a card ends before a digit or a decimal fraction: "4111111111111111." at the end of a
    # sentence and "4012888888881881.0" (a JSON float) are cards, "1234567890123.5" is not
    ("card", r"(?<![\d.])\d(?:[ -]?\d){12,18}(?!\d|\.0*[1-9])"),
    ("phone", r"(?<![\w+])(?:\+|00)[1-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?!\w)"),
    (
        "ipv4",
        r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}"
        r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.])",
    ),
    ("ipv6", r"(?<![0-9A-Za-z:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Za-z:])"),
]
#: ``json.dumps(value, ensure_ascii=False)``, with one encoder made once.
_dumps = json.JSONEncoder(ensure_ascii=False).encode

_DETECTORS = [(kind, re.compile(pattern, re.ASCII)) for kind, pattern in _PATTERNS]
_ORDER = {kind: i for i, (kind, _) in enumerate(_DETECTORS)}

#: What a string must hold for each detector to have a chance (a cheap test first:
#: most strings hold no digit, no '@' and no key prefix, and skip every pattern).
_DIGIT = re.compile(r"[0-9]")
_KEY_HINT = re.compile(r"sk-|pk-|_live_|_test_|AKIA|gh[pousr]_|github_pat_|glpat-|xox|AIza|hf_")


#: One scan that every finding of a built-in detector needs (a necessary condition of
#: each pattern, joined): a string it does not match skips all nine detectors. (An
#: IPv6 address the detector accepts has '::' or eight groups: a time of day does not.)
_MAY_HOLD = re.compile(
    r"@|eyJ|(?i:bearer)|sk-|pk-|_live_|_test_|AKIA|gh[pousr]_|github_pat_|glpat-|xox|AIza|hf_"
    r"|\+[1-9]|00[1-9]|[A-Z]{2}\d\d|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d|\d(?:[ -]?\d){12}"
    r"|::|(?:[0-9A-Fa-f]{1,4}:){7}",
    re.ASCII,
)


#: Unicode spaces and invisible separators, and Unicode dashes, that stand between the
#: digits of a card or phone number as an ASCII space or hyphen would.
_SPACES = (
    "\u00a0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u200b\u200c\u200d\u2060\u202f\u205f\u3000\ufeff"
)
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63"
#: The zero of each run of ten Unicode decimal digits other than 0-9 (Unicode 14; each run
#: is 0..9 in order): Arabic-Indic, Devanagari, Thai, full-width, mathematical...
_ZEROS = (
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
    0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50,
    0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
)  # fmt: skip
#: The characters :class:`_Fold` changes: the Unicode decimal digits other than 0-9,
#: full-width ASCII (``＠``, ``＋``, ``．``, letters), :data:`_SPACES` and :data:`_DASHES`.
_FOLDS = frozenset(
    [chr(z + i) for z in _ZEROS for i in range(10)]
    + [chr(c) for c in range(0xFF01, 0xFF5F)]
    + list(_SPACES + _DASHES)
)


class _Fold(dict[int, str]):
    """``str.translate``'s table that writes each character of :data:`_FOLDS` as the
    ASCII character it stands for, one for one (a finding's position is the same in both);
    every other character is itself. Filled as characters are met."""

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        if ch.isdecimal():
            out = str(unicodedata.decimal(ch))
        elif 0xFF01 <= cp <= 0xFF5E:
            out = chr(cp - 0xFEE0)
        elif ch in _SPACES:
            out = " "
        elif ch in _DASHES:
            out = "-"
        else:
            out = ch
        self[cp] = out
        return out


_FOLD = _Fold()


def _folded(value: str) -> str:
    """``value`` with Unicode digits, full-width characters, spaces and dashes read as ASCII
    (the same length); ``value`` itself when it has none (ASCII is answered at once)."""
    if value.isascii() or _FOLDS.isdisjoint(value):
        return value
    return value.translate(_FOLD)


#: The most characters of strings the redaction memo holds (as keys) before it starts over.
MEMO_CHARS = 4_000_000


def _could_hold(kind: str, value: str, digit: bool) -> bool:
    if kind == "email":
        return "@" in value
    if kind == "jwt":
        return "eyJ" in value
    if kind == "bearer":
        return "bearer" in value.lower()
    if kind == "api_key":
        return _KEY_HINT.search(value) is not None
    if kind == "ipv6":
        return value.count(":") >= 2
    return digit


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2 == 1:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _iban_ok(text: str) -> bool:
    s = text.replace(" ", "")
    if not 15 <= len(s) <= 34:
        return False
    moved = s[4:] + s[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


def _valid(kind: str, text: str) -> bool:
    if kind == "card":
        digits = re.sub(r"\D", "", text)
        return 13 <= len(digits) <= 19 and _luhn(digits)
    if kind == "iban":
        return _iban_ok(text)
    if kind == "phone":
        return 8 <= len(re.sub(r"\D", "", text)) <= 15
    if kind == "ipv6":
        try:
            ipaddress.IPv6Address(text)
        except ValueError:
            return False
        return text.count(":") >= 2 and any(c.isalnum() for c in text)
    return True


def _luhn_digit(body: str) -> str:
    for d in "0123456789":
        if _luhn(body + d):
            return d
    return "0"  # pragma: no cover - one digit always completes a Luhn sum


def _placeholder(kind: str, n: int, original: str) -> str:
    if kind == "email":
        return f"user{n}@example.com"
    if kind == "phone":
        return f"+1 555 01{n:02d}" if n < 100 else f"+1 555 {n:07d}"
    if kind == "card":
        body = f"400000{n:09d}"
        return body + _luhn_digit(body)
    if kind == "iban":
        s = original.replace(" ", "")
        bban = f"{n:0{len(s) - 4}d}"[-(len(s) - 4) :]
        moved = bban + s[:2] + "00"
        check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
        return f"{s[:2]}{check:02d}{bban}"
    if kind == "ipv4":
        blocks = ("192.0.2", "198.51.100", "203.0.113")
        return f"{blocks[(n // 254) % 3]}.{n % 254 + 1}"
    if kind == "ipv6":
        return f"2001:db8::{n:x}"
    if kind == "jwt":
        head = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()
        body = base64.urlsafe_b64encode(f'{{"redacted":{n}}}'.encode()).rstrip(b"=").decode()
        return f"{head}.{body}."
    if kind == "bearer":
        return f"Bearer REDACTED-TOKEN-{n}"
    if kind == "api_key":
        prefix = re.match(r"[A-Za-z]+[-_](?:(?:proj|ant|lf|live|test)[-_])?|AKIA|AIza", original)
        return f"{prefix.group(0) if prefix else ''}REDACTED{n:04d}"
    return f"[{kind.upper()}-{n}]"


_ID_KEYS = frozenset({"trace_id", "span_id", "parent_span_id", "case_id", "id"})
_HEX_ID = re.compile(r"[0-9a-f]{16}|[0-9a-f]{32}|[0-9a-f]{12}-[0-9a-f]{16}|t[0-9a-f]{20}")
#: The lengths of the IDs _HEX_ID matches.
_ID_LENGTHS = frozenset({16, 32, 29, 21})


class _Pairs(list[tuple[str, Any]]):
    """A JSON object whose text names a key more than once: every (key, value), in order
    (a dict would keep only the last, and the text's other values would go unscanned)."""


class _CardFloat(float):
    """A JSON number written with a fraction or an exponent whose value is a whole number
    of a card's length that passes Luhn (``4012888888881881.0``, ``5.555555555554444e15``):
    ``digits`` as written, exactly (a float may not hold them all)."""

    digits: str


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Pairs:
    """``object_pairs_hook``: a dict, or every pair when a key comes twice."""
    out = dict(pairs)
    return out if len(out) == len(pairs) else _Pairs(pairs)


def _float(text: str) -> float:
    """``parse_float``: the number, marked when it writes a card (see :class:`_CardFloat`)."""
    value = float(text)
    if len(text) >= 13:
        whole = _card_digits(text)
        if whole is not None:
            card = _CardFloat(value)
            card.digits = whole
            return card
    return value


def _card_digits(text: str) -> str | None:
    """The digits of a JSON number's text when its exact value is a whole number of 13 to
    19 digits that passes Luhn, else None."""
    from decimal import Decimal, InvalidOperation

    try:
        exact = abs(Decimal(text))
    except (InvalidOperation, ValueError):
        return None
    if not exact.is_finite() or exact != exact.to_integral_value():
        return None
    if not 10**12 <= exact < 10**19:
        return None
    digits = str(int(exact))
    return digits if _luhn(digits) else None


def _dump_pairs(value: Any) -> str:
    """``_dumps(value)``, where a :class:`_Pairs` is written as the object it was, each key
    as often as it came."""
    if not _has_pairs(value):
        return _dumps(value)
    if isinstance(value, _Pairs):
        return "{" + ", ".join(f"{_dumps(k)}: {_dump_pairs(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_dumps(k)}: {_dump_pairs(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(_dump_pairs(v) for v in value) + "]"


def _has_pairs(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Pairs):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


@dataclass
class Redactor:
    """Redacts every string handed to it; counts what it replaced, by kind and by field."""

    allow: frozenset[str] = frozenset()
    rules: list[tuple[str, Pattern]] = field(default_factory=list)
    by_kind: Counter[str] = field(default_factory=Counter)
    by_field: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    _names: dict[tuple[str, str], str] = field(default_factory=dict)
    _count: Counter[str] = field(default_factory=Counter)
    #: Short strings already found clean (keys, roles, repeated values): bounded.
    _clean: set[str] = field(default_factory=set)
    #: string -> (its redacted form, the (kind, field below the string's own) of each
    #: finding): a string met again (a conversation in each of its cases and records, a
    #: tool's definition in every span) costs a look-up, and its findings are counted
    #: again under the field where it is met. Bounded by :data:`MEMO_CHARS`.
    _memo: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = field(default_factory=dict)
    _memo_chars: int = 0
    #: Findings of the strings being redacted now (what the memo stores for each).
    _trail: list[tuple[str, str]] = field(default_factory=list)
    _depth: int = 0

    def pseudonym(self, kind: str, original: str) -> str:
        key = (kind, original)
        found = self._names.get(key)
        if found is None:
            self._count[kind] += 1
            found = (
                _placeholder(kind, self._count[kind], original)
                if kind in KINDS
                else f"[{kind.upper()}-{self._count[kind]}]"
            )
            self._names[key] = found
        return found

    def _found(self, kind: str, where: str) -> None:
        self.by_kind[kind] += 1
        self.by_field[where] += 1
        if self._depth:
            self._trail.append((kind, where))

    def text(self, value: str, where: str = "text") -> str:
        """``value`` with every finding replaced (JSON inside is decoded and redacted too)."""
        if value in self._clean:
            return value
        if not where:  # a field's path below "" is not a suffix of it: no memo
            return self._text(value, where)
        known = self._memo.get(value)
        if known is not None:
            for kind, below in known[1]:
                self._found(kind, where + below)
            return known[0]
        mark = len(self._trail)
        self._depth += 1
        try:
            result = self._text(value, where)
        finally:
            self._depth -= 1
        # every finding's field is ``where`` or a field inside it (JSON in the string)
        hits = tuple((kind, fld[len(where) :]) for kind, fld in self._trail[mark:])
        if not self._depth:
            self._trail.clear()
        if hits or value not in self._clean:
            self._memo_chars += len(value)
            if self._memo_chars > MEMO_CHARS:
                self._memo.clear()
                self._memo_chars = len(value)
            self._memo[value] = (result, hits)
        return result

    def _text(self, value: str, where: str) -> str:
        stripped = value.lstrip()
        if stripped[:1] in ("{", "[") and len(value) < (8 << 20):
            try:
                decoded = json.loads(value, object_pairs_hook=_object, parse_float=_float)
            except (ValueError, RecursionError):
                pass
            else:
                if isinstance(decoded, dict | list | _Pairs):
                    try:
                        walked = self.value(decoded, where)
                        if walked != decoded:
                            return _dump_pairs(walked)
                    except RecursionError:  # walked as deeply as decoded: read as text
                        return self._flat(value, where)
                    # every key, value and number of the text was scanned (a duplicated
                    # key's values too): the text as it was
                    return value
        return self._flat(value, where)

    def _spans(self, value: str) -> list[tuple[int, int, str, str]]:
        """(start, end, kind, text) of every finding of ``value``."""
        spans: list[tuple[int, int, str, str]] = []
        scan = _folded(value)  # Unicode digits and separators read as ASCII, in place
        if _MAY_HOLD.search(scan) is not None:
            digit = _DIGIT.search(scan) is not None
            for kind, pattern in _DETECTORS:
                if not _could_hold(kind, scan, digit):
                    continue
                for m in pattern.finditer(scan):
                    if _valid(kind, m.group(0)):
                        spans.append((m.start(), m.end(), kind, m.group(0)))
        for name, rule in self.rules:
            for m in getattr(rule, "finditer")(value):  # noqa: B009 - re2's compiled pattern
                if m.end() > m.start():
                    spans.append((m.start(), m.end(), name, m.group(0)))
        return spans

    def _flat(self, value: str, where: str) -> str:
        if value in self._clean:
            return value
        decoded = decode(value)  # JSON escapes in the text: read what they stand for
        if decoded is value or decoded == value:
            spans = self._spans(value)
        else:  # each finding of the decoded text, replaced where it stands in the text
            spans = self._spans(decoded)
            view = unescaped(value) if spans else None
            if view is not None:
                at = view[1]
                spans = [(at[a], at[b], kind, text) for a, b, kind, text in spans]
        if not spans:
            if len(value) <= 200:
                if len(self._clean) >= 50_000:
                    self._clean.clear()
                self._clean.add(value)
            return value
        spans.sort(key=lambda s: (s[0], _ORDER.get(s[2], -1), -(s[1] - s[0])))
        out: list[str] = []
        pos = 0
        for start, end, kind, found in spans:
            if start < pos:
                continue
            if found in self.allow:
                continue
            out.append(value[pos:start])
            out.append(self.pseudonym(kind, found))
            self._found(kind, where)
            pos = end
        out.append(value[pos:])
        return "".join(out)

    def value(self, data: Any, where: str = "") -> Any:
        """Every string (keys too) of a JSON-like value redacted; ``where`` names the field.

        Trace and span IDs (hex) are kept: they link a case to its trace. A whole
        number with a card's length that passes Luhn is redacted as a card.
        """
        cls = data.__class__
        if cls is dict:
            return self._dict(data, where)
        if cls is list:
            clean = self._clean  # a string known clean is its own answer
            return [v if v.__class__ is str and v in clean else self.value(v, where) for v in data]
        if isinstance(data, str):
            return self._string(data, where)
        if isinstance(data, int) and not isinstance(data, bool) and 10**12 <= abs(data) < 10**19:
            if _luhn(str(abs(data))) and str(data) not in self.allow:
                self._found("card", where)
                return int(self.pseudonym("card", str(abs(data))))
            return data
        if isinstance(data, float):
            return self._float(data, where)
        if cls is _Pairs:
            return _Pairs(
                (self.text(k, where) if isinstance(k, str) else k,
                 self.value(v, f"{where}.{k}" if where else str(k)))
                for k, v in data
            )  # fmt: skip
        if isinstance(data, list):
            return [self.value(v, where) for v in data]
        if isinstance(data, dict):
            return self._dict(data, where)
        return data

    def _float(self, data: float, where: str) -> float:
        """A float whose value is a card number (a whole number of 13 to 19 digits that
        passes Luhn) as the integer case redacts it, kept a float."""
        digits = getattr(data, "digits", None)
        if digits is None:
            if not (10**12 <= abs(data) < 10**19 and data.is_integer()):
                return data
            digits = str(int(abs(data)))
            if not _luhn(digits):
                return data
        if digits in self.allow:
            return data
        self._found("card", where)
        return float(self.pseudonym("card", digits))

    def _string(self, data: str, where: str) -> str:
        # an ID of digits alone may be a card number under a key named "id"
        if _HEX_ID.fullmatch(data) and not data.isdigit() and where.rsplit(".", 1)[-1] in _ID_KEYS:
            return data
        return self.text(data, where or "text")

    def _dict(self, data: dict[Any, Any], where: str) -> dict[Any, Any]:
        clean = self._clean
        memo = self._memo
        out: dict[Any, Any] = {}
        for k, v in data.items():
            if k not in clean and isinstance(k, str):
                k = self.text(k, where)
            cls = v.__class__
            if v is None or cls is bool or (cls is float and not 10**12 <= abs(v) < 10**19):
                out[k] = v
            elif cls is str:
                # the same answer value() gives, without its calls (most values are strings
                # known clean, or met before: the memo's answer, its findings counted here)
                if v in clean:
                    out[k] = v
                    continue
                if len(v) in _ID_LENGTHS and str(k).rsplit(".", 1)[-1] in _ID_KEYS:
                    out[k] = self._string(v, f"{where}.{k}" if where else str(k))
                    continue
                known = memo.get(v)
                if known is None:
                    out[k] = self.text(v, (f"{where}.{k}" if where else str(k)) or "text")
                    continue
                if known[1]:
                    path = (f"{where}.{k}" if where else str(k)) or "text"
                    for kind, below in known[1]:
                        self._found(kind, path + below)
                out[k] = known[0]
            elif cls is int and not 10**12 <= abs(v) < 10**19:
                out[k] = v
            else:
                out[k] = self.value(v, f"{where}.{k}" if where else str(k))
        return out

    def line(self, data: Any, where: str) -> str:
        """``data`` redacted, as one line of JSON (``json.dumps``, ``ensure_ascii=False``).

        (Writing the JSON first and skipping the walk when one scan of it finds
        nothing was measured and left out: a regular expression over a whole line
        costs more than walking it, since most of its strings are known clean.)
        """
        return _dumps(self.value(data, where))

    def report(self) -> dict[str, Any]:
        return {
            "by_kind": dict(sorted(self.by_kind.items())),
            "by_field": dict(self.by_field.most_common()),
            "distinct_values": dict(sorted(self._count.items())),
        }


def redactor_from_config(data: Any, source: str) -> Redactor:
    """The ``redact`` section of the user's config (or none) as a :class:`Redactor`."""
    if data is None:
        return Redactor()
    if not isinstance(data, dict):
        raise UserError(f"{source}: redact: must be a mapping with 'allow' and 'rules'")
    unknown = set(data) - {"allow", "rules"}
    if unknown:
        raise UserError(
            f"{source}: redact: unknown key '{sorted(unknown)[0]}' (expected: allow, rules)"
        )
    allow = data.get("allow") or []
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise UserError(f"{source}: redact.allow: must be a list of strings")
    rules: list[tuple[str, Pattern]] = []
    for i, rule in enumerate(data.get("rules") or []):
        if not isinstance(rule, dict) or not isinstance(rule.get("regex"), str):
            raise UserError(f"{source}: redact.rules[{i}]: must be {{name, regex}}")
        name = str(rule.get("name") or f"rule{i}")
        if not re.fullmatch(r"[A-Za-z0-9_]{1,40}", name):
            raise UserError(f"{source}: redact.rules[{i}].name: letters, digits and _ only")
        try:
            rules.append((name, compile_regex(rule["regex"])))
        except RegexError as exc:
            raise UserError(f"{source}: redact.rules[{i}].regex: {exc}") from None
    return Redactor(allow=frozenset(allow), rules=rules)


Redact = Callable[[Any, str], Any]
