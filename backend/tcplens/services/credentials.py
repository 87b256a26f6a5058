"""Secrets: password hashing and the random tokens of sessions, API tokens and share links.

Passwords get argon2id (RFC 9106; argon2-cffi's defaults follow its second recommended option)
because people choose guessable ones. Tokens are 256 random bits from ``secrets``; they are stored
as SHA-256 hex digests, which is enough for secrets with that much entropy (OWASP "Password
Storage" makes the same distinction) and lets the database find a token by an indexed lookup.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

API_TOKEN_PREFIX = "tcpl_"
SESSION_TOKEN_BYTES = 32
SHARE_TOKEN_BYTES = 24  # 192 bits: the URL stays short and far above the 128 bits required

_hasher = PasswordHasher()
# A real hash to verify against when the e-mail is unknown, so a login for a missing account
# costs the same time as one with a wrong password (no account enumeration by timing).
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_api_token() -> str:
    """``tcpl_`` + 43 URL-safe characters: the prefix lets secret scanners recognise a leak."""
    return API_TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_session_token() -> str:
    return secrets.token_urlsafe(SESSION_TOKEN_BYTES)


def new_share_token() -> str:
    return secrets.token_urlsafe(SHARE_TOKEN_BYTES)


def csrf_token_for(session_token: str, secret_key: str) -> str:
    """The CSRF token bound to one session (the "signed double-submit cookie" of OWASP's CSRF
    cheat sheet): a cross-site page can neither read the cookie nor compute this value."""
    return hmac.new(
        secret_key.encode("utf-8"), b"csrf:" + session_token.encode("utf-8"), hashlib.sha256
    ).hexdigest()


def same_secret(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
