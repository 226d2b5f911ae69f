"""Keep API keys out of logs, caches and result files."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit, urlunsplit

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|APIKEY)", re.I)
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})")


def redact(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """Mask the values of secret-looking environment variables and key-shaped strings in `text`."""
    secrets = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and v and len(v) >= 6]
    secrets.extend(s for s in extra_secrets if s and len(s) >= 4)
    for value in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(value, "***")
    return _KEY_SHAPES.sub("***", text)


def display_url(url: str) -> str:
    """A URL as messages, rate-limit keys and run files name it: without user:password."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
