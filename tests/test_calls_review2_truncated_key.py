"""An error message cut at its length limit must not keep the first part of an echoed key.

``error_from_status`` cut the provider's message to 500 characters and redacted afterwards: a key
straddling the cut was no longer the exact secret nor long enough for the key patterns, so its
first characters reached the exception text, the REPL and logs.
"""

from __future__ import annotations

import httpx
import pytest

from hermes_core.errors import AuthenticationFailed, error_from_status
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider
from hermes_core.redact import redact
from hermes_core.testing import OPENAI_URL
from hermes_core.types import Credential, Message, Prompt

# no sk- prefix: a custom gateway key only the exact-secret net can catch
SECRET = "gw-Zq8RtY2pLm4nB6vC9xK1jH3dF5sA7"


@pytest.mark.parametrize("cut", [4, 8, 20, len(SECRET) - 1])
def test_key_straddling_the_cut_is_not_partially_shown(cut: int) -> None:
    message = "x" * (500 - cut) + SECRET + " is not valid"
    err = error_from_status(401, {}, {"error": {"message": message}}, provider="gateway",
                            redact=lambda s: redact(s, [SECRET]))
    assert SECRET[:cut] not in str(err)
    assert SECRET[:cut] not in str(err.body)


def test_http_level_long_401_body(respx_mock) -> None:
    message = "y" * 490 + SECRET
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        401, json={"error": {"message": message, "type": "invalid_request_error"}}))
    with pytest.raises(AuthenticationFailed) as info:
        OpenAIProvider().complete(Prompt(system="s", messages=(Message("user", "hi"),)),
                                  "gpt-4o", Credential("openai", SECRET), CallOptions())
    assert SECRET[:10] not in str(info.value)
