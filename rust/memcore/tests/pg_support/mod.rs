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

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
static DATABASES: AtomicUsize = AtomicUsize::new(0);

/// The binary's cluster, started on first call; `None` (after printing why)
/// when PostgreSQL is not installed outside CI.
pub fn cluster() -> Option<&'static Cluster> {
    CLUSTER
        .get_or_init(|| {
            let Some(bindir) = find_bindir() else {
                let reason = "PostgreSQL is not installed (no initdb in $MEMCORE_PG_BINDIR, \
                              /usr/lib/postgresql/*/bin or PATH): apt-get install postgresql";
                assert!(
                    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true")),
                    "{reason}"
                );
                eprintln!("skipping the PostgreSQL tests: {reason}");
                return None;
            };
            Some(start(&bindir))
        })
        .as_ref()
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
    let mut admin = postgres::Client::connect(&cluster.url("postgres"), postgres::NoTls)
        .expect("connect to the test cluster");
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create a test database");
    Some(cluster.url(&name))
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

fn start(bindir: &Path) -> Cluster {
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
    let log = root.join("server.log");
    let mut last_log = String::new();
    for _ in 0..3 {
        let port = free_port();
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {}",
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
            return Cluster { root, port };
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
