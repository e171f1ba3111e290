"""Shared checks for the injection tests: a text scanned in both places a text reaches the scan
(an instruction, ``data=False``, and a tool's result, ``data=True``) with every rule but the
learned scorer's."""

from __future__ import annotations

from hermes_core.injection import INJECTION_CATEGORIES, scan_for_injection

RULES = tuple(c for c in INJECTION_CATEGORIES if c != "learned")


def assert_passes_in_both(text: str) -> None:
    """Nothing is found in ``text``, as an instruction or as data."""
    assert scan_for_injection(text, RULES) is None
    assert scan_for_injection(text, RULES, data=True) is None


def assert_blocked_in_both(text: str, category: str = "secret-exfiltration") -> None:
    """``text`` is found as ``category`` as an instruction, and found as data."""
    found = scan_for_injection(text, RULES)
    assert found is not None and found.category == category
    assert scan_for_injection(text, RULES, data=True) is not None
