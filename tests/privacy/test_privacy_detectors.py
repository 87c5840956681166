"""Each built-in detector: what it finds, what it must not, and the checksum failures."""

from __future__ import annotations

import pytest

from semcache.errors import ConfigError
from semcache.privacy import (
    CardDetector,
    EmailDetector,
    IbanDetector,
    IpDetector,
    Kind,
    NationalIdDetector,
    PatternDetector,
    PhoneDetector,
    SecretDetector,
)
from semcache.privacy.detectors.financial import card_network
from semcache.privacy.detectors.secrets import random_looking


def spans(detector, text: str) -> list[str]:
    return [text[f.start : f.end] for f in detector.detect(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail alice.w@corp-mail.net today", ["alice.w@corp-mail.net"]),
        ("请发到邮箱zhang.wei88@qq.com。", ["zhang.wei88@qq.com"]),
        ("two: a_b@x.io, c+tag@y.co.uk.", ["a_b@x.io", "c+tag@y.co.uk"]),
        ("git clone git@github.com:acme/tools.git", []),
        ("pin pkg@1.2.3 and user@localhost", []),
        ("decorate with @app.route('/x')", []),
    ],
)
def test_email(text, expected):
    assert spans(EmailDetector(), text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我的手机号是13812345678，请回电", ["13812345678"]),
        ("手机 138-1234-5678", ["138-1234-5678"]),
        ("call (415) 555-2671 now", ["(415) 555-2671"]),
        ("UK office +44 20 7946 0958", ["+44 20 7946 0958"]),
        ("座机 0755-86013388", ["0755-86013388"]),
        ('send_sms(to="+8613912345678")', ["+8613912345678"]),  # in code: still private
        ("call 4155552671", ["4155552671"]),  # bare digits after a phone keyword
        ("MAX_INT = 2147483647", []),  # bare digits, no keyword: a constant
        ("order 20240315 shipped", []),
        ("epoch 1700000000", []),
        ("server 172.27.158.228", []),  # an IPv4 address, not a phone number
        ("version 1.2.3.4", []),
    ],
)
def test_phone(text, expected):
    assert spans(PhoneDetector(), text) == expected


def test_phone_regions_are_validated():
    with pytest.raises(ConfigError, match="regions"):
        PhoneDetector("CN")
    with pytest.raises(ConfigError, match="unknown region"):
        PhoneDetector(["XX"]).detect("call 13812345678 now please")


def test_phone_region_decides_national_formats():
    text = "ring (415) 555-2671 tonight"
    assert spans(PhoneDetector(["CN"]), text) == []
    assert spans(PhoneDetector(["US"]), text) == ["(415) 555-2671"]
    assert spans(PhoneDetector(["CN"]), "ring +1 415-555-2671") == ["+1 415-555-2671"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("card 4111 1111 1111 1111 ok", ["4111 1111 1111 1111"]),
        ("amex 378282246310005.", ["378282246310005"]),
        ("mc 5555-5555-5555-4444", ["5555-5555-5555-4444"]),
        ("银行卡6212345678901232被冻结", ["6212345678901232"]),
        ("card 4111 1111 1111 1112", []),  # Luhn fails
        ("order 8123456789012347", []),  # Luhn passes, but no card network starts with 8
        ("mixed 4111 1111-1111 1111", []),  # two kinds of separator
        ("4111 1111 1111 1111 010-28742761", ["4111 1111 1111 1111"]),  # digits follow
    ],
)
def test_card(text, expected):
    assert spans(CardDetector(), text) == expected


def test_card_network_needs_prefix_and_length():
    assert card_network("4111111111111111") == "visa"
    assert card_network("378282246310005") == "amex"
    assert card_network("37828224631000") is None  # amex is 15 digits
    assert card_network("9111111111111111") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("IBAN: DE89 3704 0044 0532 0130 00 is mine", ["DE89 3704 0044 0532 0130 00"]),
        ("pay GB82WEST12345698765432.", ["GB82WEST12345698765432"]),
        ("汇到GB82WEST12345698765432的账户", ["GB82WEST12345698765432"]),
        ("lower de89370400440532013000 too", ["de89370400440532013000"]),
        ("bad DE88 3704 0044 0532 0130 00", []),  # mod-97 fails
        ("GB82WEST1234569876543", []),  # one character short for GB
    ],
)
def test_iban(text, expected):
    assert spans(IbanDetector(), text) == expected


@pytest.mark.parametrize(
    ("text", "scheme"),
    [
        ("身份证号11010519491231002X。", "cn_ric"),
        ("my ssn is 536-22-8726", "us_ssn"),
        ("SSN: 536228726", "us_ssn"),
        ("CPF 123.456.789-09", "br_cpf"),
        ("DNI 12345678Z", "es_dni"),
        ("codice RSSMRA85T10A562S", "it_codicefiscale"),
        ("aadhaar 2345 6789 0124", "in_aadhaar"),
        ("rrn 971013-9019902", "kr_rrn"),
        ("BSN: 111222333", "nl_bsn"),
    ],
)
def test_national_id_found(text, scheme):
    findings = NationalIdDetector().detect(text)
    assert [f.scheme for f in findings] == [scheme]
    assert all(f.kind is Kind.NATIONAL_ID for f in findings)


