#!/usr/bin/env python3
"""Test vectors for `idem-audit key`: the write-up's idempotency_key(), run by Python itself.

Each vector is a (run, step, tool, args-as-JSON-text) case. The args text is parsed with
json.loads, exactly as an agent receiving it from a model would, and then hashed by the
write-up's function unchanged. `normalized` is the SPEC's integral-float rule applied first
(`4500.0` -> `4500`), which `idem-audit key --normalize` must reproduce.

    python3 scripts/key_vectors.py > tests/data/key_vectors.json
"""

import hashlib
import json
import sys


def idempotency_key(run_id: str, step: int, tool: str, args: dict) -> str:
    # Verbatim from the write-up.
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"))
    material = f"{run_id}|{step}|{tool}|{canonical}"
    return hashlib.sha256(material.encode()).hexdigest()[:32]


def normalize(value):
    """Integral floats become integers, at every depth (SPEC section 4)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    return value


CASES = [
    ("7f3a", 4, "issue_refund", '{"order":"A-88214","amount_p":4500}', "the incident's call"),
    ("7f3a", 4, "issue_refund", '{"amount_p":4500,"order":"A-88214"}', "same call, keys reordered"),
    ("7f3a", 4, "issue_refund", '{ "order" : "A-88214", "amount_p" : 4500 }', "same call, spaced"),
    ("7f3a", 5, "issue_refund", '{"order":"A-88214","amount_p":4500}', "another step"),
    ("7f3a", 4, "issue_refund", '{"order":"A-88214","amount_p":4500.0}', "integral float amount"),
    ("r-9", 1, "create_charge", '{"customer":"cus_1","amount_minor":1999,"currency":"EUR","meta":{"z":1,"a":{"y":[3,2,1],"b":"x"}}}', "nested objects"),
    ("r-9", 2, "flags", '{"capture":true,"refund":false,"note":null}', "booleans and null"),
    ("r-9", 3, "batch", '{"items":[1,"two",[3,{"b":4,"a":5}],null,true]}', "lists"),
    ("r-9", 4, "big_ints", '{"n":-12,"zero":0,"minus_zero":-0,"big":123456789012345678901234567890}', "integers"),
    ("r-9", 5, "unicode", '{"name":"Zoë Ångström","city":"Zürich"}', "latin-1 characters"),
    ("r-9", 6, "unicode", '{"greeting":"こんにちは","emoji":"😀","del":"\\u007f"}', "CJK, astral plane, DEL"),
    ("r-9", 7, "escapes", '{"q":"say \\"hi\\"","path":"C:\\\\tmp","nl":"a\\nb\\tc","ctl":"\\u0001\\u001f"}', "escaped characters"),
    ("r-9", 8, "unicode_keys", '{"ä":1,"a":2,"z":3,"Z":4,"é":5}', "non-ASCII keys sort by code point"),
    ("r-9", 9, "floats", '{"big":1e20,"small":1.5e-7,"neg_zero":-0.0,"amount":4500.0}', "floats as Python prints them"),
    ("r-9", 10, "floats", '{"a":0.1,"b":1e16,"c":1e15,"d":0.0001,"e":0.00001,"f":123456789012345.6,"g":2.5E+3,"h":1.0e-3}', "float formatting boundaries"),
    ("r-9", 11, "floats", '{"pi":3.141592653589793,"third":0.3333333333333333,"neg":-2.5,"tiny":5e-324,"huge":1.7976931348623157e308}', "float precision"),
    ("r-9", 12, "list_args", '[1,2.0,{"b":1,"a":2}]', "arguments that are a list"),
    ("run with spaces", 0, "t", '{}', "empty object, odd run id"),
]


def main() -> None:
    out = []
    for run, step, tool, text, about in CASES:
        args = json.loads(text)
        norm = normalize(args)
        out.append(
            {
                "about": about,
                "run": run,
                "step": step,
                "tool": tool,
                "args": text,
                "canonical": json.dumps(args, sort_keys=True, separators=(",", ":")),
                "key": idempotency_key(run, step, tool, args),
                "normalized_canonical": json.dumps(norm, sort_keys=True, separators=(",", ":")),
                "normalized_key": idempotency_key(run, step, tool, norm),
            }
        )
    json.dump({"generator": "scripts/key_vectors.py", "python": sys.version.split()[0], "vectors": out},
              sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
