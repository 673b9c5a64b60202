"""Tests that need something outside Python (Node, the npm packages, a PostgreSQL) and why they may not run.

Where the prerequisite is missing, :func:`skip_or_fail` skips the test saying why; under CI (``CI`` set, as every
CI service sets it) it fails the test instead, so a green CI run always ran it.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

UNDER_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_or_fail(reason: str) -> NoReturn:
    """Skip the calling test (``reason`` says what is missing and how to get it); under CI, fail it."""
    if UNDER_CI:
        pytest.fail(f"{reason} (CI is set: this test must run under CI, not skip)", pytrace=False)
    pytest.skip(reason)
