//! A throw-away PostgreSQL cluster for the `postgres` feature's tests (the
//! pytest twin is tests/pg_cluster.py; docs/scale-out.md, "Running the
//! PostgreSQL tests").
//!
//! One cluster per test binary, started on first use: `initdb` into a fresh
//! folder under the system temp dir, owned by the `postgres` user when the
//! tests run as root (PostgreSQL refuses root), a free port on 127.0.0.1, the
//! unix socket in that folder, trust authentication. Test binaries have no
//! teardown hook, so a watchdog shell stops the server and removes the folder
//! once the test process is gone, however it ended. Each test takes a fresh
//! database from [`fresh_database`].
//!
//! Without PostgreSQL's programs a test returns early after saying why,
//! except under `CI=true`, where that is a failure.

#![allow(dead_code)] // each test binary uses its own part of the helper

pub mod drafts;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The server's superuser, which owns the data folder.
pub const SUPERUSER: &str = "postgres";

/// A running throw-away cluster.
#[derive(Debug)]
pub struct Cluster {
    pub root: PathBuf,
    pub port: u16,
}

impl Cluster {
    /// A connection URL for `database` over TCP as the superuser.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgresql://{SUPERUSER}@127.0.0.1:{}/{database}",
            self.port
        )
    }
}

/// A cluster that takes TCP connections over TLS only (`hostssl` in its
/// pg_hba.conf), its certificate naming `localhost` and signed by a CA of
/// its own (made with the `openssl` program).
#[derive(Debug)]
pub struct TlsCluster {
    pub cluster: Cluster,
    /// The PEM file of the CA that signed the server's certificate.
    pub ca: PathBuf,
    /// A CA that signed nothing of this server's.
    pub other_ca: PathBuf,
}

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
static OTHER_CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
static TLS_CLUSTER: OnceLock<Option<TlsCluster>> = OnceLock::new();
static DATABASES: AtomicUsize = AtomicUsize::new(0);

/// The binary's cluster, started on first call; `None` (after printing why)
/// when PostgreSQL is not installed outside CI.
pub fn cluster() -> Option<&'static Cluster> {
    CLUSTER
        .get_or_init(|| Some(start(&bindir()?, false).0))
        .as_ref()
}

/// A second plain cluster on another port (another system identifier),
/// started on first call; `None` as [`cluster`].
pub fn other_cluster() -> Option<&'static Cluster> {
    OTHER_CLUSTER
        .get_or_init(|| Some(start(&bindir()?, false).0))
        .as_ref()
}

/// The binary's TLS-only cluster, started on first call; `None` as [`cluster`].
pub fn tls_cluster() -> Option<&'static TlsCluster> {
    TLS_CLUSTER
        .get_or_init(|| {
            let (cluster, tls) = start(&bindir()?, true);
            let (ca, other_ca) = tls.expect("a TLS cluster has its CAs");
            Some(TlsCluster {
                cluster,
                ca,
                other_ca,
            })
        })
        .as_ref()
}

/// A new database on the TLS-only cluster (created over its unix socket):
/// its URL through `host`, with no TLS parameters yet.
pub fn fresh_tls_database(host: &str) -> Option<(String, &'static TlsCluster)> {
    let tls = tls_cluster()?;
    let name = format!(
        "tls_{}_{}",
        std::process::id(),
        DATABASES.fetch_add(1, Ordering::Relaxed)
    );
    let mut admin = postgres::Config::new()
        .host_path(&tls.cluster.root)
        .port(tls.cluster.port)
        .user(SUPERUSER)
        .dbname("postgres")
        .connect(postgres::NoTls)
        .expect("connect to the TLS test cluster over its socket");
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create a test database");
    let url = format!(
        "postgresql://{SUPERUSER}@{host}:{}/{name}",
        tls.cluster.port
    );
    Some((url, tls))
}

fn bindir() -> Option<PathBuf> {
    let found = find_bindir();
    if found.is_none() {
        let reason = "PostgreSQL is not installed (no initdb in $MEMCORE_PG_BINDIR, \
                      /usr/lib/postgresql/*/bin or PATH): apt-get install postgresql";
        // Under CI a missing PostgreSQL is a broken machine: fail, never pass
        // by skipping (tests/conftest.py's `pg_cluster` does the same).
        assert!(
            !std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true")),
            "{reason} (CI=true: the PostgreSQL tests must run)"
        );
        eprintln!("skipping the PostgreSQL tests: {reason}");
    }
    found
}

/// The URL of a new, empty database on the binary's cluster (one per test
/// keeps tests apart); `None` when PostgreSQL is absent outside CI.
pub fn fresh_database() -> Option<String> {
    let cluster = cluster()?;
    let name = format!(
        "test_{}_{}",
        std::process::id(),
        DATABASES.fetch_add(1, Ordering::Relaxed)
    );
    admin(cluster, &format!("CREATE DATABASE {name}"));
    Some(cluster.url(&name))
}

/// Run the statements of `sql` (split at `;`), each on its own, on
/// `cluster`'s `postgres` database as the superuser.
pub fn admin(cluster: &Cluster, sql: &str) {
    let mut admin = postgres::Client::connect(&cluster.url("postgres"), postgres::NoTls)
        .expect("connect to the test cluster");
    for statement in sql.split(';').filter(|s| !s.trim().is_empty()) {
        admin
            .batch_execute(statement)
            .expect("run an admin statement");
    }
}

