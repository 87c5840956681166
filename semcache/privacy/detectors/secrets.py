"""Secrets: API keys of well-known formats, credentials in assignments, and random-looking tokens.

- **Known formats**: detect-secrets' maintained regex lists (its patterns, not its per-line
  scanner, which reports no offsets) plus the formats it lacks (current OpenAI and Anthropic
  ``sk-`` keys, Google ``AIza``, Hugging Face ``hf_``, GitHub fine-grained PATs, Alibaba
  ``LTAI``) and PEM private-key blocks.
- **Assignments**: the value after a credential keyword (``password: hunter2``, ``密码是 X``)
  unless it is a placeholder or a code reference.
- **High entropy**: a base64/url-safe token that looks random (:func:`random_looking`), with
  a lower bar after a credential keyword. Hex-only strings and UUIDs never qualify: in
  prompts they are far more often digests and ids than keys.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache

from semcache.privacy import _deps
from semcache.privacy.deadline import check_deadline
from semcache.privacy.detectors._context import preceded_by
from semcache.privacy.findings import Finding, Kind

# detect-secrets plugin modules and classes whose denylists are precise enough for free text.
_DETECT_SECRETS_PLUGINS: tuple[tuple[str, str, str], ...] = (
    ("aws", "AWSKeyDetector", "aws_access_key"),
    ("azure_storage_key", "AzureStorageKeyDetector", "azure_storage_key"),
    ("basic_auth", "BasicAuthDetector", "url_password"),
    ("discord", "DiscordBotTokenDetector", "discord_token"),
    ("github_token", "GitHubTokenDetector", "github_token"),
    ("gitlab_token", "GitLabTokenDetector", "gitlab_token"),
    ("jwt", "JwtTokenDetector", "jwt"),
    ("mailchimp", "MailchimpDetector", "mailchimp_key"),
    ("npm", "NpmDetector", "npm_token"),
    ("openai", "OpenAIDetector", "openai_key"),
    ("pypi_token", "PypiTokenDetector", "pypi_token"),
    ("sendgrid", "SendGridDetector", "sendgrid_key"),
    ("slack", "SlackDetector", "slack_token"),
    ("square_oauth", "SquareOAuthDetector", "square_secret"),
    ("stripe", "StripeDetector", "stripe_key"),
    ("telegram_token", "TelegramBotTokenDetector", "telegram_token"),
    ("twilio", "TwilioKeyDetector", "twilio_key"),
)

_OWN_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic_key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_\-]{20,}")),
    (
        "openai_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ),
    ("google_api_key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_\-]{35}")),
    ("huggingface_token", re.compile(r"(?<![A-Za-z0-9_-])hf_[A-Za-z0-9]{30,}")),
    ("github_token", re.compile(r"(?<![A-Za-z0-9_-])github_pat_[A-Za-z0-9_]{50,}")),
    ("stripe_key", re.compile(r"(?<![A-Za-z0-9_-])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}")),
    (
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*"),
    ),
    (
        "alibaba_access_key",
        re.compile(r"(?<![A-Za-z0-9_-])LTAI[A-Za-z0-9]{12,20}(?![A-Za-z0-9_-])"),
    ),
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
            re.DOTALL,
        ),
    ),
)

_ASSIGNMENT = re.compile(
    r"(?:(?<![A-Za-z0-9])(?<!max_)(?<!num_)(?<!n_)"
    r"(?:pass(?:word|wd|phrase)?|pwd|secret(?:[_\- ]?key)?|api[_\- ]?key|apikey|"
    r"access[_\- ]?key(?:[_\- ]?id)?|auth[_\- ]?token|access[_\- ]?token|bearer|token|"
    r"client[_\- ]?secret|private[_\- ]?key)"
    r"|密码|口令|密钥|令牌|秘钥|授权码)"
    r"[\"']?\s*(?:[:=：]|是|为|改为|设为|\bis\b|\bto\b)\s*[\"']?"
    r"(?P<value>[^\s\"'`,，。；;)\]}>]{6,})",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"^(?:<.*>|\$\{?.*|\{\{.*|%\(?.*|x{3,}.*|\*{3,}.*|\.{3}.*|"
    r".*(?:your|example|placeholder|redacted|changeme|dummy|environ|getenv|secrets\.).*|"
    r"\[[A-Z_]+\].*)$",
    re.IGNORECASE,
)
_CODE_REFERENCE = re.compile(
    r"^(?:[A-Za-z_]+(?:\.[A-Za-z_]+)+(?:\(\))?|[A-Za-z_]+\(\)|[a-z_]+|[A-Z_]+)[.:]?$"
)
"""A dotted path or call (``config.api_key``, ``getpass()``) or a one-case name (``API_KEY``)."""

_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/=\-.])[A-Za-z0-9_+/=\-]{16,}(?![A-Za-z0-9_+/=\-])")
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_SECRET_CONTEXT = re.compile(
    r"key|token|bearer|secret|credential|auth|passw|apikey|signature|cookie|session|"
    r"密钥|秘钥|令牌|凭证|凭据|口令|密码",
    re.IGNORECASE,
)
_CONTEXT_WINDOW = 30
_VOWELS = frozenset("aeiouAEIOU")

MIN_NORMALISED_ENTROPY = 0.82
"""Shannon entropy over its maximum for the token's length (log2 of min(length, 62)).

