"""Prompt compression: fewer input tokens on a cache miss, never a lost detail.

``RuleCompressor``, ``ModelCompressor`` and ``ChainCompressor`` implement ``Compressor``;
every rewrite passes the detail-preservation check (``lost_details``) or the original is
sent. ``CompressionLedger`` counts savings apart from the cache's.
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
