"""Config file parsing, secret resolution and key handling of the proxy."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import pytest
from starlette.requests import Request

from semcache.errors import ConfigError
from semcache.server.auth import KeyRing, bearer
from semcache.server.config import load_config, parse_config, resolve_secret
from semcache.server.upstreams import UpstreamTable

TOML = """
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "http://127.0.0.1:9/v1"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"

[[clients]]
key = "client-a"
tenant = "team-a"

[[clients]]
key = "os.environ/CLIENT_B_KEY"
tenant = "team-b"

[server]
admin_key = "os.environ/ADMIN_KEY"

[cache.semantic]
threshold = 0.9

[cache.store]
backend = "none"
"""

YAML = """
model_list:
  - model_name: fast
    litellm_params:
      model: openai/gpt-4o-mini
      api_key: os.environ/UPSTREAM_KEY
clients:
  - {key: client-a, tenant: team-a}
cache:
  exact: {max_entries: 7}
"""

ENV = {"UPSTREAM_KEY": "sk-upstream-secret", "CLIENT_B_KEY": "client-b", "ADMIN_KEY": "adm"}


def _minimal(**overrides: object) -> dict:
    data: dict = {
        "model_list": [{"model_name": "m", "litellm_params": {"model": "openai/gpt-4o-mini"}}],
        "clients": [{"key": "k", "tenant": "t"}],
    }
    data.update(overrides)
    return data


def test_toml_file_loads_every_section(tmp_path: Path) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(TOML)
    config = load_config(path)
    assert config.model_list[0].litellm_params.model == "openai/gpt-4o-mini"
    assert config.cache.semantic.threshold == 0.9
    assert config.cache.store.backend == "none"
    assert config.server.admin_key == "os.environ/ADMIN_KEY"
    assert [c.tenant for c in config.clients] == ["team-a", "team-b"]


def test_yaml_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "proxy.yaml"
    path.write_text(YAML)
    config = load_config(path)
    assert config.cache.exact.max_entries == 7
    assert config.model_list[0].model_name == "fast"


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("p.toml", "model_list = [", "invalid TOML"),
        ("p.yaml", "a: [", "invalid YAML"),
        ("p.json", "{}", "expected a .toml"),
        ("p.yaml", "- 1\n- 2\n", "mapping at the top level"),
    ],
)
def test_unreadable_files_raise_config_error(
    tmp_path: Path, name: str, text: str, needle: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=needle):
        load_config(path)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (_minimal(model_list=[]), "model_list"),
        (_minimal(clients=[]), "clients"),
        (_minimal(cache={"semantic": {"threshold": 3}}), "cache.semantic.threshold"),
        (_minimal(cache={"semantic": {"treshold": 0.9}}), "cache.semantic.treshold"),
        (_minimal(cache={"exakt": {}}), "cache.exakt"),
        (_minimal(surprise=1), "surprise"),
        (
            _minimal(
                model_list=[
                    {"model_name": "m", "litellm_params": {"model": "x", "api_key": "sk-literal"}}
                ]
            ),
            "model_list.0.litellm_params.api_key",
        ),
        (_minimal(server={"admin_key": "literal"}), "server.admin_key"),
        (
            _minimal(
                model_list=[
                    {"model_name": "m", "litellm_params": {"model": "a"}},
                    {"model_name": "m", "litellm_params": {"model": "b"}},
                ]
            ),
            "duplicate model_name",
        ),
        (
            _minimal(clients=[{"key": "k", "tenant": "a"}, {"key": "k", "tenant": "b"}]),
            "listed twice",
        ),
    ],
)
def test_validation_errors_name_the_field(data: dict, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse_config(data)


def test_literal_secret_never_echoed_in_validation_error() -> None:
    bad = _minimal(
        model_list=[{"model_name": "m", "litellm_params": {"model": "x", "api_key": "sk-leak"}}]
    )
    with pytest.raises(ConfigError) as caught:
        parse_config(bad)
    assert "sk-leak" not in str(caught.value)


def test_resolve_secret_reads_environment_and_names_missing_variable() -> None:
    assert resolve_secret("os.environ/X", field="f", environ={"X": "v"}).get_secret_value() == "v"
    assert resolve_secret("literal", field="f", environ={}).get_secret_value() == "literal"
    with pytest.raises(ConfigError, match=r"f: environment variable 'X' is not set"):
        resolve_secret("os.environ/X", field="f", environ={})


def test_upstream_table_resolves_keys_and_redacts_them(tmp_path: Path) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(TOML)
    table = UpstreamTable.from_config(load_config(path), environ=ENV)
    upstream = table.get("fast")
    assert upstream is not None
    assert upstream.call_params() == {
        "model": "openai/gpt-4o-mini",
        "api_base": "http://127.0.0.1:9/v1",
        "api_key": "sk-upstream-secret",
    }
    assert "sk-upstream-secret" not in repr(upstream)
    assert table.names() == ["fast"]
    assert table.provider_model("fast") == "openai/gpt-4o-mini"
    assert table.provider_model("other") == "other"
    assert table.redact("bad key sk-upstream-secret!") == "bad key [redacted]!"
    with pytest.raises(ConfigError, match="UPSTREAM_KEY"):
        UpstreamTable.from_config(load_config(path), environ={})


def test_key_ring_maps_keys_to_tenants_and_separates_admin(tmp_path: Path) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(TOML)
    ring = KeyRing.from_config(load_config(path), environ=ENV)
    assert ring.tenant_for("client-a") == "team-a"
    assert ring.tenant_for("client-b") == "team-b"
    assert ring.tenant_for("nope") is None
    assert ring.tenant_for("adm") is None
    assert ring.tenant_for(None) is None
    assert ring.admin_enabled
    assert ring.is_admin("adm")
    assert not ring.is_admin("client-a")
    assert not ring.is_admin(None)


def test_key_ring_without_admin_key_refuses_admin() -> None:
    ring = KeyRing({"k": "t"})
    assert not ring.admin_enabled
    assert not ring.is_admin("k")


def test_key_ring_rejects_duplicate_keys_after_resolution() -> None:
    config = parse_config(
        _minimal(clients=[{"key": "os.environ/A", "tenant": "a"}, {"key": "same", "tenant": "b"}])
    )
    with pytest.raises(ConfigError, match=r"clients\[1\].key"):
        KeyRing.from_config(config, environ={"A": "same"})


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("BEARER  abc ", "abc"),
        ("Basic abc", None),
        ("Bearer ", None),
        ("Bearer", None),
        ("", None),
    ],
)
def test_bearer_token(header: str, token: str | None) -> None:
    request = Request({"type": "http", "headers": [(b"authorization", header.encode())]})
    assert asyncio.run(bearer(request)) == token


def test_module_docstring_example_is_a_valid_config() -> None:
    import textwrap

    import semcache.server.config as module

    doc = module.__doc__ or ""
    example = doc.split("::\n", 1)[1].split("\n\nSecrets", 1)[0]
    config = parse_config(tomllib.loads(textwrap.dedent(example)))
    assert config.model_list[0].litellm_params.api_key == "os.environ/OPENAI_API_KEY"
    assert config.cache.semantic.threshold == 0.93
    assert config.server.keep_alive_s == 75


def test_public_names_of_the_server_package() -> None:
    import semcache.server

    assert sorted(semcache.server.__all__) == [
        "ProxyConfig",
        "create_app",
        "load_config",
        "parse_config",
        "serve_main",
    ]
    for name in semcache.server.__all__:
        assert getattr(semcache.server, name) is not None


def test_serve_help_and_a_bad_config_do_not_wait_for_litellm(tmp_path: Path) -> None:
    """The package loads its names lazily: importing LiteLLM takes ~5 s of a 7 s `--help`."""
    import subprocess
    import sys

    bad = tmp_path / "bad.toml"
    bad.write_text("model_list = 3\n", encoding="utf-8")
    code = (
        "import sys\n"
        "from semcache.server.cli import serve_main\n"
        "try:\n"
        "    status = serve_main(sys.argv[1:])\n"
        "except SystemExit as exc:\n"
        "    status = exc.code\n"
        "heavy = ('litellm', 'fastapi', 'uvicorn', 'semcache.server.app')\n"
        "print('status', status, 'loaded:' + ','.join(m for m in heavy if m in sys.modules))\n"
    )
    for argv, status in ((["--help"], 0), (["--config", str(bad)], 2)):
        run = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True
        )
        assert run.stdout.strip().splitlines()[-1] == f"status {status} loaded:"


# -- the [cache] table layers over SEMCACHE_* variables (issue 17) ---------------------------


@pytest.fixture
def no_semcache_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    import os

    for name in list(os.environ):
        if name.upper().startswith("SEMCACHE_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no .env
    return monkeypatch


def test_cache_table_wins_over_environment_which_fills_the_rest(no_semcache_env) -> None:
    no_semcache_env.setenv("SEMCACHE_SEMANTIC__THRESHOLD", "0.5")
    no_semcache_env.setenv("SEMCACHE_SEMANTIC__EMBEDDER", "use-multilingual")
    config = parse_config(_minimal(cache={"semantic": {"threshold": 0.9}}))
    assert config.cache.semantic.threshold == 0.9
    assert config.cache.semantic.embedder == "use-multilingual"
    assert parse_config(_minimal()).cache.semantic.threshold == 0.5


def test_bad_environment_value_is_a_config_error_naming_the_variable(no_semcache_env) -> None:
    no_semcache_env.setenv("SEMCACHE_STORE__BACKEND", "valkey")
    with pytest.raises(ConfigError) as caught:
        parse_config(_minimal())
    assert str(caught.value) == (
        "invalid proxy config:\n"
        "  environment variable `SEMCACHE_STORE__BACKEND`='valkey': "
        "expected 'edge', 'qdrant', 'redis' or 'none'"
    )


def test_unknown_cache_key_names_the_nearest_with_the_file_path(no_semcache_env) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(_minimal(cache={"store_path": "/data"}))
    assert "unknown setting `cache.store_path`; did you mean `cache.store.path`?" in str(
        caught.value
    )


def test_variables_the_config_references_are_not_unknown_settings(no_semcache_env) -> None:
    import warnings

    from semcache.errors import UnknownSettingWarning

    no_semcache_env.setenv("SEMCACHE_ADMIN_KEY", "adm")
    no_semcache_env.setenv("SEMCACHE_TEAM_KEY", "k")
    no_semcache_env.setenv("SEMCACHE_STOER__PATH", "/x")
    data = _minimal(
        server={"admin_key": "os.environ/SEMCACHE_ADMIN_KEY"},
        clients=[{"key": "os.environ/SEMCACHE_TEAM_KEY", "tenant": "t"}],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_config(data)
    assert [str(w.message) for w in caught if w.category is UnknownSettingWarning] == [
        "unknown environment variable `SEMCACHE_STOER__PATH`; did you mean `SEMCACHE_STORE__PATH`?"
    ]
