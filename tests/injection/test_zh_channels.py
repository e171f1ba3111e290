"""The one list of channels the Chinese send rules read."""

from __future__ import annotations

from hermes_core.injection.zh_channels import ORDINARY, PRIVATE


def test_each_channel_is_listed_once_in_one_list() -> None:
    listed = (*ORDINARY, *PRIVATE)
    assert len(set(listed)) == len(listed)


def test_latin_names_are_lower_case_for_the_case_blind_rules() -> None:
    assert all(name == name.lower() for name in (*ORDINARY, *PRIVATE))
