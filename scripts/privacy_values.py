"""Synthetic private values for the privacy corpus: checksum-valid, generated, nobody's real data.

Each generator takes a seeded ``random.Random`` and returns one value as it would be written in
a prompt. Used by ``build_privacy_corpus.py``; kept apart so the templates read as prose.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import string
import uuid

import phonenumbers
from stdnum import iban as std_iban
from stdnum import luhn, verhoeff
from stdnum.br import cpf
from stdnum.cn import ric
from stdnum.es import dni
from stdnum.in_ import aadhaar
from stdnum.it import codicefiscale
from stdnum.kr import rrn
from stdnum.us import ssn

ALNUM = string.ascii_letters + string.digits
GIVEN_EN = ["emily", "jack", "olivia", "liam", "sophia", "noah", "mia", "ethan", "ava", "lucas"]
FAMILY_EN = ["carter", "nguyen", "walsh", "romero", "fischer", "okafor", "lindqvist", "patel"]
PINYIN = [
    "zhang.wei",
    "li.na",
    "wang.fang",
    "liu.yang",
    "chen.jing",
    "zhao.lei",
    "huang.min",
    "zhou.tao",
    "wu.xia",
    "xu.hao",
]
DOMAINS = [
    "gmail.com",
    "outlook.com",
    "qq.com",
    "163.com",
    "proton.me",
    "fastmail.fm",
    "acme-logistics.com",
    "brightwave.io",
    "hzdata.cn",
    "nordicpay.se",
]


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _chars(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


# -- email -----------------------------------------------------------------------------------
def email(rng: random.Random) -> str:
    style = rng.randrange(4)
    if style == 0:
        local = f"{rng.choice(GIVEN_EN)}.{rng.choice(FAMILY_EN)}"
    elif style == 1:
        local = f"{rng.choice(PINYIN)}{rng.randrange(70, 100)}"
    elif style == 2:
        local = f"{rng.choice(GIVEN_EN)[0]}{rng.choice(FAMILY_EN)}{rng.randrange(1, 99)}"
    else:
        local = _digits(rng, rng.randrange(6, 11)).lstrip("0") or "12345678"
    return f"{local}@{rng.choice(DOMAINS)}"


# -- phone -----------------------------------------------------------------------------------
def _valid_phone(rng: random.Random, make, region: str) -> str:
    while True:
        raw = make()
        number = phonenumbers.parse(raw, region)
        if phonenumbers.is_valid_number(number):
            return raw


def phone_cn_mobile(rng: random.Random) -> str:
    def make() -> str:
        d = "1" + rng.choice("3578") + _digits(rng, 9)
        style = rng.randrange(5)
        if style == 0:
            return d
        if style == 1:
            return f"{d[:3]}-{d[3:7]}-{d[7:]}"
        if style == 2:
            return f"{d[:3]} {d[3:7]} {d[7:]}"
        if style == 3:
            return f"+86 {d[:3]} {d[3:7]} {d[7:]}"
        return f"+86{d}"

    return _valid_phone(rng, make, "CN")


def phone_cn_landline(rng: random.Random) -> str:
    def make() -> str:
        area, length = rng.choice([("010", 8), ("021", 8), ("0755", 8), ("020", 8), ("0571", 8)])
        return f"{area}-{rng.choice('2345678')}{_digits(rng, length - 1)}"

    return _valid_phone(rng, make, "CN")


def phone_us(rng: random.Random) -> str:
    def make() -> str:
        area = rng.choice(["212", "415", "646", "312", "617", "206", "303", "512", "718"])
        exchange = rng.choice("23456789") + _digits(rng, 2)
        line = _digits(rng, 4)
        style = rng.randrange(4)
        if style == 0:
            return f"({area}) {exchange}-{line}"
        if style == 1:
            return f"{area}-{exchange}-{line}"
        if style == 2:
            return f"+1 {area} {exchange} {line}"
        return f"{area}.{exchange}.{line}"

    return _valid_phone(rng, make, "US")


def phone_intl(rng: random.Random) -> str:
    def make() -> str:
        style = rng.randrange(4)
        if style == 0:
            return f"+44 7{rng.choice('45789')}{_digits(rng, 2)} {_digits(rng, 6)}"
        if style == 1:
            return f"+49 15{rng.choice('12579')} {_digits(rng, 7)}"
        if style == 2:
            return f"+81 90-{_digits(rng, 4)}-{_digits(rng, 4)}"
        return "+33 6 " + " ".join(_digits(rng, 2) for _ in range(4))

    return _valid_phone(rng, make, "US")


def phone(rng: random.Random) -> str:
    return rng.choice([phone_cn_mobile, phone_cn_landline, phone_us, phone_intl])(rng)


# -- cards -----------------------------------------------------------------------------------
_CARD_PREFIXES = [
    ("4", 16),
    ("4", 16),
    ("51", 16),
    ("55", 16),
    ("2221", 16),
    ("34", 15),
    ("37", 15),
    ("6011", 16),
    ("65", 16),
    ("3530", 16),
    ("62", 16),
    ("62", 19),
    ("36", 14),
]


def _card_digits(rng: random.Random) -> str:
    prefix, length = rng.choice(_CARD_PREFIXES)
    body = prefix + _digits(rng, length - len(prefix) - 1)
    return body + luhn.calc_check_digit(body)


def _format_card(rng: random.Random, digits: str) -> str:
    style = rng.randrange(3)
    if style == 0 or len(digits) not in (15, 16):
        return digits
    sep = " " if style == 1 else "-"
    if len(digits) == 15:
        return sep.join([digits[:4], digits[4:10], digits[10:]])
    return sep.join(digits[i : i + 4] for i in range(0, 16, 4))


def card(rng: random.Random) -> str:
    return _format_card(rng, _card_digits(rng))


def card_luhn_fail(rng: random.Random) -> str:
    digits = _card_digits(rng)
    wrong = str((int(digits[-1]) + rng.randrange(1, 10)) % 10)
    return _format_card(rng, digits[:-1] + wrong)


# -- IBAN ------------------------------------------------------------------------------------
_BBAN = {
    "DE": "8n10n",
    "GB": "4a14n",
    "NL": "4a10n",
    "FR": "10n11n2n",
    "ES": "20n",
    "BE": "12n",
    "CH": "5n12n",
    "IT": "1a10n12n",
    "AT": "16n",
    "PL": "24n",
}


def _bban(rng: random.Random, spec: str) -> str:
    out = ""
    number = ""
    for ch in spec:
        if ch.isdigit():
            number += ch
            continue
        count = int(number)
        number = ""
        out += _chars(rng, string.ascii_uppercase if ch == "a" else string.digits, count)
    return out


def iban(rng: random.Random) -> str:
    while True:
        country = rng.choice(sorted(_BBAN))
        bban = _bban(rng, _BBAN[country])
        check = std_iban.calc_check_digits(country + "00" + bban)
        compact = country + check + bban
        if std_iban.is_valid(compact):
            break
    if rng.randrange(2):
        return compact
    return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))


def iban_bad_check(rng: random.Random) -> str:
    compact = iban(rng).replace(" ", "")
    check = int(compact[2:4])
    wrong = f"{(check + rng.randrange(1, 90)) % 97 + 2:02d}"
    return compact[:2] + wrong + compact[4:]


# -- national IDs ----------------------------------------------------------------------------
def cn_ric(rng: random.Random) -> str:
    while True:
        area = rng.choice(["110105", "310104", "440305", "510107", "330106", "320102", "420111"])
        year = rng.randrange(1955, 2006)
        body = f"{area}{year}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}{_digits(rng, 3)}"
        value = body + ric.calc_check_digit(body + "0")  # stdnum wants a check position
        if ric.is_valid(value):
            return value


def us_ssn(rng: random.Random) -> str:
    while True:
        area = rng.randrange(1, 900)
        value = f"{area:03d}-{rng.randrange(1, 100):02d}-{rng.randrange(1, 10000):04d}"
        if ssn.is_valid(value):
            return value


def br_cpf(rng: random.Random) -> str:
    while True:
        body = _digits(rng, 9)
        value = body + cpf._calc_check_digits(body)
        if cpf.is_valid(value):
            return f"{value[:3]}.{value[3:6]}.{value[6:9]}-{value[9:]}"


def es_dni(rng: random.Random) -> str:
    while True:
        body = _digits(rng, 8)
        value = body + dni.calc_check_digit(body)
        if dni.is_valid(value):
            return value


def in_aadhaar(rng: random.Random) -> str:
    while True:
        body = rng.choice("23456789") + _digits(rng, 10)
        value = body + verhoeff.calc_check_digit(body)
        if aadhaar.is_valid(value):
            return f"{value[:4]} {value[4:8]} {value[8:]}"


def kr_rrn(rng: random.Random) -> str:
    while True:
        body = (
            f"{rng.randrange(60, 100):02d}{rng.randrange(1, 13):02d}"
            f"{rng.randrange(1, 29):02d}{rng.choice('12')}{_digits(rng, 5)}"
        )
        value = body + rrn.calc_check_digit(body)
        if rrn.is_valid(value):
            return f"{value[:6]}-{value[6:]}"


def it_codicefiscale(rng: random.Random) -> str:
    while True:
        body = (
            _chars(rng, "BCDFGLMNPRSTVZ", 6)
            + f"{rng.randrange(50, 100):02d}"
            + rng.choice("ABCDEHLMPRST")
            + f"{rng.randrange(1, 29) + rng.choice([0, 40]):02d}"
            + rng.choice("ABCDEFGHLMZ")
            + _digits(rng, 3)
        )
        value = body + codicefiscale.calc_check_digit(body)
        if codicefiscale.is_valid(value):
            return value


def national_id(rng: random.Random) -> str:
    return rng.choice(
        [cn_ric, cn_ric, us_ssn, br_cpf, es_dni, in_aadhaar, kr_rrn, it_codicefiscale]
    )(rng)


def cn_ric_bad_check(rng: random.Random) -> str:
    value = cn_ric(rng)
    digits = "0123456789X"
    return value[:-1] + rng.choice([d for d in digits if d != value[-1]])


# -- IP --------------------------------------------------------------------------------------
def ipv4(rng: random.Random) -> str:
    while True:
        address = ipaddress.IPv4Address(rng.getrandbits(32))
        if address.is_global and not address.is_multicast:
            return str(address)


def ipv6(rng: random.Random) -> str:
    while True:
        prefix = rng.choice([0x240E, 0x2408, 0x2409, 0x2A00, 0x2600, 0x2A03])
        groups = [prefix] + [rng.getrandbits(16) for _ in range(3)] + [0, 0, 0, rng.getrandbits(16)]
        address = ipaddress.IPv6Address(int("".join(f"{g:04x}" for g in groups), 16))
        if address.is_global:
            return str(address)


def ip(rng: random.Random) -> str:
    return ipv4(rng) if rng.randrange(3) else ipv6(rng)


def lan_ip(rng: random.Random) -> str:
    return rng.choice(
        [
            f"192.168.{rng.randrange(0, 3)}.{rng.randrange(1, 255)}",
            f"10.{rng.randrange(0, 256)}.{rng.randrange(0, 256)}.{rng.randrange(1, 255)}",
            "127.0.0.1",
            f"172.{rng.randrange(16, 32)}.{rng.randrange(0, 256)}.{rng.randrange(1, 255)}",
        ]
    )


# -- secrets ---------------------------------------------------------------------------------
def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": _digits(rng, 8), "iat": 1700000000}).encode())
    return f"{header}.{payload}.{_chars(rng, ALNUM + '-_', 43)}"


def pem_key(rng: random.Random) -> str:
    lines = ["MIIEpAIBAAKCAQEA" + _chars(rng, ALNUM + "+/", 48)]
    lines += [_chars(rng, ALNUM + "+/", 64) for _ in range(3)]
    return (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    )


def password(rng: random.Random) -> str:
    core = rng.choice(["Sunflower", "Tiger", "Maple", "Dragon", "Ocean", "Falcon"])
    return core + rng.choice("!@#$%&") + _digits(rng, rng.randrange(2, 5))


def token(rng: random.Random) -> str:
    return _chars(rng, ALNUM, rng.randrange(28, 41))


def api_key(rng: random.Random) -> str:
    kind = rng.randrange(9)
    if kind == 0:
        return "AKIA" + _chars(rng, string.ascii_uppercase + "234567", 16)
    if kind == 1:
        return "ghp_" + _chars(rng, ALNUM, 36)
    if kind == 2:
        return "sk-proj-" + _chars(rng, ALNUM + "-_", 48)
    if kind == 3:
        return "sk-ant-api03-" + _chars(rng, ALNUM + "-_", 40)
    if kind == 4:
        return "AIza" + _chars(rng, ALNUM + "-_", 35)
    if kind == 5:
        return f"xoxb-{_digits(rng, 11)}-{_digits(rng, 12)}-{_chars(rng, ALNUM, 24)}"
    if kind == 6:
        return "sk_live_" + _chars(rng, ALNUM, 24)
    if kind == 7:
        return "hf_" + _chars(rng, ALNUM, 34)
    return jwt(rng)


# -- look-alikes that are not private --------------------------------------------------------
def order_number(rng: random.Random) -> str:
    style = rng.randrange(4)
    if style == 0:
        return f"ORD-{rng.randrange(2022, 2026)}{rng.randrange(1, 13):02d}-{_digits(rng, 5)}"
    if style == 1:
        return _digits(rng, 12)
    if style == 2:
        return rng.choice("123456789") + _digits(rng, 17)
    day = f"{rng.randrange(2022, 2026)}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}"
    return day + _digits(rng, 6)


def version_string(rng: random.Random) -> str:
    parts = rng.randrange(3, 5)
    return ".".join(str(rng.randrange(0, 20)) for _ in range(parts))


def sha_hash(rng: random.Random) -> str:
    return _chars(rng, "0123456789abcdef", rng.choice([7, 32, 40, 64]))


def a_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def timestamp(rng: random.Random) -> str:
    seconds = rng.randrange(1_600_000_000, 1_800_000_000)
    style = rng.randrange(3)
    if style == 0:
        return str(seconds)
    if style == 1:
        return str(seconds * 1000 + rng.randrange(1000))
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


GENERATORS = {
    name: fn
    for name, fn in globals().items()
    if callable(fn) and not name.startswith("_") and fn.__module__ == __name__
}
