"""Settings refuse what they do not know (issue 17): unknown arguments, nested keys,
environment variables and .env keys are named with the nearest valid name; bad values name
their source, the value and what was expected."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, SecretStr

from semcache import CacheSettings, ConfigError
from semcache.config.names import (
    is_settings_variable,
    nearest_path,
    setting_fields,
    variable_name,
)
from semcache.config.settings import OTHER_VARIABLES
from semcache.errors import SettingsError, UnknownSettingWarning

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No SEMCACHE_* variable of the caller's shell and no .env leak into these tests."""
    import os

    for name in list(os.environ):
        if name.upper().startswith("SEMCACHE_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def _construct(**kwargs) -> tuple[CacheSettings, list[str]]:
    """CacheSettings(**kwargs) and the UnknownSettingWarning messages it emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        settings = CacheSettings(**kwargs)
    return settings, [str(w.message) for w in caught if w.category is UnknownSettingWarning]


# -- the four examples of the issue ---------------------------------------------------------


def test_unknown_argument_names_the_nearest_setting():
    with pytest.raises(SettingsError) as info:
        CacheSettings(store_path="/data/cache")
    assert str(info.value) == "unknown setting `store_path`; did you mean `store.path`?"
    (problem,) = info.value.problems
    assert (problem.origin, problem.kind, problem.suggestion) == (
        "argument",
        "unknown",
        "store.path",
    )
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)


def test_unknown_nested_key_names_the_nearest_setting():
    with pytest.raises(SettingsError) as info:
        CacheSettings(semantic={"threshhold": 0.5})
    assert str(info.value) == (
        "unknown setting `semantic.threshhold`; did you mean `semantic.threshold`?"
    )


def test_setting_at_the_wrong_level_is_found_by_its_name():
    with pytest.raises(SettingsError) as info:
        CacheSettings(threshold=0.9)
    assert str(info.value) == "unknown setting `threshold`; did you mean `semantic.threshold`?"


def test_misspelled_environment_variable_warns_and_is_not_applied(monkeypatch):
    monkeypatch.setenv("SEMCACHE_SEMANTIC__THRESHOLDD", "0.5")
    settings, warned = _construct()
    assert warned == [
        "unknown environment variable `SEMCACHE_SEMANTIC__THRESHOLDD`; "
        "did you mean `SEMCACHE_SEMANTIC__THRESHOLD`?"
    ]
    assert settings.semantic.threshold == 0.95


@pytest.mark.parametrize("how", ["environment", "argument"])
def test_strict_makes_unknown_variables_errors(monkeypatch, how):
    monkeypatch.setenv("SEMCACHE_SEMANTIC__THRESHOLDD", "0.5")
    kwargs = {}
    if how == "environment":
        monkeypatch.setenv("SEMCACHE_STRICT", "1")
    else:
        kwargs["strict"] = True
    with pytest.raises(SettingsError, match=r"SEMCACHE_SEMANTIC__THRESHOLDD`; did you mean"):
        CacheSettings(**kwargs)


# -- every model, every source ---------------------------------------------------------------


def _sections() -> list[type[BaseModel]]:
    sections = []
    for field in CacheSettings.model_fields.values():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            sections.append(annotation)
    return sections


def test_there_are_sections_to_check():
    assert len(_sections()) == 14  # policy, exact, coalesce, semantic, store, privacy,
    # compression, prompt_cache, admission, health, redis, verify, tuning, telemetry


@pytest.mark.parametrize("section", _sections(), ids=lambda s: s.__name__)
def test_every_section_refuses_unknown_fields_directly(section):
    with pytest.raises(SettingsError, match=r"unknown setting `not_a_setting`"):
        section(not_a_setting=1)


@pytest.mark.parametrize("section", _sections(), ids=lambda s: s.__name__)
def test_every_section_refuses_unknown_nested_keys(section):
    name = next(n for n, f in CacheSettings.model_fields.items() if f.annotation is section)
    with pytest.raises(SettingsError) as info:
        CacheSettings(**{name: {"not_a_setting": 1}})
    assert info.value.problems[0].name == f"{name}.not_a_setting"


def test_every_problem_is_listed_at_once(monkeypatch):
    monkeypatch.setenv("SEMCACHE_STORE__BACKEND", "valkey")
    with pytest.raises(SettingsError) as info:
        CacheSettings(store_path="x", semantic={"threshold": 3})
    lines = str(info.value).splitlines()
    assert len(lines) == len(info.value.problems) == 3
    assert any("`store_path`" in line for line in lines)
    assert "setting `semantic.threshold`=3: expected a number <= 1" in lines
    assert any(line.startswith("environment variable `SEMCACHE_STORE__BACKEND`") for line in lines)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("SEMCACHE_SEMANTIC__THRESHOLD", "1.5", "expected a number <= 1"),
        ("SEMCACHE_SEMANTIC__THRESHOLD", "abc", "expected a valid number"),
        ("SEMCACHE_STORE__BACKEND", "valkey", "expected 'edge', 'qdrant', 'redis' or 'none'"),
        ("SEMCACHE_EXACT__MAX_ENTRIES", "-1", "expected a number >= 0"),
        ("SEMCACHE_COALESCE__ENABLED", "maybe", "expected a valid boolean"),
        ("SEMCACHE_SEMANTIC__NAMESPACE_THRESHOLDS", "faq=0.9", "expected a JSON object"),
        ("SEMCACHE_SEMANTIC__NAMESPACE_THRESHOLDS__FAQ", "high", "expected a valid number"),
        ("SEMCACHE_SEMANTIC", "{not json", "expected a JSON object"),
    ],
)
def test_bad_environment_value_is_one_line_naming_variable_value_and_expectation(
    monkeypatch, name, value, expected
):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        CacheSettings()
    assert str(info.value) == f"environment variable `{name}`={value!r}: {expected}"
    assert info.value.problems[0].origin == "environment"
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_json_section_variable_names_the_inner_setting(monkeypatch):
    monkeypatch.setenv("SEMCACHE_SEMANTIC", '{"threshhold": 0.5}')
    with pytest.raises(SettingsError) as info:
        CacheSettings()
    assert str(info.value) == (
        "environment variable `SEMCACHE_SEMANTIC` sets unknown setting `semantic.threshhold`; "
        "did you mean `semantic.threshold`?"
    )
    monkeypatch.setenv("SEMCACHE_SEMANTIC", '{"threshold": 2}')
    with pytest.raises(SettingsError, match=r"`SEMCACHE_SEMANTIC`='\{\"threshold\": 2\}' "):
        CacheSettings()


def test_a_bad_value_is_named_where_it_came_from(monkeypatch):
    """Arguments win over variables, which win over .env; the error names the winner."""
    monkeypatch.setenv("SEMCACHE_SEMANTIC__THRESHOLD", "abc")
    with pytest.raises(SettingsError) as info:
        CacheSettings(semantic={"embedder": "minilm"})  # same section, another field
    assert info.value.problems[0].name == "SEMCACHE_SEMANTIC__THRESHOLD"
    with pytest.raises(SettingsError) as info:
        CacheSettings(semantic={"threshold": "xyz"})
    assert str(info.value) == "setting `semantic.threshold`='xyz': expected a valid number"


def test_secret_values_are_never_repeated():
    with pytest.raises(SettingsError) as info:
        CacheSettings(store={"api_key": 987654321})
    assert "987654321" not in str(info.value)
    assert "store.api_key" in str(info.value)


def test_dotenv_keys_are_checked_like_variables(tmp_path):
    (tmp_path / ".env").write_text(
        "OTHER_TOOL_TOKEN=x\nSEMCACHE_STORE__PAHT=/data\nSEMCACHE_SEMANTIC__THRESHOLD=0.9\n"
    )
    settings, warned = _construct()
    assert settings.semantic.threshold == 0.9
    assert warned == [
        "unknown key `SEMCACHE_STORE__PAHT` in .env file '.env'; "
        "did you mean `SEMCACHE_STORE__PATH`?"
    ]
    (tmp_path / ".env").write_text("SEMCACHE_SEMANTIC__THRESHOLD=7\n")
    with pytest.raises(SettingsError) as info:
        CacheSettings()
    assert str(info.value) == (
        "key `SEMCACHE_SEMANTIC__THRESHOLD`='7' in .env file '.env': expected a number <= 1"
    )


def test_explicit_env_file_is_the_one_checked(tmp_path):
    env = tmp_path / "deploy.env"
    env.write_text("SEMCACHE_STRICT=true\nSEMCACHE_EXAKT__MAX_ENTRIES=5\n")
    with pytest.raises(SettingsError, match=r"`SEMCACHE_EXAKT__MAX_ENTRIES` in .env file"):
        CacheSettings(_env_file=env)
    assert CacheSettings(_env_file=None).strict is False


def test_other_tools_variables_are_not_settings_problems(monkeypatch):
    monkeypatch.setenv("OTHER_TOOL_THRESHOLD", "7")
    for name in OTHER_VARIABLES:
        monkeypatch.setenv(name, "/somewhere")
    monkeypatch.setenv("SEMCACHE_ADMIN_KEY", "secret")  # documented, in OTHER_VARIABLES
    monkeypatch.setenv("SEMCACHE_PROXY_SECRET", "secret")
    _, warned = _construct(_other_variables={"SEMCACHE_PROXY_SECRET"})
    assert warned == []
    _, warned = _construct()
    assert len(warned) == 1 and warned[0].startswith(
        "unknown environment variable `SEMCACHE_PROXY_SECRET`; "
    )


def test_variables_are_case_insensitive_like_pydantic_settings(monkeypatch):
    monkeypatch.setenv("semcache_semantic__threshold", "0.5")
    settings, warned = _construct()
    assert (settings.semantic.threshold, warned) == (0.5, [])


def test_mapping_settings_take_keys_from_variables(monkeypatch):
    monkeypatch.setenv("SEMCACHE_SEMANTIC__NAMESPACE_THRESHOLDS__FAQ", "0.9")
    settings, warned = _construct()
    assert (settings.semantic.namespace_thresholds, warned) == ({"faq": 0.9}, [])


# -- names come from the model, never from a list -----------------------------------------


def test_every_declared_setting_is_read_from_its_variable(monkeypatch):
    """Each leaf's variable is known and actually read (a nonsense value either lands in a
    string field or fails naming that variable)."""
    for path, _ in setting_fields(CacheSettings):
        name = variable_name(CacheSettings, path)
        assert is_settings_variable(CacheSettings, name), name
        monkeypatch.setenv(name, "%not-a-valid-value%")
        try:
            settings, warned = _construct()
        except SettingsError as exc:
            assert [p.name for p in exc.problems] == [name]
        else:
            value = settings
            for part in path:
                value = getattr(value, part)
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            assert value == "%not-a-valid-value%", name
            assert warned == []
        monkeypatch.delenv(name)


def test_a_new_field_is_known_without_editing_any_list(monkeypatch):
    class ExtraSection(BaseModel):
        level: int = 1

    class Extended(CacheSettings):
        extra: ExtraSection = Field(default_factory=ExtraSection)

    monkeypatch.setenv("SEMCACHE_EXTRA__LEVEL", "3")
    monkeypatch.setenv("SEMCACHE_EXTRA__LEVLE", "4")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        settings = Extended()
    assert settings.extra.level == 3
    assert [str(w.message) for w in caught] == [
        "unknown environment variable `SEMCACHE_EXTRA__LEVLE`; "
        "did you mean `SEMCACHE_EXTRA__LEVEL`?"
    ]


@pytest.mark.parametrize(
    ("path", "nearest"),
    [
        (("store_path",), ("store", "path")),
        (("threshold",), ("semantic", "threshold")),
        (("semantic", "treshold"), ("semantic", "threshold")),
        (("semantic", "namespace_threshold"), ("semantic", "namespace_thresholds")),
        (("exakt",), ("exact",)),
        (("policy", "ttl"), ("policy", "default_ttl_s")),
        (("zzqqxx",), None),
    ],
)
def test_nearest_setting(path, nearest):
    assert nearest_path(CacheSettings, path) == nearest


def test_semcache_code_reads_no_undeclared_variable():
    """Every SEMCACHE_* variable the package reads directly is a setting or declared in
    OTHER_VARIABLES (which the unknown-variable check skips)."""
    pattern = re.compile(r"""(?:environ(?:\.get)?\(?\[?|getenv\()\s*["'](SEMCACHE_\w+)["']""")
    read = set()
    for folder in ("semcache", "embedders", "stores", "eval"):
        for path in (ROOT / folder).rglob("*.py"):
            read |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert "SEMCACHE_ONNX_CACHE" in read  # the pattern finds what it should
    for name in read:
        assert is_settings_variable(CacheSettings, name) or name in OTHER_VARIABLES, name


# -- the hand-written table of docs/deployment.md round-trips ----------------------------------


def _readme_settings() -> list[str]:
    text = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    section = text.split("## Settings you will touch first", 1)[1].split("\n## ", 1)[0]
    names: list[str] = []
    for line in section.splitlines():
        if not line.startswith("| `SEMCACHE_"):
            continue
        for token in re.findall(r"`([^`]+)`", line.split("|")[1]):
            if token.startswith("__"):  # `SEMCACHE_EXACT__MAX_ENTRIES` / `__MAX_BYTES`
                token = names[-1].rsplit("__", 1)[0] + token
            names.append(token)
    return names


def test_readme_table_is_parsed():
    names = _readme_settings()
    assert "SEMCACHE_SEMANTIC__THRESHOLD" in names and "SEMCACHE_EXACT__MAX_BYTES" in names
    assert len(names) >= 14


@pytest.mark.parametrize("name", _readme_settings())
def test_every_readme_setting_is_accepted_under_its_readme_name(monkeypatch, name):
    path = tuple(name.removeprefix("SEMCACHE_").lower().split("__"))
    fields = dict(setting_fields(CacheSettings))
    assert path in fields, f"docs/deployment.md documents {name}, which is no setting"
    default = fields[path].get_default(call_default_factory=True)
    if default is None:
        value = "1"  # the documented optional settings are numbers
    elif isinstance(default, str):
        value = default
    else:
        value = json.dumps(default)
    monkeypatch.setenv(name, value)
    settings, warned = _construct()
    assert warned == []
    got = settings
    for part in path:
        got = getattr(got, part)
    assert got == (value if isinstance(default, str) else json.loads(value))


def test_settings_error_survives_pickling():
    import pickle

    with pytest.raises(SettingsError) as info:
        CacheSettings(store_path="/data")
    copy = pickle.loads(pickle.dumps(info.value))
    assert (str(copy), copy.problems) == (str(info.value), info.value.problems)