Random base62 tokens of 20-64 characters score 0.84-0.95 (1st-99th percentile, measured over
2,000 samples per length); dictionary-word identifiers mostly score lower."""


def shannon_entropy(token: str) -> float:
    """Bits per character of ``token``'s own character distribution."""
    counts = Counter(token)
    total = len(token)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


@cache
def _detect_secrets_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    patterns: list[tuple[str, re.Pattern[str]]] = []
    for module, cls, scheme in _DETECT_SECRETS_PLUGINS:
        plugin = getattr(_deps.detect_secrets_plugin(module), cls)
        patterns.extend((scheme, regex) for regex in plugin.denylist)
    return tuple(patterns)


class SecretDetector:
    """Finds API keys, tokens, private keys and credential values.

    ``min_length``: the shortest random-looking token flagged without a keyword before it
    (``key``, ``token``, ``bearer``, ``密钥``…); after such a keyword 16 characters suffice.
    """

    kinds = frozenset({Kind.SECRET})

    def __init__(self, *, min_length: int = 24) -> None:
        self._min_length = min_length

    def load(self) -> None:
        """Import the detect-secrets plugins the patterns come from."""
        _detect_secrets_patterns()

    def detect(self, text: str) -> Sequence[Finding]:
        findings: list[Finding] = []
        for scheme, regex in (*_detect_secrets_patterns(), *_OWN_FORMATS):
            check_deadline()  # a long text is many passes: a stopped scan ends between them
            for match in regex.finditer(text):
                start, end = _value_span(scheme, match)
                if end > start:
                    findings.append(Finding(Kind.SECRET, start, end, scheme))
        check_deadline()
        for match in _ASSIGNMENT.finditer(text):
            value = match.group("value")
            if _PLACEHOLDER.match(value) or _CODE_REFERENCE.match(value):
                continue
            findings.append(Finding(Kind.SECRET, *match.span("value"), "credential"))
        check_deadline()
        for match in _TOKEN.finditer(text):
            check_deadline()  # each token is weighed: base64 is one long run of them
            context = preceded_by(text, match.start(), _SECRET_CONTEXT, _CONTEXT_WINDOW)
            if random_looking(match.group(), context=context, min_length=self._min_length):
                findings.append(Finding(Kind.SECRET, match.start(), match.end(), "high_entropy"))
        return findings


def random_looking(token: str, *, context: bool, min_length: int = 24) -> bool:
    """Whether ``token`` looks like a random key rather than a word, identifier, hash or UUID: high
    entropy and mixed classes; without a credential keyword before it (``context``) also few
    vowels and frequent switches between classes.
    """
    length = len(token)
    if length < 16 or _UUID.search(token):
        return False
    upper = sum(map(str.isupper, token))
    lower = sum(map(str.islower, token))
    digits = sum(map(str.isdigit, token))
    check_deadline()  # each pass reads the whole token, which may be a megabyte long
    entropy = shannon_entropy(token) / math.log2(min(length, 62))
    if context:
        classes = (upper > 0) + (lower > 0) + (digits > 0)
        return classes >= 2 and (upper > 0 or lower > 0) and entropy >= 0.8 and not _hex(token)
    if length < min_length or upper < 2 or lower < 2 or digits < 2:
        return False
    letters = upper + lower
    vowels = sum(map(_VOWELS.__contains__, token)) / letters
    check_deadline()
    return entropy >= MIN_NORMALISED_ENTROPY and vowels <= 0.34 and _switch_rate(token) >= 0.38


def _hex(token: str) -> bool:
    return all(ch in "0123456789abcdefABCDEF-" for ch in token)


def _switch_rate(token: str) -> float:
    """The share of neighbouring characters whose classes (upper, lower, digit, other) differ."""
    if token.isascii():  # one class letter per character, then its runs, both in C
        runs = len(_CLASS_RUNS.findall(token.translate(_ASCII_CLASSES)))
        return (runs - 1) / (len(token) - 1)

    def cls(ch: str) -> int:
        return 0 if ch.isupper() else 1 if ch.islower() else 2 if ch.isdigit() else 3

    return sum(cls(a) != cls(b) for a, b in itertools.pairwise(token)) / (len(token) - 1)


_ASCII_CLASSES = {
    code: "u"
    if chr(code).isupper()
    else "l"
    if chr(code).islower()
    else "d"
    if chr(code).isdigit()
    else "o"
    for code in range(128)
}
_CLASS_RUNS = re.compile("u+|l+|d+|o+")


_VALUE_GROUP_SCHEMES = frozenset({"aws_access_key", "url_password", "npm_token"})
"""detect-secrets patterns whose first group is the secret (in others, groups are prefixes)."""


def _value_span(scheme: str, match: re.Match[str]) -> tuple[int, int]:
    """The secret itself: group 1 where that is the value, else the match minus delimiters."""
    if scheme in _VALUE_GROUP_SCHEMES and match.re.groups and match.group(1):
        return match.span(1)
    start, end = match.span()
    text = match.string
    while start < end and text[start] in " \t\r\n=:\"'":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'":
        end -= 1
    return start, end