@pytest.mark.parametrize(
    "text",
    [
        "身份证号110105194912310021",  # check digit wrong
        "身份证号11010519491331002X",  # month 13
        "SSN 078-05-1120",  # the famous invalid one
        "ssn 000-12-3456",  # area 000 is never issued
        "CPF 123.456.789-00",  # check digits wrong
        "DNI 12345678A",  # check letter wrong
        "order 111222333",  # passes BSN's 11-test, but no keyword
        "room 536228726",  # a valid SSN shape without dashes needs a keyword
    ],
)
def test_national_id_checksum_and_context_failures(text):
    assert NationalIdDetector().detect(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ip 8.8.8.8 and 203.0.113.7", ["8.8.8.8"]),  # 203.0.113/24 is documentation
        ("server 45.33.12.9:8080.", ["45.33.12.9"]),
        ("公网IP是3.203.135.156，", ["3.203.135.156"]),
        ("addr 2408:8207:1850:2a60::1e", ["2408:8207:1850:2a60::1e"]),
        ("router 192.168.1.1 and 127.0.0.1:8000", []),
        ("version 1.2.3.4, v1.2.3.4, numpy>=12.0.4.12", []),
        ("发布9.10.15.15修复了吗", []),
        ("回退到7.7.8.15版本", []),
        ("std::vector<int> at 12:30:45 mac 00:1A:2B:3C:4D:5E", []),
        ("2001:db8::1 is documentation", []),
        ("oid 1.3.6.1.4.1", []),
    ],
)
def test_ip(text, expected):
    assert spans(IpDetector(), text) == expected


def test_ip_public_only_can_be_turned_off():
    assert spans(IpDetector(public_only=False), "router 192.168.1.1") == ["192.168.1.1"]


@pytest.mark.parametrize(
    ("text", "value", "scheme"),
    [
        ("key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
        ("ghp_" + "a1B2" * 9, "ghp_" + "a1B2" * 9, "github_token"),
        ("export K=sk-proj-abcDEF1234567890ghijKLMN", "sk-proj-abcDEF1234567890ghijKLMN", None),
        ("xoxb-12345678901-123456789012-abcdefABCDEF123456789012", None, "slack_token"),
        ("password: hunter22", "hunter22", "credential"),
        ("密码是Abc12345。", "Abc12345", "credential"),
        ("set the wifi password to Maple%9742 now", "Maple%9742", "credential"),
        ("https://bob:s3cr3tpw@host.com/x", "s3cr3tpw", "url_password"),
        ("Authorization: Bearer 9fK2mQ7xLp3Rz8Vn", "9fK2mQ7xLp3Rz8Vn", "high_entropy"),
        ("授权码是ZjAZYzaxpdoINewAqKDXfjcJCwWFn，", "ZjAZYzaxpdoINewAqKDXfjcJCwWFn", None),
    ],
)
def test_secret_found(text, value, scheme):
    findings = SecretDetector().detect(text)
    assert findings, text
    if value is not None:
        assert any(text[f.start : f.end] == value for f in findings)
    if scheme is not None:
        assert scheme in {f.scheme for f in findings}


def test_private_key_block_is_one_span():
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\nxyz\n-----END RSA PRIVATE KEY-----"
    text = f"fix this:\n{block}\nthanks"
    assert block in spans(SecretDetector(), text)


@pytest.mark.parametrize(
    "text",
    [
        "sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "uuid 550e8400-e29b-41d4-a716-446655440000",
        "class Base64EncoderV2ForUTF8Streams",
        "model Qwen2.5-Coder-32B-Instruct and paraphrase-multilingual-MiniLM-L12-v2",
        'api_key="<YOUR_API_KEY>" or password=os.environ["DB_PASSWORD"]',
        "token: ${GITHUB_TOKEN} and password: ******** and api_key = config.api_key",
        "max_tokens=409600, the password field is required",
    ],
)
def test_secret_look_alikes(text):
    assert SecretDetector().detect(text) == []


def test_random_looking_needs_context_for_short_tokens():
    token = "9fK2mQ7xLp3Rz8Vn"  # 16 characters
    assert random_looking(token, context=True)
    assert not random_looking(token, context=False)


def test_pattern_detector():
    detector = PatternDetector({"employee_id": r"EMP-\d{6}"})
    [finding] = detector.detect("I am EMP-123456.")
    assert (finding.kind, finding.scheme, finding.start, finding.end) == (
        Kind.CUSTOM,
        "employee_id",
        5,
        15,
    )


@pytest.mark.parametrize(
    ("patterns", "message"),
    [
        ({"Bad Name": "x"}, "name"),
        ({"ok": "("}, "not a valid regex"),
        ({"ok": "a*"}, "empty string"),
    ],
)
def test_pattern_detector_rejects_bad_patterns(patterns, message):
    with pytest.raises(ConfigError, match=message):
        PatternDetector(patterns)
