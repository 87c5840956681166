"""``docs/configuration.md`` is what the generator makes from the settings models (CI runs this)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from unittest import mock

from pydantic import BaseModel, Field

from semcache.config.names import setting_fields
from semcache.config.settings import CacheSettings

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "configuration.md"
_SPEC = importlib.util.spec_from_file_location(
    "build_configuration_reference", ROOT / "scripts" / "build_configuration_reference.py"
)
assert _SPEC is not None and _SPEC.loader is not None
reference = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(reference)


def test_committed_page_is_what_the_generator_makes():
    assert PAGE.read_text(encoding="utf-8") == reference.render(), (
        "docs/configuration.md is stale: run "
        "`python scripts/build_configuration_reference.py > docs/configuration.md`"
    )


def test_every_setting_has_a_row_with_its_variable_and_description():
    page = PAGE.read_text(encoding="utf-8")
    for path, field in setting_fields(CacheSettings):
        variable = "SEMCACHE_" + "__".join(path).upper()
        row = next(line for line in page.splitlines() if line.startswith(f"| `{'.'.join(path)}` |"))
        assert f"`{variable}`" in row
        assert field.description and reference.cell(field.description) in row


def test_the_page_is_the_same_on_every_machine():
    with mock.patch.dict(os.environ, {"XDG_CACHE_HOME": "/elsewhere/cache"}):
        assert reference.render() == PAGE.read_text(encoding="utf-8")


def test_a_changed_field_changes_the_page():
    class Section(BaseModel):
        limit_ms: float | None = Field(None, description="Milliseconds | at most.")

    rows = reference.table(("demo",), list(Section.model_fields.items()), "SEMCACHE_")
    assert rows[2] == (
        "| `demo.limit_ms` | float \\| None | `null` | `SEMCACHE_DEMO__LIMIT_MS` "
        "| Milliseconds \\| at most. |"
    )
