"""CompressionSettings, the per-request control and the settings -> compressor builder."""

from __future__ import annotations

import pytest

from semcache.compress import (
    ChainCompressor,
    CompressionSettings,
    ModelCompressor,
    RuleCompressor,
    build_compressor,
    parse_compress_control,
)
from semcache.errors import ConfigError, InvalidRequest, InvalidRequestType, SettingsError


def test_off_by_default() -> None:
    settings = CompressionSettings()
    assert settings.mode == "off" and settings.mode_for("faq") == "off"
    assert build_compressor(settings, "off") is None


def test_request_beats_namespace_beats_default() -> None:
    settings = CompressionSettings(mode="off", namespace_modes={"support": "rules"})
    assert settings.mode_for("support") == "rules"
    assert settings.mode_for("other") == "off"
    assert settings.mode_for(None) == "off"
    assert settings.mode_for("support", "off") == "off"
    assert settings.mode_for("other", "rules") == "rules"


@pytest.mark.parametrize("mode", ["model", "chain"])
def test_model_modes_need_a_model(mode: str) -> None:
    with pytest.raises(SettingsError, match=r"compression\.model"):
        CompressionSettings(mode=mode)
    with pytest.raises(SettingsError, match=r"compression\.model"):
        CompressionSettings(namespace_modes={"x": mode})
    with pytest.raises(ConfigError, match=r"compression\.model"):
        build_compressor(CompressionSettings(), mode)


def test_builder_makes_each_shape_with_its_settings() -> None:
    settings = CompressionSettings(model="gpt-4o-mini", min_tokens=50)
    rules = build_compressor(settings, "rules")
    assert isinstance(rules, RuleCompressor) and rules.min_tokens == 50
    assert isinstance(build_compressor(settings, "model"), ModelCompressor)
    assert isinstance(build_compressor(settings, "chain"), ChainCompressor)


def test_unknown_rule_set_and_bad_numbers_are_rejected() -> None:
    with pytest.raises(SettingsError, match="rule_sets"):
        CompressionSettings(rule_sets=["fr"])
    with pytest.raises(SettingsError):
        CompressionSettings(min_tokens=-1)
    with pytest.raises(SettingsError):
        CompressionSettings(target_ratio=1.0)


def test_rule_files_are_loaded(tmp_path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"name": "mine", "rules": [{"id": "a", "kind": "delete", "pattern": "zz"}]}')
    settings = CompressionSettings(rule_files=[path])
    assert build_compressor(settings, "rules") is not None
    with pytest.raises(ConfigError, match="cannot read rule set"):
        build_compressor(CompressionSettings(rule_files=[tmp_path / "missing.json"]), "rules")


@pytest.mark.parametrize(
    ("cache", "expected"),
    [
        (None, None),
        ({}, None),
        ({"ttl": 3}, None),
        ({"compress": "rules"}, "rules"),
        ({"compress": "model"}, "model"),
        ({"compress": "off"}, "off"),
    ],
)
def test_parse_control(cache, expected) -> None:
    assert parse_compress_control(cache) == expected


def test_a_bad_control_names_the_field() -> None:
    with pytest.raises(InvalidRequest) as info:
        parse_compress_control({"compress": "zip"})
    assert info.value.field == "cache.compress"
    with pytest.raises(InvalidRequestType):
        parse_compress_control({"compress": True})