/// `$MEMCORE_PG_BINDIR`, else the newest `/usr/lib/postgresql/<version>/bin`,
/// else the folder of `initdb` on PATH.
fn find_bindir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("MEMCORE_PG_BINDIR") {
        let dir = PathBuf::from(dir);
        return dir.join("initdb").exists().then_some(dir);
    }
    let newest = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .max();
    if let Some((_, bin)) = newest {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("initdb"))
        .find(|initdb| initdb.exists())
        .and_then(|initdb| initdb.canonicalize().ok()?.parent().map(Path::to_path_buf))
}

fn running_as_root() -> bool {
    id(&["-u"]) == "0"
}

fn id(args: &[&str]) -> String {
    let out = Command::new("id").args(args).output().expect("run id");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `program` with `args`, run as the superuser when we are root.
fn as_superuser(program: &Path, args: &[&str]) -> Command {
    if running_as_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", SUPERUSER, "--"]).arg(program).args(args);
        cmd
    } else {
        let mut cmd = Command::new(program);
        cmd.args(args);
        cmd
    }
}

fn run(mut cmd: Command, what: &str) -> std::process::Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Make a CA, a server certificate for `localhost` it signs, and another CA,
/// in `root`; the server's files belong to the superuser, its key private.
fn make_certificates(root: &Path) -> (PathBuf, PathBuf) {
    let openssl = |args: &[&str]| {
        let out = run(
            {
                let mut cmd = Command::new("openssl");
                cmd.args(args).current_dir(root);
                cmd
            },
            "openssl",
        );
        assert!(
            out.status.success(),
            "openssl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    for (name, subject) in [
        ("ca", "/CN=memcore test CA"),
        ("other-ca", "/CN=another CA"),
    ] {
        let mut args = vec!["req", "-x509", "-days", "2", "-subj", subject];
        args.extend(ec);
        let (key, cert) = (format!("{name}.key"), format!("{name}.pem"));
        args.extend(["-keyout", &key, "-out", &cert]);
        openssl(&args);
    }
    let mut args = vec!["req", "-subj", "/CN=localhost", "-keyout", "server.key"];
    args.extend(ec);
    args.extend(["-out", "server.csr"]);
    openssl(&args);
    std::fs::write(
        root.join("server.ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write the certificate's extensions");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        "-out",
        "server.pem",
    ]);
    let key = root.join("server.key");
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("make the key private");
    if running_as_root() {
        let uid = id(&["-u", SUPERUSER]).parse().expect("postgres uid");
        for file in ["server.key", "server.pem"] {
            std::os::unix::fs::chown(root.join(file), Some(uid), None).expect("chown");
        }
    }
    (root.join("ca.pem"), root.join("other-ca.pem"))
}

/// Start a cluster; with `tls`, one taking TCP connections over TLS only,
/// and the PEM files of its CA and of another CA.
fn start(bindir: &Path, tls: bool) -> (Cluster, Option<(PathBuf, PathBuf)>) {
    let root = std::env::temp_dir().join(format!(
        "memcore-pg-rust-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir(&root).expect("create the cluster folder");
    if running_as_root() {
        let uid = id(&["-u", SUPERUSER]).parse().expect("postgres uid");
        let gid = id(&["-g", SUPERUSER]).parse().expect("postgres gid");
        std::os::unix::fs::chown(&root, Some(uid), Some(gid)).expect("chown the cluster folder");
    }
    let data = root.join("data");
    let data_arg = data.to_str().expect("a UTF-8 temp path");
    let out = run(
        as_superuser(
            &bindir.join("initdb"),
            &[
                "-D",
                data_arg,
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "--no-sync",
            ],
        ),
        "initdb",
    );
    assert!(
        out.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    start_watchdog(bindir, &root, &data);
    let cas = tls.then(|| make_certificates(&root));
    let mut server_options = String::new();
    if tls {
        std::fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.1/32 trust\n\
             hostssl all all ::1/128 trust\n",
        )
        .expect("write pg_hba.conf");
        server_options = format!(
            " -c ssl=on -c ssl_cert_file={0}/server.pem -c ssl_key_file={0}/server.key",
            root.display()
        );
    }
    let log = root.join("server.log");
    let mut last_log = String::new();
    for _ in 0..3 {
        let port = free_port();
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {}{server_options}",
            root.display()
        );
        let out = run(
            as_superuser(
                &bindir.join("pg_ctl"),
                &[
                    "-D",
                    data_arg,
                    "-l",
                    log.to_str().expect("a UTF-8 temp path"),
                    "-o",
                    &options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
            ),
            "pg_ctl start",
        );
        if out.status.success() {
            return (Cluster { root, port }, cas);
        }
        last_log = std::fs::read_to_string(&log).unwrap_or_default();
    }
    panic!("PostgreSQL did not start; its log:\n{last_log}");
}

/// A detached shell that stops the server and removes its folder once this
/// process has exited.
#[allow(
    clippy::zombie_processes,
    reason = "the watchdog outlives this process by design; it is never waited on"
)]
fn start_watchdog(bindir: &Path, root: &Path, data: &Path) {
    let pg_ctl = bindir.join("pg_ctl");
    let stop = if running_as_root() {
        format!(
            "runuser -u {SUPERUSER} -- {} -D {} -m immediate stop",
            pg_ctl.display(),
            data.display()
        )
    } else {
        format!(
            "{} -D {} -m immediate stop",
            pg_ctl.display(),
            data.display()
        )
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {root}",
        pid = std::process::id(),
        root = root.display()
    );
    std::os::unix::process::CommandExt::process_group(
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        0,
    )
    .spawn()
    .expect("start the cluster's watchdog");
}
