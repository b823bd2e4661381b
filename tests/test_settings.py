"""Settings of the server and the CLI: flag > MEMCORE_* variable > default for every
option of docs/configuration.md, and invalid values refused at once with a message that names
the flag or variable, the value and what is accepted."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

import memcore
from embeddings_support.models import MINILM_DIR
from memcore.cli.commands import main as cli
from memcore.errors import InvalidParameterError, StorageError
from memcore.mcp.main import main as serve
from memcore.settings.options import (
    OPTIONS,
    SERVER_OPTIONS,
    STORE_OPTIONS,
    NamespaceRange,
    Settings,
    SettingsError,
    add_options,
    describe,
    is_loopback,
    namespace_bucket,
    resolve,
)
from pg_cluster import PgCluster, start_cluster


def _settings(argv: list[str], env: dict[str, str] | None = None, names: Any = None) -> Settings:
    parser = argparse.ArgumentParser()
    chosen = SERVER_OPTIONS if names is None else names
    add_options(parser, chosen)
    return resolve(parser.parse_args(argv), chosen, env or {})


def test_defaults_are_those_of_the_design(tmp_path: Path) -> None:
    settings = _settings([])
    assert settings.data_dir == tmp_path / "xdg-data" / "memcore"  # conftest's XDG_DATA_HOME
    assert (settings.model, settings.model_path) == ("minilm", None)
    assert (settings.cache_size, settings.batch_size, settings.timeout) == (1000, 32, 60.0)
    assert (settings.log_level, settings.namespace, settings.tools) == ("info", "default", "core")
    assert (settings.force_model, settings.reset_memory, settings.read_only) == (False,) * 3
    assert (settings.transport, settings.host, settings.port) == ("stdio", "127.0.0.1", 8765)
    assert settings.auth_file is None


def test_every_option_has_a_flag_and_an_environment_variable() -> None:
    for name, option in OPTIONS.items():
        assert option.flag == "--" + name.replace("_", "-")
        assert option.env == "MEMCORE_" + name.upper()
    assert {"data_dir", "model", "namespace", "read_only"} <= set(STORE_OPTIONS)


@pytest.mark.parametrize(
    ("flag", "env", "value", "field", "expected"),
    [
        ("--cache-size", "MEMCORE_CACHE_SIZE", "5", "cache_size", 5),
        ("--batch-size", "MEMCORE_BATCH_SIZE", "8", "batch_size", 8),
        ("--timeout", "MEMCORE_TIMEOUT", "2.5", "timeout", 2.5),
        ("--min-seq-wait", "MEMCORE_MIN_SEQ_WAIT", "0.5", "min_seq_wait", 0.5),
        ("--log-level", "MEMCORE_LOG_LEVEL", "DEBUG", "log_level", "debug"),
        ("--namespace", "MEMCORE_NAMESPACE", "team-a", "namespace", "team-a"),
        ("--tools", "MEMCORE_TOOLS", "facts, get_status", "tools", "facts,get_status"),
        ("--transport", "MEMCORE_TRANSPORT", "http", "transport", "http"),
        ("--port", "MEMCORE_PORT", "9000", "port", 9000),
        ("--model", "MEMCORE_MODEL", "e5_small", "model", "e5_small"),
        ("--model", "MEMCORE_MODEL", "none", "model", None),
        ("--max-items", "MEMCORE_MAX_ITEMS", "7", "max_items", 7),
        (
            "--max-sessions-per-token",
            "MEMCORE_MAX_SESSIONS_PER_TOKEN",
            "3",
            "max_sessions_per_token",
            3,
        ),
        (
            "--session-idle-timeout",
            "MEMCORE_SESSION_IDLE_TIMEOUT",
            "90",
            "session_idle_timeout",
            90,
        ),
        ("--rate-limit", "MEMCORE_RATE_LIMIT", "0", "rate_limit", 0.0),
        ("--rate-limit", "MEMCORE_RATE_LIMIT", "2.5", "rate_limit", 2.5),
        ("--rate-burst", "MEMCORE_RATE_BURST", "12", "rate_burst", 12),
    ],
)
def test_a_flag_beats_the_environment_which_beats_the_default(
    flag: str, env: str, value: str, field: str, expected: Any
) -> None:
    default = getattr(Settings(), field)
    assert getattr(_settings([], {env: value}), field) == expected
    assert getattr(_settings([flag, value]), field) == expected
    other = {"--port": "9001", "--cache-size": "6", "--batch-size": "9", "--max-items": "8"}
    if flag in other:
        assert getattr(_settings([flag, value], {env: other[flag]}), field) == expected
    assert getattr(_settings([]), field) == default


def test_switches_from_flags_and_environment() -> None:
    assert _settings(["--read-only"]).read_only is True
    assert _settings([], {"MEMCORE_READ_ONLY": "yes"}).read_only is True
    assert _settings(["--no-read-only"], {"MEMCORE_READ_ONLY": "1"}).read_only is False
    assert _settings([], {"MEMCORE_FORCE_MODEL": "off"}).force_model is False
    with pytest.raises(SettingsError, match="Invalid MEMCORE_READ_ONLY 'maybe'"):
        _settings([], {"MEMCORE_READ_ONLY": "maybe"})


def test_paths_come_from_flags_or_the_environment(tmp_path: Path) -> None:
    assert _settings(["--data-dir", str(tmp_path / "a")]).data_dir == tmp_path / "a"
    from_env = _settings([], {"MEMCORE_DATA_DIR": str(tmp_path / "b")})
    assert from_env.data_dir == tmp_path / "b"
    both = _settings(["--data-dir", str(tmp_path / "c")], {"MEMCORE_DATA_DIR": str(tmp_path)})
    assert both.data_dir == tmp_path / "c"
    token_file = _settings([], {"MEMCORE_AUTH_FILE": str(tmp_path / "t.json")})
    assert token_file.auth_file == tmp_path / "t.json"


def test_a_model_path_must_hold_a_model(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="expected a directory"):
        _settings(["--model-path", str(tmp_path / "missing")])
    (tmp_path / "model.onnx").touch()
    with pytest.raises(SettingsError, match=r"lacks tokenizer\.json, config\.json"):
        _settings(["--model-path", str(tmp_path)])
    if MINILM_DIR.is_dir():
        assert _settings(["--model-path", str(MINILM_DIR)]).model_path == MINILM_DIR


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--cache-size", "lots"], {}, "Invalid --cache-size 'lots': expected an integer"),
        ([], {"MEMCORE_CACHE_SIZE": "-1"}, "Invalid MEMCORE_CACHE_SIZE '-1'"),
        (["--batch-size", "0"], {}, "expected an integer from 1 to 4096"),
        (["--timeout", "0"], {}, "expected a number of seconds greater than 0"),
        (["--timeout", "nan"], {}, "Invalid --timeout 'nan'"),
        (["--port", "70000"], {}, "expected an integer from 1 to 65535"),
        (["--log-level", "loud"], {}, "expected one of: trace, debug, info, warn"),
        (["--transport", "sse"], {}, "expected one of: stdio, http"),
        (["--model", "gpt-4"], {}, "expected a model name (minilm, e5_small"),
        (["--model", "./models/minilm"], {}, "a model folder goes in --model-path"),
        (["--namespace", " "], {}, "expected 1-128 printable characters"),
        (["--tools", "core,,all"], {}, "Invalid --tools 'core,,all'"),
        (["--host", "a b"], {}, "expected a host name"),
        (["--force-model", "--reset-memory"], {}, "not both"),
        (["--read-only", "--reset-memory"], {}, "needs write access"),
        (["--rate-limit", "-1"], {}, "expected requests per second, 0 or more"),
        ([], {"MEMCORE_RATE_LIMIT": "inf"}, "Invalid MEMCORE_RATE_LIMIT 'inf'"),
        (["--max-sessions-per-token", "0"], {}, "expected an integer from 1 to 100000"),
        (["--session-idle-timeout", "0"], {}, "expected a number of seconds greater than 0"),
    ],
)
def test_invalid_values_fail_with_a_clear_message(
    argv: list[str], env: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as info:
        _settings(argv, env)
    assert message in str(info.value)


def test_a_data_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    with pytest.raises(SettingsError, match="expected a directory, but it is a file"):
        _settings(["--data-dir", str(tmp_path / "file")])


def test_http_off_loopback_needs_tokens(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"Refusing to serve HTTP on 0\.0\.0\.0"):
        _settings(["--transport", "http", "--host", "0.0.0.0"])
    assert _settings(["--transport", "http", "--host", "localhost"]).host == "localhost"
    tokens = _settings(
        ["--transport", "http", "--host", "0.0.0.0", "--auth-file", str(tmp_path / "t")]
    )
    assert tokens.auth_file == tmp_path / "t"
    opted_out = {"MEMCORE_TRANSPORT": "http", "MEMCORE_HOST": "0.0.0.0"}
    assert _settings([], {**opted_out, "MEMCORE_ALLOW_NO_AUTH": "1"}).allow_no_auth


def test_loopback_addresses() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "10.0.0.1", "::", "example.com"]))


def test_commands_read_only_their_own_settings() -> None:
    # A CLI command that does not serve must not trip over a server-only variable.
    env = {"MEMCORE_PORT": "not-a-port", "MEMCORE_NAMESPACE": "cli"}
    assert _settings([], env, names=STORE_OPTIONS).namespace == "cli"
    with pytest.raises(SettingsError, match="MEMCORE_PORT"):
        _settings([], env)


def test_memory_arguments_follow_the_settings(tmp_path: Path) -> None:
    settings = _settings(
        ["--data-dir", str(tmp_path), "--model", "none", "--namespace", "n", "--read-only"]
    )
    kwargs = settings.memory_kwargs()
    assert kwargs["path"] == tmp_path and kwargs["model"] is None
    assert (kwargs["namespace"], kwargs["read_only"]) == ("n", True)
    assert kwargs["embedding_int8"] is True


def test_float_embeddings_turn_int8_products_off() -> None:
    assert _settings(["--float-embeddings"]).memory_kwargs()["embedding_int8"] is False
    env = {"MEMCORE_FLOAT_EMBEDDINGS": "1"}
    assert _settings([], env, names=STORE_OPTIONS).memory_kwargs()["embedding_int8"] is False
    assert _settings(["--no-float-embeddings"], env).float_embeddings is False


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cache-size", "x"], "Invalid --cache-size 'x'"),
        (["--tools", "core,nonsense"], "Unknown tool or group in --tools: nonsense"),
        (["--transport", "http", "--auth-file", "/nonexistent/t.json"], "does not exist"),
    ],
)
def test_the_server_exits_2_on_bad_settings(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_list_models_prints_the_registry_and_exits(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve(["--list-models"]) == 0
    out = capsys.readouterr().out
    for name in ("minilm", "e5_small", "e5_multi", "nomic", "bge_m3"):
        assert name in out


def test_embedding_wait_reaches_memory_and_is_checked() -> None:
    assert _settings([]).memory_kwargs()["embedding_wait"] == 5.0
    assert _settings(["--embedding-wait", "0"]).embedding_wait == 0.0
    env = {"MEMCORE_EMBEDDING_WAIT": "12.5"}
    assert _settings([], env, names=STORE_OPTIONS).memory_kwargs()["embedding_wait"] == 12.5
    with pytest.raises(SettingsError, match=r"--embedding-wait '-1'.*0 or more"):
        _settings(["--embedding-wait", "-1"])


def test_a_database_url_makes_the_store_a_postgresql_node(tmp_path: Path) -> None:
    url = "postgresql://memcore:secret@db.example:5432/memory"
    env = {"MEMCORE_DATABASE_URL": url, "MEMCORE_DATA_DIR": str(tmp_path / "replica")}
    kwargs = _settings([], env, names=STORE_OPTIONS).memory_kwargs()
    assert (kwargs["path"], kwargs["replica_dir"]) == (url, tmp_path / "replica")
    assert kwargs["replica_rebuild"] is False
    assert "replica_dir" not in _settings([], {}, names=STORE_OPTIONS).memory_kwargs()
    # No data directory named: the replica is the database's own folder (Memory keys it
    # by the database's identity), never a folder another database's node may share.
    kwargs = _settings(["--database-url", url], {}, names=STORE_OPTIONS).memory_kwargs()
    assert kwargs["replica_dir"] is None
    kwargs = _settings(["--database-url", url, "--replica-rebuild"], {}).memory_kwargs()
    assert kwargs["replica_rebuild"] is True
    with pytest.raises(SettingsError, match=r"--replica-rebuild .* pass --database-url"):
        _settings(["--replica-rebuild"])
    # The password never reaches the start-up log line.
    assert describe(_settings(["--database-url", url]))["database_url"] == (
        "postgresql://memcore:***@db.example:5432/memory"
    )
    with pytest.raises(SettingsError, match=r"Invalid --database-url '/tmp/x'.*postgresql://"):
        _settings(["--database-url", "/tmp/x"])
    with pytest.raises(SettingsError, match="drop --read-only or --database-url"):
        _settings(["--database-url", url, "--read-only"])


def test_namespaces_choose_what_a_node_serves(tmp_path: Path) -> None:
    url = "postgresql://db.example/memory"
    env = {"MEMCORE_DATABASE_URL": url, "MEMCORE_NAMESPACES": "default, team-a"}
    kwargs = _settings([], env, names=STORE_OPTIONS).memory_kwargs()
    assert kwargs["namespaces"] == ["default", "team-a"]
    assert _settings(["--database-url", url]).memory_kwargs()["namespaces"] is None
    with pytest.raises(SettingsError, match="pass --database-url too"):
        _settings(["--namespaces", "a,b"])
    with pytest.raises(SettingsError, match="'default' is not among --namespaces"):
        _settings(["--database-url", url, "--namespaces", "a,b"])
    http = ["--transport", "http", "--database-url", url, "--namespaces", "a,b"]
    assert _settings(http).namespaces == ("a", "b"), "over HTTP, tokens name the namespace"
    with pytest.raises(SettingsError, match=r"Invalid --namespaces 'a,,b'"):
        _settings(["--database-url", url, "--namespaces", "a,,b"])


# memcore's namespace hash is a contract with every node and proxy ever configured; the
# same values are pinned in rust/memcore/src/pg/placement.rs.
_BUCKETS = [
    ("default", 49, 4),
    ("tenant-a", 37, 6),
    ("tenant-b", 90, 3),
    ("acme", 72, 2),
    ("é-ünïcode", 65, 1),
]


@pytest.mark.parametrize(("name", "of_100", "of_7"), _BUCKETS)
def test_namespace_buckets_are_fixed_forever(name: str, of_100: int, of_7: int) -> None:
    assert namespace_bucket(name) == of_100
    assert namespace_bucket(name, 7) == of_7
    assert name in NamespaceRange.parse(f"{of_100}-{of_100}/100")


def test_a_namespace_range_chooses_what_a_node_serves() -> None:
    url = "postgresql://db.example/memory"
    env = {"MEMCORE_DATABASE_URL": url, "MEMCORE_NAMESPACE_RANGE": " 0 - 49 / 100 "}
    settings = _settings([], env, names=STORE_OPTIONS)
    assert settings.namespace_range == "0-49/100"
    assert settings.memory_kwargs()["namespace_range"] == "0-49/100"
    with pytest.raises(SettingsError, match="pass --database-url too"):
        _settings(["--namespace-range", "0-49/100"])
    with pytest.raises(SettingsError, match="--namespaces or --namespace-range, not both"):
        _settings(["--database-url", url, "--namespaces", "default", "--namespace-range", "0-1/2"])
    # Over stdio every call uses --namespace: it must be served ("default" is bucket 49).
    with pytest.raises(SettingsError, match="'default' is in bucket 49, outside"):
        _settings(["--database-url", url, "--namespace-range", "50-99/100"])
    http = ["--transport", "http", "--database-url", url, "--namespace-range", "50-99/100"]
    assert _settings(http).namespace_range == "50-99/100", "over HTTP, tokens name it"
    for bad in ("0-49", "49-0/100", "0-100/100", "0-0/0", "a-b/c"):
        with pytest.raises(SettingsError, match=r"Invalid --namespace-range.*LO-HI/BUCKETS"):
            _settings(["--database-url", url, "--namespace-range", bad])


def test_the_cli_shows_a_namespaces_bucket(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["namespace-bucket", "tenant-a", "tenant-b", "--range", "0-49/100"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [
        {"namespace": "tenant-a", "bucket": 37, "buckets": 100, "served": True},
        {"namespace": "tenant-b", "bucket": 90, "buckets": 100, "served": False},
    ]
    assert cli(["namespace-bucket", "default", "--buckets", "7"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["bucket"] == 4
    assert cli(["namespace-bucket", "default", "--range", "9-1/10"]) == 2
    assert "LO <= HI < BUCKETS" in capsys.readouterr().err


def test_a_range_node_serves_only_its_buckets(pg_database: str, tmp_path: Path) -> None:
    with memcore.Memory(pg_database, replica_dir=tmp_path / "all", model=None) as writer:
        for namespace in ("tenant-a", "tenant-b"):
            writer.store_memory(f"{namespace} keeps a zebra", namespace=namespace)
    node = memcore.Memory(
        pg_database, replica_dir=tmp_path / "low", namespace_range="0-49/100", model=None
    )
    with node:
        assert [h.memory.content for h in node.search_text("zebra", namespace="tenant-a")] == [
            "tenant-a keeps a zebra"
        ]
        # Another tenant's reads are refused like its writes, not answered empty.
        with pytest.raises(InvalidParameterError, match="does not serve namespace"):
            node.search_text("zebra", namespace="tenant-b")
        with pytest.raises(InvalidParameterError, match="does not serve namespace"):
            node.store_memory("not mine", namespace="tenant-b")
    with pytest.raises(InvalidParameterError, match="not both"):
        memcore.Memory(
            pg_database,
            replica_dir=tmp_path / "both",
            namespaces=["tenant-a"],
            namespace_range="0-49/100",
            model=None,
        )
    with pytest.raises(InvalidParameterError, match="LO-HI/BUCKETS"):
        memcore.Memory(
            pg_database, replica_dir=tmp_path / "bad", namespace_range="0-49", model=None
        )
    with pytest.raises(InvalidParameterError, match="PostgreSQL node"):
        memcore.Memory(tmp_path / "sqlite", namespace_range="0-49/100", model=None)


def test_a_node_reaches_postgresql_over_verified_tls(pg_cluster: PgCluster, tmp_path: Path) -> None:
    tls = start_cluster(pg_cluster.bindir, tls=True)  # TCP over TLS only
    try:
        assert tls.ca is not None and tls.other_ca is not None
        url = tls.url(tls.create_database().rsplit("/", 1)[1], host="localhost")
        verified = f"{url}?sslmode=verify-full&sslrootcert={tls.ca}"
        with memcore.Memory(verified, replica_dir=tmp_path / "a", model=None) as node:
            node.store_memory("a zebra over TLS")
            assert node.last_write_seq() == 1
        wrong = f"{url}?sslmode=verify-full&sslrootcert={tls.other_ca}"
        with pytest.raises(StorageError, match="certificate was not accepted"):
            memcore.Memory(wrong, replica_dir=tmp_path / "b", model=None)
        with pytest.raises(StorageError, match=r"sslmode=disable\), which this server refuses"):
            memcore.Memory(f"{url}?sslmode=disable", replica_dir=tmp_path / "c", model=None)
        with pytest.raises(InvalidParameterError, match="add sslrootcert"):
            memcore.Memory(f"{url}?sslmode=verify-ca", replica_dir=tmp_path / "d", model=None)
    finally:
        tls.stop()


# -- the automatic path's settings, the project root, the extractor, maintenance -----------------

_LIFECYCLE = [
    ("--recent-context-items", "MEMCORE_RECENT_CONTEXT_ITEMS", "12", "recent_context_items", 12),
    ("--compact-threshold", "MEMCORE_COMPACT_THRESHOLD", "0.5", "compact_threshold", 0.5),
    ("--l1-retention-days", "MEMCORE_L1_RETENTION_DAYS", "2", "l1_retention_days", 2),
    ("--l2-retention-days", "MEMCORE_L2_RETENTION_DAYS", "14", "l2_retention_days", 14),
    (
        "--compaction-min-age-hours",
        "MEMCORE_COMPACTION_MIN_AGE_HOURS",
        "1.5",
        "compaction_min_age_hours",
        1.5,
    ),
    (
        "--summary-refresh-interval-minutes",
        "MEMCORE_SUMMARY_REFRESH_INTERVAL_MINUTES",
        "5",
        "summary_refresh_interval_minutes",
        5.0,
    ),
    ("--max-processed-turns", "MEMCORE_MAX_PROCESSED_TURNS", "64", "max_processed_turns", 64),
    (
        "--fact-extractor-timeout",
        "MEMCORE_FACT_EXTRACTOR_TIMEOUT",
        "2",
        "fact_extractor_timeout",
        2,
    ),
    ("--maintenance-interval", "MEMCORE_MAINTENANCE_INTERVAL", "0.2", "maintenance_interval", 0.2),
]


@pytest.mark.parametrize(("flag", "env", "value", "field", "expected"), _LIFECYCLE)
def test_lifecycle_settings_come_from_flags_and_the_environment(
    flag: str, env: str, value: str, field: str, expected: Any
) -> None:
    assert getattr(_settings([flag, value]), field) == expected
    assert getattr(_settings([], {env: value}), field) == expected
    assert getattr(_settings([flag, value], {env: "3"}), field) == expected


def test_lifecycle_defaults_are_the_contracts() -> None:
    settings = _settings([])
    assert settings.turn_settings() == {
        "recent_context_items": 30,
        "compact_threshold": 0.8,
        "l1_retention_days": 1,
        "l2_retention_days": 7,
        "compaction_min_age_hours": 24.0,
        "summary_refresh_interval_minutes": 60.0,
        "max_processed_turns": 1024,
    }
    assert (settings.fact_extractor, settings.fact_extractor_timeout) == (None, 10.0)
    assert settings.maintenance_interval == 0.0  # off: clients call memory_run_maintenance
    assert settings.project_root is None


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (
            ["--compact-threshold", "1.5"],
            {},
            "Invalid --compact-threshold '1.5': expected a number greater than 0 up to 1.",
        ),
        (["--compact-threshold", "0"], {}, "greater than 0"),
        (
            [],
            {"MEMCORE_L1_RETENTION_DAYS": "-1"},
            "Invalid MEMCORE_L1_RETENTION_DAYS '-1': expected an integer from 1 up to 36500.",
        ),
        (["--l2-retention-days", "0"], {}, "Invalid --l2-retention-days '0'"),
        (["--recent-context-items", "many"], {}, "Invalid --recent-context-items 'many'"),
        (["--max-processed-turns", "1.5"], {}, "expected an integer from 1 up to 100000000"),
        ([], {"MEMCORE_COMPACTION_MIN_AGE_HOURS": "-3"}, "MEMCORE_COMPACTION_MIN_AGE_HOURS '-3'"),
        (["--summary-refresh-interval-minutes", "nan"], {}, "'nan': expected a number from 0"),
        (
            ["--l1-retention-days", "5", "--l2-retention-days", "3"],
            {},
            "--l2-retention-days (3) must be at least --l1-retention-days (5)",
        ),
        (
            [],
            {"MEMCORE_L1_RETENTION_DAYS": "10"},
            "--l2-retention-days (7) must be at least --l1-retention-days (10)",
        ),
        (["--fact-extractor-timeout", "0"], {}, "expected a number of seconds greater than 0"),
        ([], {"MEMCORE_MAINTENANCE_INTERVAL": "-1"}, "0 or more (0: off)"),
        (["--maintenance-interval", "1", "--read-only"], {}, "drop --read-only"),
    ],
)
def test_invalid_lifecycle_settings_fail_with_a_clear_message(
    argv: list[str], env: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as info:
        _settings(argv, env)
    assert message in str(info.value)


def test_lifecycle_settings_reach_memory(tmp_path: Path) -> None:
    argv = ["--recent-context-items", "12", "--compact-threshold", "0.6", "--model", "none"]
    argv += ["--l1-retention-days", "2", "--max-processed-turns", "64"]
    settings = _settings([*argv, "--data-dir", str(tmp_path / "store")], names=STORE_OPTIONS)
    kwargs = settings.memory_kwargs()
    assert (kwargs["recent_context_items"], kwargs["compact_threshold"]) == (12, 0.6)
    with memcore.Memory(**kwargs) as memory:
        assert memory.turn_settings.as_dict() == settings.turn_settings()
        assert memory.turn_settings.max_processed_turns == 64


def test_the_cli_and_the_server_take_their_own_lifecycle_settings() -> None:
    lifecycle = {
        "recent_context_items",
        "compact_threshold",
        "l1_retention_days",
        "l2_retention_days",
        "compaction_min_age_hours",
        "summary_refresh_interval_minutes",
        "max_processed_turns",
    }
    assert {"project_root", *lifecycle} <= set(STORE_OPTIONS)
    server_only = {"fact_extractor", "fact_extractor_timeout", "maintenance_interval"}
    assert not server_only & set(STORE_OPTIONS) and server_only <= set(SERVER_OPTIONS)
    # A server-only variable never stops a CLI command.
    env = {"MEMCORE_FACT_EXTRACTOR": "nonsense", "MEMCORE_MAINTENANCE_INTERVAL": "-1"}
    assert _settings([], env, names=STORE_OPTIONS).fact_extractor is None


def _extractor_module(folder: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> str:
    """A module in a tmp folder on sys.path; its name (unique per test)."""
    name = f"facts_{folder.name.replace('-', '_')}"
    (folder / f"{name}.py").write_text(body, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return name


def test_a_fact_extractor_is_loaded_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "print('imported')\ndef extract(items):\n    return ['User likes tea']\n"
    name = _extractor_module(tmp_path, monkeypatch, body)
    settings = _settings(["--fact-extractor", f"{name}:extract"])
    assert settings.fact_extractor is not None
    assert settings.fact_extractor.function([]) == ["User likes tea"]
    assert settings.memory_kwargs()["fact_extractor"] is settings.fact_extractor.function
    assert describe(settings)["fact_extractor"] == f"{name}:extract"
    json.dumps(describe(settings))  # the start-up log line takes it
    assert capsys.readouterr().out == ""  # an import's print never reaches stdout (MCP)
    from_env = _settings([], {"MEMCORE_FACT_EXTRACTOR": f"{name}:extract"})
    assert from_env.fact_extractor == settings.fact_extractor


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("extract", "expected module:function"),
        ("{module}:", "expected module:function"),
        ("no_such_module_for_memcore:extract", "no module named 'no_such_module_for_memcore'"),
        ("{module}:missing", "has no attribute 'missing'"),
        ("{module}:NOT_CALLABLE", "'NOT_CALLABLE' in '{module}' is a int, not a function"),
        ("{module}_broken:extract", "importing '{module}_broken' failed: ZeroDivisionError"),
    ],
)
def test_a_bad_fact_extractor_stops_the_start(
    spec: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _extractor_module(tmp_path, monkeypatch, "NOT_CALLABLE = 3\ndef extract(items): ...\n")
    (tmp_path / f"{name}_broken.py").write_text("1 / 0\n", encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        _settings(["--fact-extractor", spec.format(module=name)])
    assert f"Invalid --fact-extractor '{spec.format(module=name)}'" in str(info.value)
    assert message.format(module=name) in str(info.value)


def test_a_project_root_puts_the_store_in_the_project(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    settings = _settings(["--project-root", str(root)], names=STORE_OPTIONS)
    assert (settings.project_root, settings.data_dir) == (root, root / ".memcore")
    kwargs = settings.memory_kwargs()
    assert (kwargs["path"], kwargs["mode"], kwargs["project_root"]) == (
        root / ".memcore",
        "local",
        root,
    )
    from_env = _settings([], {"MEMCORE_PROJECT_ROOT": str(root)}, names=STORE_OPTIONS)
    assert from_env.data_dir == root / ".memcore"
    # --data-dir on the command line still places the store; MEMCORE_DATA_DIR (the global
    # store's) gives way to the project, as Memory(mode="local") does.
    elsewhere = _settings(["--project-root", str(root), "--data-dir", str(tmp_path / "d")])
    assert elsewhere.data_dir == tmp_path / "d" and elsewhere.project_root == root
    global_env = {"MEMCORE_DATA_DIR": str(tmp_path / "global")}
    assert _settings(["--project-root", str(root)], global_env).data_dir == root / ".memcore"
    assert "mode" not in _settings([]).memory_kwargs()


def test_a_project_root_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    with pytest.raises(SettingsError, match=r"Invalid --project-root .*a file"):
        _settings(["--project-root", str(tmp_path / "file")])
    with pytest.raises(
        SettingsError, match=r"Invalid MEMCORE_PROJECT_ROOT .*an existing directory"
    ):
        _settings([], {"MEMCORE_PROJECT_ROOT": str(tmp_path / "missing")})


def test_the_cli_stores_in_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("MEMCORE_DATA_DIR", str(tmp_path / "global"))
    assert cli(["store", "User prefers tabs", "--project-root", str(root), "--model", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["id"].startswith("mem_")
    assert (root / ".memcore" / "memcore.db").is_file()
    assert not (tmp_path / "global").exists()
    monkeypatch.setenv("MEMCORE_PROJECT_ROOT", str(root))
    assert cli(["search", "tabs", "--text", "--model", "none"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert "User prefers tabs" in json.dumps(found)
