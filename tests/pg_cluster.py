"""A throw-away PostgreSQL cluster for tests (docs/scale-out.md, "Running the
PostgreSQL tests").

`initdb` into a fresh folder under the system temp dir, owned by the `postgres`
user when the tests run as root (PostgreSQL refuses to run as root), listening on
a free port of 127.0.0.1 with its unix socket inside that folder, trust
authentication (nothing but this machine reaches it). A watchdog process stops
and removes the cluster when the test process is gone, so even a killed test run
leaves no server behind. The Rust tests have the same helper in
rust/memcore/tests/pg_support/.

`start_cluster(bindir, tls=True)` starts one that takes TCP connections over TLS
only (`ssl=on`, `hostssl` in pg_hba.conf; its socket stays open to the tests), with
a certificate for `localhost` signed by a CA of its own (`ca`) and another CA that
signed nothing of it (`other_ca`), made with the `openssl` program.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

#: The server's superuser, which owns the data folder.
SUPERUSER = "postgres"
#: How long `pg_ctl` waits for the server to start or stop, in seconds.
START_TIMEOUT = 60
_database_names = itertools.count(1)


class ClusterError(RuntimeError):
    """The cluster could not be started; the message carries PostgreSQL's log."""


def find_bindir() -> Path | None:
    """Where PostgreSQL's server programs are: `$MEMCORE_PG_BINDIR`, else the
    newest Debian `/usr/lib/postgresql/<version>/bin`, else the folder of `initdb`
    on PATH; None when there is none."""
    configured = os.environ.get("MEMCORE_PG_BINDIR")
    if configured:
        return Path(configured) if (Path(configured) / "initdb").exists() else None
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if debian:
        return debian[-1].parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_superuser(argv: list[str]) -> list[str]:
    """PostgreSQL's programs refuse root: run them as `postgres` when we are root."""
    return ["runuser", "-u", SUPERUSER, "--", *argv] if os.geteuid() == 0 else argv


@dataclass
class PgCluster:
    """A running throw-away cluster; `stop()` ends it and deletes its folder."""

    bindir: Path
    root: Path
    port: int
    #: With TLS: the PEM file of the CA that signed the server's certificate.
    ca: Path | None = None
    #: With TLS: a CA that signed nothing of this server's.
    other_ca: Path | None = None
    _watchdog: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_file(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str = "postgres", host: str = "127.0.0.1") -> str:
        """A connection URL for `database` over TCP as the superuser."""
        return f"postgresql://{SUPERUSER}@{host}:{self.port}/{database}"

    def create_database(self, template: str | None = None) -> str:
        """A new database (one per test keeps tests apart); returns its URL. Empty, or
        a copy of the database `template` (which nothing may be connected to): copying
        one whose schema is already made is cheaper than making it again per test."""
        name = f"test_{os.getpid()}_{next(_database_names)}"
        if template is None:
            self._run([str(self.bindir / "createdb"), *self._client_args(), name])
        else:
            self.psql("postgres", f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return self.url(name)

    def psql(self, database: str, sql: str) -> str:
        """Run `sql` with psql in `database`; returns its unaligned output."""
        return self._run(
            [str(self.bindir / "psql"), *self._client_args(), "-XAtq", "-d", database, "-c", sql]
        )

    def stop(self) -> None:
        """Stop the server and remove its folder. Immediate shutdown: a clean one first
        writes every dirty page of every test database to disk (a minute and more after a
        few hundred databases on a busy machine) for a folder deleted right after."""
        if self.data_dir.exists():
            stop = [str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "immediate"]
            stop += ["-w"]
            subprocess.run(
                _as_superuser([*stop, "stop"]),
                capture_output=True,
                timeout=START_TIMEOUT,
                check=False,
            )
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
        shutil.rmtree(self.root, ignore_errors=True)

    def _client_args(self) -> list[str]:
        return ["-h", str(self.root), "-p", str(self.port), "-U", SUPERUSER]

    def _run(self, argv: list[str]) -> str:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=START_TIMEOUT)
        if done.returncode != 0:
            raise ClusterError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
        return done.stdout


