"""A Redis URL as logs and errors may show it: the password never in it."""

from __future__ import annotations

import urllib.parse


def redact_url(url: str) -> str:
    """``redis://user:secret@host:6379/0`` -> ``redis://***@host:6379/0``: safe for logs. A
    ``password`` in the query string (redis-py reads it from there too) shows as ``***``. A URL
    whose scheme is missing or mistyped (``default:secret@host:6379``) has no user info by
    urlsplit's reading: all before its last ``@`` is hidden, as it would be the user info."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return "<invalid redis url>"
    if not parts.netloc and "@" in url:
        rest = url.rsplit("@", 1)[1]
        return "***@" + (redact_url("x://" + rest).removeprefix("x://") if rest else "")
    query = parts.query
    if query:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        if any(k.lower() == "password" for k, _ in pairs):
            query = urllib.parse.urlencode(
                [(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*")
    if parts.username is None and parts.password is None:
        return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
    host = parts.hostname or ""
    if port is not None:
        host = f"{host}:{port}"
    return urllib.parse.urlunsplit((parts.scheme, "***@" + host, parts.path, query, ""))
