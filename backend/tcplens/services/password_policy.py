"""The password policy, after OWASP ASVS 5.0 V6.2:

* at least MIN_LENGTH characters (6.2.1: 8 at the least, 15 recommended), counted as Unicode
  code points, taken as typed: no truncation, no case folding (6.2.8);
* up to MAX_LENGTH characters (6.2.9: at least 64 must be allowed; the bound keeps one request
  from making argon2 hash megabytes);
* no composition rules (6.2.5): no "one digit, one symbol";
* not guessable (6.2.4, 6.2.11, 6.2.12): zxcvbn estimates the guesses an attacker needs from its
  own offline lists (30,000 passwords from breaches, English words, names, keyboard patterns,
  dates, repeats and sequences), with the user's e-mail address and the product's name as
  context-specific words; fewer than 10^8 guesses (its score below 3) is refused, with zxcvbn's
  own advice. No network call is made.
"""

from __future__ import annotations

from zxcvbn import zxcvbn

from tcplens.errors import InvalidInput

MIN_LENGTH = 12
MAX_LENGTH = 1024
# zxcvbn's matching grows faster than linearly with the length; it refuses more than 72
# characters by default. A password is judged by its first 72: a longer one that starts with
# a guessable 72 is as weak as they are against an attacker who tries those.
_ESTIMATED_LENGTH = 72
# zxcvbn's score 3: "safely unguessable", at least 10^8 guesses.
MIN_SCORE = 3


class WeakPassword(InvalidInput):
    code = "weak_password"


def check_new_password(password: str, *, email: str) -> None:
    """Raise WeakPassword unless ``password`` may be chosen by the user with ``email``."""
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        raise WeakPassword(
            f"a password needs {MIN_LENGTH} to {MAX_LENGTH} characters", field="password"
        )
    local, _, domain = email.partition("@")
    estimate = zxcvbn(password[:_ESTIMATED_LENGTH], user_inputs=[email, local, domain, "tcplens"])
    if estimate["score"] < MIN_SCORE:
        feedback = estimate["feedback"]
        advice = " ".join([feedback["warning"], *feedback["suggestions"]]).strip()
        raise WeakPassword(
            "this password is too easy to guess" + (f": {advice}" if advice else ""),
            field="password",
        )
