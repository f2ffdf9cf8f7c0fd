"""Redaction: a planted-PII set in five languages, every kind in every field, none survives."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path

import pytest

from toolproof.traces import KINDS, Redactor, import_traces, redactor_from_config
from toolproof.traces._redact import _iban_ok, _luhn

PLANTED: dict[str, list[str]] = {
    "email": ["jan.novak@seznam.cz", "olga.ivanova@yandex.ru", "wang.wei@qq.com",
              "kim.minjun@naver.com", "john.smith@gmail.com"],
    "phone": ["+420 601 123 456", "+7 912 345-67-89", "+86 138 0013 8000",
              "+82 10-1234-5678", "+44 20 7946 0958"],
    "card": ["4111 1111 1111 1111", "5500-0000-0000-0004", "340000000000009",
             "6011000000000004", "3530111333300000"],
    "iban": ["CZ65 0800 0000 1920 0014 5399", "DE89370400440532013000",
             "GB29 NWBK 6016 1331 9268 19", "FR1420041010050500013M02606",
             "SK3112000000198742637541"],
    "ipv4": ["192.168.1.23", "10.0.0.5", "85.13.2.101", "172.16.254.3", "8.8.4.4"],
    "ipv6": ["2a00:1450:4001:82a::200e", "fe80::1ff:fe23:4567:890a", "2001:4860:4860::8888",
             "2606:4700:4700::1111", "2a02:598:2::1234"],
    "jwt": ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    "bearer": ["Bearer abcDEF123456ghiJKL789", "bearer Zx9Yw8Vu7Ts6Rq5Po4"],
    "api_key": ["sk-proj-AbCdEf1234567890GhIjKl", "AKIAIOSFODNN7EXAMPLE",
                "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "xoxb-1234567890-abcdefghij",
                "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"],
}  # fmt: skip

#: Each language's sentence around a value, with and without spaces beside it.
TEMPLATES = {
    "en": "Please contact {v} about the order.",
    "cs": "Prosím kontaktujte {v} ohledně objednávky.",
    "ru": "Пожалуйста, свяжитесь: {v}, по заказу.",
    "zh": "请联系{v}处理订单。",
    "ko": "주문 관련하여 {v} 로 연락해 주세요.",
}

#: The fields of a trace a value can sit in.
FIELDS = ("system", "user", "assistant_text", "tool_args", "tool_result", "tool_message",
          "tool_description", "session", "status_message", "error_message")  # fmt: skip

T = "5b8efff798038103d269b633813fc60c"


def _a(key: str, value: object) -> dict:
    return {
        "key": key,
        "value": {
            "stringValue": value
            if isinstance(value, str)
            else json.dumps(value, ensure_ascii=False)
        },
    }


def _trace_lines(kind: str, value: str, n: int) -> list[str]:
    """One trace per (kind, value): the value in every field, in all five languages."""
    trace = f"{n:032x}"
    say = {lang: t.format(v=value) for lang, t in TEMPLATES.items()}
    langs = list(say.values())
    s1, s2, tool, root = (
        f"{n:08x}00000001",
        f"{n:08x}00000002",
        f"{n:08x}00000003",
        f"{n:08x}00000004",
    )
    user_msgs = [{"role": "user", "parts": [{"type": "text", "content": t}]} for t in langs]
    call_args = {"note": say["en"], "value": value}
    chat1 = {
        "traceId": trace, "spanId": s1, "parentSpanId": root, "name": "chat m", "kind": 3,
        "startTimeUnixNano": "1764400000000000000", "endTimeUnixNano": "1764400000100000000",
        "attributes": [
            _a("gen_ai.operation.name", "chat"),
            _a("gen_ai.system_instructions", [{"type": "text", "content": say["cs"]}]),
            _a("gen_ai.input.messages", user_msgs),
            _a("gen_ai.output.messages", [{"role": "assistant", "parts": [
                {"type": "text", "content": say["ru"]},
                {"type": "tool_call", "id": "c1", "name": "note", "arguments": call_args}]}]),
            _a("gen_ai.tool.definitions", [{"type": "function", "name": "note",
                "description": say["zh"], "parameters": {"type": "object"}}]),
        ],
    }  # fmt: skip
    tool_span = {
        "traceId": trace, "spanId": tool, "parentSpanId": root, "name": "execute_tool note",
        "startTimeUnixNano": "1764400000200000000",
        "status": {"code": 2, "message": say["ko"]},
        "attributes": [
            _a("gen_ai.operation.name", "execute_tool"), _a("gen_ai.tool.name", "note"),
            _a("gen_ai.tool.call.id", "c1"), _a("gen_ai.tool.call.arguments", call_args),
            _a("gen_ai.tool.call.result", {"echo": say["zh"], "raw": value}),
        ],
    }  # fmt: skip
    chat2 = {
        "traceId": trace, "spanId": s2, "parentSpanId": root, "name": "chat m", "kind": 3,
        "startTimeUnixNano": "1764400000300000000",
        "attributes": [
            _a("gen_ai.operation.name", "chat"),
            _a("gen_ai.input.messages", [*user_msgs,
                {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "note",
                                                 "arguments": call_args}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                            "response": say["ko"] + " " + value}]}]),
            _a("gen_ai.output.messages", [{"role": "assistant", "parts": [
                {"type": "text", "content": say["en"]}]}]),
        ],
    }  # fmt: skip
    agent = {
        "traceId": trace, "spanId": root, "name": "invoke_agent",
        "startTimeUnixNano": "1764399999000000000",
        "attributes": [_a("session.id", value), _a("user.id", say["ko"])],
    }  # fmt: skip
    broken = {"traceId": "", "spanId": "zz", "name": say["en"]}  # an error message names it
    return [
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [agent, chat1, tool_span, chat2]}]}]},
                   ensure_ascii=(n % 2 == 0)),  # half of them with \uXXXX escapes
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [broken]}]}]}),
        "{" + value + " not json",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], Redactor]:
    tmp = tmp_path_factory.mktemp("pii")
    lines: list[str] = []
    n = 1
    for kind, values in PLANTED.items():
        for value in values:
            lines.extend(_trace_lines(kind, value, n))
            n += 1
    src = tmp / "traces.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp / "out"
    redactor = Redactor()
    report = import_traces([src], out, label="pii", redactor=redactor)
    assert report.cases == 2 * sum(len(v) for v in PLANTED.values())
    written = [p.read_text("utf-8") for p in out.rglob("*") if p.is_file()]
    return out, written, redactor


def _variants(value: str) -> list[str]:
    """The value as written and as it appears inside JSON with escapes."""
    escaped = json.dumps(value)[1:-1]
    ascii_escaped = json.dumps(value, ensure_ascii=True)[1:-1]
    return sorted({value, escaped, ascii_escaped, value.replace(" ", "").replace("-", "")})


def test_no_planted_value_survives_in_any_file_and_recall_per_kind(
    planted: tuple[Path, list[str], Redactor], capsys: pytest.CaptureFixture[str]
) -> None:
    out, written, _ = planted
    names = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert names == ["cases.jsonl", "decisions.jsonl", "import-report.json", "provenance.jsonl",
                     "runs/prod-pii/manifest.json", "runs/prod-pii/records.jsonl", "suite.yaml",
                     "tools.json"]  # fmt: skip
    blob = "\n".join(written)
    recall: dict[str, tuple[int, int]] = {}
    survivors = []
    for kind, values in PLANTED.items():
        caught = 0
        for value in values:
            found = [v for v in _variants(value) if v in blob]
            if found:
                survivors.append((kind, value))
            else:
                caught += 1
        recall[kind] = (caught, len(values))
    with capsys.disabled():
        print("\nredaction recall on the planted set (values not found in any written file):")
        for kind, (caught, total) in recall.items():
            print(f"  {kind:8s} {caught}/{total}  {caught / total:.0%}")
    assert set(recall) == set(KINDS)
    assert survivors == []


def test_every_field_and_language_was_covered(planted: tuple[Path, list[str], Redactor]) -> None:
    _, _, redactor = planted
    fields = set(redactor.by_field)
    for expected in ("cases.messages.content", "cases.expect.calls.args.value",
                     "cases.mocks.note.rules.message", "provenance.outcomes.result.raw", "cases.tools.description",
                     "records.response.text", "provenance.session_id", "provenance.user_id",
                     "provenance.outcomes.status_message", "error messages"):  # fmt: skip
        assert any(f.startswith(expected) for f in fields), (expected, sorted(fields))
    assert set(redactor.by_kind) == set(KINDS)


def test_pseudonyms_are_consistent_and_keep_their_shape(
    planted: tuple[Path, list[str], Redactor],
) -> None:
    out, _, _ = planted
    cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    first = next(c for c in cases if "expect" in c and c["expect"].get("calls"))
    arg = first["expect"]["calls"][0]["args"]["value"]
    assert re.fullmatch(r"user\d+@example\.com", arg)
    assert arg in first["messages"][0]["content"]  # the conversation names the same placeholder
    assert arg == first["mocks"]["note"]["rules"][0]["when"]["value"]
    r = Redactor()
    assert _luhn(re.sub(r"\D", "", r.text("4111 1111 1111 1111")))
    assert _iban_ok(r.text("CZ65 0800 0000 1920 0014 5399"))
    ipaddress.IPv4Address(r.text("85.13.2.101"))
    ipaddress.IPv6Address(r.text("2a00:1450:4001:82a::200e"))
    assert r.text("jan@x.cz and JAN: jan@x.cz") == "user1@example.com and JAN: user1@example.com"


def test_ordinary_text_is_left_alone() -> None:
    r = Redactor()
    for text in ("version 1.2.3", "2026-12-04T16:55:17.760979Z", "call_2_0", "order 12345",
                 "temp 11 °C", "1764400000000000000", "a:b:c", "ISO 8601"):  # fmt: skip
        assert r.text(text) == text
    assert r.report()["by_kind"] == {}


def test_user_rules_and_allow_list_from_the_users_config(tmp_path: Path) -> None:
    r = redactor_from_config(
        {"allow": ["support@example.org"], "rules": [{"name": "order", "regex": "ORD-[0-9]{6}"}]},
        "toolproof.yaml",
    )
    assert r.text("ORD-123456 from a@b.cz to support@example.org") == (
        "[ORDER-1] from user1@example.com to support@example.org"
    )
    from toolproof.errors import UserError

    with pytest.raises(UserError, match=r"redact.rules\[0\].regex"):
        redactor_from_config({"rules": [{"regex": "(a)\\1"}]}, "toolproof.yaml")


def test_cli_dry_run_writes_nothing_and_reports_kinds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from toolproof.cli._app import app

    src = tmp_path / "t.jsonl"
    src.write_text("\n".join(_trace_lines("email", "jan.novak@seznam.cz", 1)) + "\n", "utf-8")
    (tmp_path / "toolproof.yaml").write_text(
        "redact:\n  rules:\n    - {name: order, regex: 'zz[0-9]+'}\n"
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["traces", "import", str(src), "-o", "out", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "dry run: nothing written" in result.output
    assert "email" in result.output
    assert "jan.novak@seznam.cz" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_card_number_under_a_key_named_id_is_redacted_and_hex_ids_are_kept() -> None:
    """An ID of hex digits links a case to its trace; sixteen digits alone may be a card."""
    r = Redactor()
    args = r.value({"id": "4111111111111111", "span_id": "5fb397be34d26b51"}, "arguments")
    assert args["id"] != "4111111111111111"
    assert _luhn(args["id"])
    assert args["span_id"] == "5fb397be34d26b51"


@pytest.mark.parametrize(
    "text",
    [
        "write to alice\\u0040example.com today",  # the @ escaped
        'args: {"to": "alice\\u0040example.com", "cc": ',  # JSON cut short, not decodable
        'she wrote \\"alice@example.com\\" in the note',  # quoted inside a string
        "\\u0061lice@example.com",  # the first letter escaped
    ],
    ids=["at", "truncated-json", "quoted", "first-letter"],
)
def test_an_email_behind_json_escapes_in_plain_text_is_redacted(text: str) -> None:
    from toolproof._shared.json_escapes import unescaped

    red = Redactor()
    out = red.text(text)
    seen = (unescaped(out) or (out,))[0]
    assert "alice" not in seen, out
    assert red.report()["by_kind"] == {"email": 1}
    # the same address, written plainly elsewhere, gets the same pseudonym
    assert red.text("alice@example.com") in out
    # inside a value (a trace's attributes), too
    assert "alice" not in json.dumps(Redactor().value({"input": text}))


def test_escapes_without_personal_data_are_kept() -> None:
    text = 'caf\\u00e9 \\"ok\\" {"a": "\\u0041"}'
    assert Redactor().text(text) == text


def _fresh_text(self: Redactor, value: str, where: str = "text") -> str:
    """Redaction of one string with no memo: every occurrence scanned again."""
    return value if value in self._clean else self._text(value, where)


class _Fresh(Redactor):
    text = _fresh_text  # type: ignore[assignment]

    def line(self, data: object, where: str) -> str:
        return json.dumps(self.value(data, where), ensure_ascii=False)


def _corpus() -> list[object]:
    """Values as an import writes them: planted findings in every language, clean text,
    JSON inside strings, escapes, IDs and whole numbers, each met more than once."""
    import random

    rng = random.Random(7)
    values = [v for vs in PLANTED.values() for v in vs]
    out: list[object] = []
    for i in range(400):
        v = rng.choice(values)
        text = TEMPLATES[rng.choice(list(TEMPLATES))].format(v=v)
        out.append(
            {
                "id": rng.choice([T, "4111111111111111", f"call_{i}"]),
                "messages": [
                    {"role": "user", "content": text},
                    {"role": "tool", "content": json.dumps({"to": v, "n": i})},
                ],
                "args": {
                    "to": v,
                    "note": "ordinary text",
                    "count": rng.choice([3, 4111111111111111]),
                },
                "raw": json.dumps({"to": v}).replace("@", "\\u0040"),
                "time": "2026-12-04T07:06:40.011000Z",
                v if i % 50 == 0 else "key": "value",
            }
        )
    return out


@pytest.mark.parametrize("rules", [None, {"rules": [{"name": "order", "regex": "objedn"}]}])
def test_the_memo_gives_what_a_fresh_scan_gives(rules: dict | None) -> None:
    """The memo of redacted strings changes nothing: the same bytes and the same counts
    as scanning every string of every line again."""
    fast = redactor_from_config(rules, "t")
    slow = redactor_from_config(rules, "t")
    slow.__class__ = _Fresh
    for where in ("cases", "records", "provenance"):  # the same strings in three fields
        for item in _corpus():
            assert fast.line(item, where) == slow.line(item, where)
    assert fast.report() == slow.report()
    assert sum(fast.by_kind.values()) > 1000  # the corpus had findings to count


def test_the_pre_scan_misses_nothing_a_detector_finds() -> None:
    """Every string in which any built-in detector finds something is one the combined
    pre-scan lets through (random strings of the characters the patterns use)."""
    import random

    from toolproof.traces._redact import _DETECTORS, _MAY_HOLD, _valid

    rng = random.Random(11)
    pieces = ["0", "7", "12", "345", "2001", "1234", " ", ".", "-", ":", "::", "+", "+4", "00",
              "(", ")", "@", "a", "x.cz", "DE", "GB29", "eyJ", "AbC", "Bearer ", "bEaReR ",
              "sk-", "AKIA", "ghp_", "hf_", "_", "fe80", "ff", "Z", "T"]  # fmt: skip
    found = 0
    for _ in range(20_000):
        s = "".join(rng.choice(pieces) for _ in range(rng.randint(3, 30)))
        hit = any(_valid(k, m.group(0)) for k, p in _DETECTORS for m in p.finditer(s))
        if hit:
            found += 1
            assert _MAY_HOLD.search(s) is not None, s
    assert found > 500
    full_ipv6 = ["2001:0db8:85a3:0000:0000:8a2e:0370:7334", "1:2:3:4:5:6:7:8"]
    for v in [*(v for values in PLANTED.values() for v in values), *full_ipv6]:
        assert _MAY_HOLD.search(v) is not None
        assert Redactor().text(f"at {v} now", "t") != f"at {v} now"


def test_a_bearer_token_in_any_case_is_found() -> None:
    r = Redactor()
    assert "abcDEF123456" not in r.text("Authorization: BeArEr abcDEF123456ghi", "t")
    assert r.by_kind["bearer"] == 1


#: Forms a hostile trace used to carry a value past the detectors (each value planted once,
#: in one form): JSON in a string with the value under a duplicated key, a card as a JSON
#: float, a card with no-break-space or zero-width separators, in full-width or other
#: Unicode digits, an e-mail and a phone in full-width characters.
HOSTILE_FORMS: dict[str, list[str]] = {
    "email": ["dup.secret@example.com", "dupargs.secret@example.com",
              "dupresult.secret@example.com"],
    "card": ["4012888888881881", "5555555555554444", "4111\u00a01111\u00a01111\u00a01111",
             "４１１１１１１１１１１１１１１１", "\u0664" + "\u0661" * 15,
             "5500\u202f0000\u202f0000\u202f0004", "3530\u200b1113\u200b3330\u200b0000"],
    "fullwidth": ["ｊａｎ＠ｅｘａｍｐｌｅ．ｃｏｍ", "＋４４ ２０ ７９４６ ０９５８"],
}  # fmt: skip


def test_a_value_under_a_duplicated_key_of_json_in_a_string_is_redacted() -> None:
    r = Redactor()
    out = r.line({"content": '{"a": "dup.secret@example.com", "a": "x"}'}, "cases")
    assert "dup.secret" not in out
    # the text keeps both keys, each value redacted where it stands
    inner = json.loads(json.loads(out)["content"], object_pairs_hook=list)
    assert [k for k, _ in inner] == ["a", "a"]
    assert re.fullmatch(r"user\d+@example\.com", inner[0][1]) and inner[1][1] == "x"
    # nested, in a list, and with the duplicated key's value a number
    nested = '{"q": "{\\"d\\": \\"deeper.secret@example.com\\", \\"d\\": 1}", "n": [{"c": 1, "c": 4111111111111111}]}'
    out = r.text(nested, "t")
    assert "deeper.secret" not in out and "4111111111111111" not in out


@pytest.mark.parametrize("card", [4012888888881881.0, 5.555555555554444e15, -4012888888881881.0])
def test_a_card_number_written_as_a_json_float_is_redacted(card: float) -> None:
    r = Redactor()
    out = r.value({"card": card, "l": [card]}, "cases")
    for v in (out["card"], out["l"][0]):
        assert isinstance(v, float) and v.is_integer()  # the value keeps its type
        assert v != card and _luhn(str(int(abs(v))))
    assert r.by_kind["card"] == 2
    # inside a JSON string, and in text: the same pseudonym, no digits of the card left
    digits = str(int(abs(card)))
    for text in (json.dumps({"c": card}), f'{{"c": {card!r}, "c": 1}}', f"paid with {digits}.",
                 f"paid with {digits}.0 today"):  # fmt: skip
        assert digits not in r.text(text, "t"), text
    # ordinary floats are left alone
    assert r.value({"x": 1.5, "y": 4012888888881881.5, "z": 1e300}, "t") == {
        "x": 1.5, "y": 4012888888881881.5, "z": 1e300}  # fmt: skip


@pytest.mark.parametrize("value", [v for vs in HOSTILE_FORMS.values() for v in vs])
def test_unicode_digits_and_separators_do_not_hide_a_value(value: str) -> None:
    import unicodedata

    r = Redactor()
    for text in (value, f"pay {value} now", f"请用{value}付款"):
        out = r.text(text, "t")
        assert value not in out, out
        folded = unicodedata.normalize("NFKC", out)
        assert not re.search(r"\d{13}", re.sub(r"\W", "", folded).replace("4000000", "")), out


def test_the_reviewers_repro_leaves_nothing() -> None:
    r = Redactor()
    a = r.line({"content": '{"a": "dup.secret@example.com", "a": "x"}'}, "cases")
    b = r.line({"card": 4012888888881881.0, "s": "4111\u00a01111\u00a01111\u00a01111",
                "fw": "４１１１１１１１１１１１１１１１"}, "cases")  # fmt: skip
    for planted in ("dup.secret", "4012888888881881", "4111\u00a01111", "４１１１"):
        assert planted not in a + b
    assert r.by_kind == {"email": 1, "card": 3}


def _raw_trace(n: int, user: str, args: str, result: str) -> dict:
    """A trace (chat span that calls ``lookup``, its tool span, the chat span after) whose
    attributes hold ``user`` (a JSON string's text), ``args`` and ``result`` (JSON texts)
    written as given: duplicated keys and number forms survive into the attribute."""

    def a(key: str, text: str) -> dict:
        return {"key": key, "value": {"stringValue": text}}

    call = f'{{"type":"tool_call","id":"c{n}","name":"lookup","arguments":{args}}}'
    in1 = f'[{{"role":"user","parts":[{{"type":"text","content":{user}}}]}}]'
    out1 = f'[{{"role":"assistant","parts":[{call}],"finish_reason":"tool_calls"}}]'
    in2 = (in1[:-1] + f',{{"role":"assistant","parts":[{call}]}},{{"role":"tool","parts":'
           f'[{{"type":"tool_call_response","id":"c{n}","response":{result}}}]}}]')  # fmt: skip
    defs = json.dumps([{"type": "function", "name": "lookup", "parameters": {"type": "object"}}])
    trace = f"{n:032x}"
    chat = [a("gen_ai.operation.name", "chat"), a("gen_ai.tool.definitions", defs)]
    return {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": trace, "spanId": f"{n:08x}0000000a", "name": "chat m", "kind": 3,
         "startTimeUnixNano": "1764400000000000000",
         "attributes": [*chat, a("gen_ai.input.messages", in1),
                        a("gen_ai.output.messages", out1)]},
        {"traceId": trace, "spanId": f"{n:08x}0000000b", "name": "execute_tool lookup",
         "startTimeUnixNano": "1764400000100000000",
         "attributes": [a("gen_ai.operation.name", "execute_tool"),
                        a("gen_ai.tool.name", "lookup"), a("gen_ai.tool.call.id", f"c{n}"),
                        a("gen_ai.tool.call.arguments", args),
                        a("gen_ai.tool.call.result", result)]},
        {"traceId": trace, "spanId": f"{n:08x}0000000c", "name": "chat m", "kind": 3,
         "startTimeUnixNano": "1764400000200000000",
         "attributes": [*chat, a("gen_ai.input.messages", in2),
                        a("gen_ai.output.messages",
                          '[{"role":"assistant","parts":[{"type":"text","content":"ok"}]}]')]},
    ]}]}]}  # fmt: skip


def test_no_hostile_form_of_a_planted_value_survives_in_any_file(tmp_path: Path) -> None:
    """Each value of HOSTILE_FORMS, in the user's text, the call's arguments and the tool's
    result, under a duplicated key and as a JSON float where it is a card: an import
    writes none of them, in any form, to any file."""
    import unicodedata

    lines = []
    for n, value in enumerate((v for vs in HOSTILE_FORMS.values() for v in vs), 1):
        s = json.dumps(value, ensure_ascii=n % 2 == 0)
        digits = "".join(str(unicodedata.decimal(c)) for c in value if c.isdecimal())
        args = f'{{"to": {s}, "to": "b", "n": [{{"k": {s}, "k": 1}}]}}'
        result = f'{{"who": {s}, "who": "x"}}'
        if len(digits) >= 13:  # a card: also as a float, and as one under a duplicated key
            args = f'{{"to": {s}, "to": "b", "f": {digits}.0, "e": {digits[0]}.{digits[1:]}e{len(digits) - 1}, "d": {digits}.0, "d": 1}}'
            result = f'{{"c": {digits}.0, "c": 2}}'
        user = json.dumps(f"dup {value} here " + json.dumps({"q": value})[:-1] + ', "q": 1}')
        lines.append(json.dumps(_raw_trace(n, user, args, result), ensure_ascii=n % 3 == 0))
    src = tmp_path / "t.jsonl"
    src.write_text("\n".join(lines) + "\n", "utf-8")
    out = tmp_path / "out"
    report = import_traces([src], out, label="h", redactor=Redactor())
    assert report.problems == [] and report.cases == 2 * len(lines)
    blob = "\n".join(p.read_text("utf-8") for p in out.rglob("*") if p.is_file())
    plain = unicodedata.normalize("NFKC", blob)
    plain = json.loads(json.dumps(plain).replace("\\\\u", "\\u"))  # escapes in texts read
    joined = re.sub(r"(?<=\d)[ \-\u00a0\u202f\u200b](?=\d)", "", plain)
    survivors = []
    for value in (v for vs in HOSTILE_FORMS.values() for v in vs):
        norm = unicodedata.normalize("NFKC", value).replace("\u200b", "")
        digits = "".join(str(unicodedata.decimal(c)) for c in value if c.isdecimal())
        forms = {value, norm} | ({digits} if len(digits) >= 13 else set())
        forms |= {norm.split("@")[0]} if "@" in norm else set()
        survivors += [(value, f) for f in forms if f in blob or f in plain or f in joined]
    assert survivors == []
    assert report.redaction["by_kind"].keys() <= {"email", "card", "phone"}


@pytest.mark.parametrize(
    "text", ["jan.novák@example.cz", "napište na jiří.dvořák@example.cz prosím", "ŻÓŁW@example.pl"]
)
def test_an_email_with_latin_letters_outside_ascii_is_redacted_whole(text: str) -> None:
    r = Redactor()
    out = r.text(text, "t")
    local = text.split("@")[0].split()[-1]
    for part in (local, local[:-1], local[:4]):
        assert part not in out, out
    assert r.by_kind["email"] == 1


def test_text_in_another_script_against_an_email_stays_text() -> None:
    out = Redactor().text("请联系jan@example.com谢谢", "t")
    assert out.startswith("请联系") and "jan@" not in out
