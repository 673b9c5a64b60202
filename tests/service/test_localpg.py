"""The throwaway local PostgreSQL's errors say what to do."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentmsg.service.localpg import LocalPostgres, PostgresUnavailableError

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root runs PostgreSQL as an unprivileged account"
)


def test_binaries_under_a_directory_the_account_cannot_enter_are_named(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    tool = closed / "initdb"
    shutil.copy("/bin/true", tool)
    server = LocalPostgres(tmp_path / "data")
    server.bin = closed
    with pytest.raises(PostgresUnavailableError) as info:
        server.init()
    message = str(info.value)
    assert message.startswith("initdb failed: [Errno 13] Permission denied")
    assert f"every directory above {tool} must be enterable by it" in message
