"""Prompt compression: fewer input tokens on a cache miss, never a lost detail.

``RuleCompressor`` (filler phrases, repeated instructions, whitespace; English and Chinese
rule sets as data), ``ModelCompressor`` (any LiteLLM model rewrites to about half) and
``ChainCompressor`` (both) implement ``Compressor``. Every rewrite passes the
detail-preservation check (``lost_details``) or the original is sent; ``Compressed`` says
what happened, ``CompressionLedger`` counts it apart from cache savings.
``semcache compress-eval`` (``semcache.compress.ab``) A/B-tests a compressor against a model.
"""

from __future__ import annotations

from .accounting import CompressionLedger, CompressionTotals, input_cost_usd
from .base import Compressed, Compressor, Message, Refusal, Rejection, Rewrite, Rewriter
from .check import KINDS, LostDetail, lost_details
from .compressor import ChainCompressor, CheckedCompressor, ModelCompressor, RuleCompressor
from .model import REWRITE_INSTRUCTION, ModelRewriter
from .rules import BUILTIN_RULE_SETS, RuleRewriter, RuleSet
from .settings import (
    MODES,
    CompressionSettings,
    Mode,
    build_compressor,
    parse_compress_control,
)
from .tokens import LiteLLMTokenCounter, TokenCounter

__all__ = [
    "BUILTIN_RULE_SETS",
    "KINDS",
    "MODES",
    "REWRITE_INSTRUCTION",
    "ChainCompressor",
    "CheckedCompressor",
    "Compressed",
    "CompressionLedger",
    "CompressionSettings",
    "CompressionTotals",
    "Compressor",
    "LiteLLMTokenCounter",
    "LostDetail",
    "Message",
    "Mode",
    "ModelCompressor",
    "ModelRewriter",
    "Refusal",
    "Rejection",
    "Rewrite",
    "Rewriter",
    "RuleCompressor",
    "RuleRewriter",
    "RuleSet",
    "TokenCounter",
    "build_compressor",
    "input_cost_usd",
    "lost_details",
    "parse_compress_control",
]