def start_cluster(bindir: Path, *, tls: bool = False) -> PgCluster:
    """initdb and start a cluster (with `tls`, one taking TCP over TLS only);
    retried on another port if the one picked was taken in between (other test
    runs share the machine)."""
    root = Path(tempfile.mkdtemp(prefix="memcore-pg-"))
    try:
        if os.geteuid() == 0:
            shutil.chown(root, user=SUPERUSER, group=SUPERUSER)
        cluster = PgCluster(bindir=bindir, root=root, port=0)
        initdb = [str(bindir / "initdb"), "-D", str(cluster.data_dir)]
        initdb += ["--auth=trust", f"--username={SUPERUSER}", "--encoding=UTF8", "--no-sync"]
        cluster._run(_as_superuser(initdb))
        cluster._watchdog = _start_watchdog(cluster)
        tls_options = _make_tls(cluster) if tls else ""
        last_error = ""
        for _ in range(3):
            cluster.port = _free_port()
            options = f"-c listen_addresses=127.0.0.1 -p {cluster.port} -k {root}{tls_options}"
            start = [str(bindir / "pg_ctl"), "-D", str(cluster.data_dir), "-l"]
            start += [str(cluster.log_file), "-o", options, "-w", "-t", str(START_TIMEOUT)]
            done = subprocess.run(
                _as_superuser([*start, "start"]),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT + 10,
            )
            if done.returncode == 0:
                return cluster
            last_error = cluster.log_file.read_text(errors="replace")[-2000:]
        raise ClusterError(f"PostgreSQL did not start; its log ends with:\n{last_error}")
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def _make_tls(cluster: PgCluster) -> str:
    """Certificates for `cluster` and a TLS-only pg_hba.conf; the server options."""
    root = cluster.root
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for name, subject in (("ca", "/CN=memcore test CA"), ("other-ca", "/CN=another CA")):
        key, cert = str(root / f"{name}.key"), str(root / f"{name}.pem")
        cluster._run(
            [
                "openssl",
                "req",
                "-x509",
                "-days",
                "2",
                "-subj",
                subject,
                *ec,
                "-keyout",
                key,
                "-out",
                cert,
            ]
        )
    csr, key = str(root / "server.csr"), str(root / "server.key")
    cluster._run(["openssl", "req", "-subj", "/CN=localhost", *ec, "-keyout", key, "-out", csr])
    (root / "server.ext").write_text(
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n"
    )
    signing = ["-CA", str(root / "ca.pem"), "-CAkey", str(root / "ca.key"), "-CAcreateserial"]
    ext, cert = str(root / "server.ext"), str(root / "server.pem")
    cluster._run(
        [
            "openssl",
            "x509",
            "-req",
            "-in",
            csr,
            *signing,
            "-days",
            "2",
            "-extfile",
            ext,
            "-out",
            cert,
        ]
    )
    (root / "server.key").chmod(0o600)
    if os.geteuid() == 0:
        for name in ("server.key", "server.pem"):
            shutil.chown(root / name, user=SUPERUSER)
    (cluster.data_dir / "pg_hba.conf").write_text(
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n"
    )
    cluster.ca, cluster.other_ca = root / "ca.pem", root / "other-ca.pem"
    return f" -c ssl=on -c ssl_cert_file={root}/server.pem -c ssl_key_file={root}/server.key"


def _start_watchdog(cluster: PgCluster) -> subprocess.Popen[bytes]:
    """A detached shell that stops the server and removes its folder once this
    process is gone, however it ended."""
    pg_ctl = _as_superuser(
        [str(cluster.bindir / "pg_ctl"), "-D", str(cluster.data_dir), "-m", "immediate", "stop"]
    )
    script = (
        f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
        f"{' '.join(pg_ctl)} >/dev/null 2>&1; rm -rf {cluster.root}"
    )
    return subprocess.Popen(
        ["sh", "-c", script],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
