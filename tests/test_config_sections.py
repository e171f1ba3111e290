"""The sections' types, read where every caller reads them: ``hermes_core.config``."""

from __future__ import annotations

import inspect

import pytest

from hermes_core import config, config_sections
from hermes_core.config_sections import SectionModel

_SECTIONS = [v for v in vars(config_sections).values()
             if inspect.isclass(v) and issubclass(v, SectionModel) and v is not SectionModel]


def test_every_name_of_the_sections_is_the_same_object_from_hermes_core_config() -> None:
    names = [n for n, v in vars(config_sections).items() if not n.startswith("_") and (
        n in ("KNOWN_PROVIDER_TYPES", "MAX_CONTEXT_WINDOW", "ModelName", "Window")
        or (inspect.isclass(v) and v.__module__ == config_sections.__name__))]
    assert {"LLMSettings", "SectionModel", "KNOWN_PROVIDER_TYPES"} <= set(names)
    assert [n for n in names if getattr(config, n, None) is not getattr(config_sections, n)] == []
    assert set(names) <= set(config.__all__)


@pytest.mark.parametrize("section", [s for s in _SECTIONS
                                     if not any(f.is_required() for f in s.model_fields.values())],
                         ids=lambda s: s.__name__)
def test_a_section_refuses_an_unknown_key_and_never_changes(section: type[SectionModel]) -> None:
    with pytest.raises(ValueError, match="typo_key"):
        section.model_validate({"typo_key": 1})
    with pytest.raises(ValueError, match="frozen"):
        setattr(section(), next(iter(section.model_fields)), None)
