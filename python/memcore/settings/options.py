"""Settings of the MCP server and the CLI (docs/configuration.md).

Every setting comes from its CLI flag, else its ``MEMCORE_*`` environment variable, else
its default. Each one is described once, in :data:`OPTIONS`; the flag is ``--`` plus the
name with dashes and the variable is ``MEMCORE_`` plus the name in capitals
(``cache_size`` → ``--cache-size`` / ``MEMCORE_CACHE_SIZE``). Invalid values raise
:class:`SettingsError`, whose message names the flag or variable, the value and what is
accepted, so a bad start fails at once instead of on the first tool call.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from memcore import facade
from memcore.config import LOCAL_DIR_NAME, default_data_dir
from memcore.errors import InvalidParameterError
from memcore.facade import TURN_OPTIONS, TURN_SETTING_NAMES, TurnOption, TurnSettings
from memcore.settings.extractor import ExtractorSpec, load_extractor

Transport = Literal["stdio", "http"]

ENV_PREFIX = "MEMCORE_"
LOG_LEVELS = ("trace", "debug", "info", "warn", "warning", "error")
#: Model names that turn embeddings off (a text-only store: BM25 and graph).
NO_MODEL = ("none", "off")
#: What a --model-path folder must hold (docs/configuration.md, "Embedding models").
MODEL_FILES = ("model.onnx", "tokenizer.json", "config.json")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_LOOPBACK_NAMES = ("localhost",)
#: The automatic path's defaults (one definition: memcore/_facade/turn_settings.py).
_TURN = TurnSettings()


class SettingsError(ValueError):
    """A setting is invalid; the message says which, where it came from and what to use."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Resolved settings; the defaults are listed in docs/configuration.md."""

    data_dir: Path = field(default_factory=default_data_dir)
    project_root: Path | None = None
    database_url: str | None = None
    namespaces: tuple[str, ...] | None = None
    namespace_range: str | None = None
    replica_rebuild: bool = False
    #: With --database-url: the replica folder, when --data-dir / MEMCORE_DATA_DIR names
    #: it; None keeps the default, ``replica/<identity>`` inside the data directory.
    replica_dir: Path | None = None
    model: str | None = "minilm"
    model_path: Path | None = None
    cache_size: int = 1000
    batch_size: int = 32
    float_embeddings: bool = False
    embedding_wait: float = 5.0
    timeout: float = 60.0
    min_seq_wait: float = 2.0
    log_level: str = "info"
    force_model: bool = False
    reset_memory: bool = False
    namespace: str = "default"
    read_only: bool = False
    tools: str = "core"
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = 8765
    auth_file: Path | None = None
    allow_no_auth: bool = False
    max_request_bytes: int = 1_048_576
    max_items: int = 1000
    max_sessions_per_token: int = 64
    session_idle_timeout: float = 600.0
    rate_limit: float = 100.0
    rate_burst: int = 200
    recent_context_items: int = _TURN.recent_context_items
    compact_threshold: float = _TURN.compact_threshold
    l1_retention_days: int = _TURN.l1_retention_days
    l2_retention_days: int = _TURN.l2_retention_days
    compaction_min_age_hours: float = _TURN.compaction_min_age_hours
    summary_refresh_interval_minutes: float = _TURN.summary_refresh_interval_minutes
    max_processed_turns: int = _TURN.max_processed_turns
    fact_extractor: ExtractorSpec | None = None
    fact_extractor_timeout: float = 10.0
    maintenance_interval: float = 0.0

    def turn_settings(self) -> dict[str, int | float]:
        """The automatic path's seven settings, by name."""
        return {name: getattr(self, name) for name in TURN_SETTING_NAMES}

    def memory_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``memcore.Memory`` with these settings. With a
        database URL the store is a node of that PostgreSQL database: a data directory
        given explicitly is the node's replica, otherwise the replica is the database's
        own folder under the default data directory (``replica/<identity>``). With a
        project root the store is in local mode: document ids are relative to the root."""
        where: dict[str, Any] = (
            {"path": self.data_dir}
            if self.database_url is None
            else {
                "path": self.database_url,
                "replica_dir": self.replica_dir,
                "namespaces": None if self.namespaces is None else list(self.namespaces),
                "namespace_range": self.namespace_range,
                "replica_rebuild": self.replica_rebuild,
            }
        )
        if self.project_root is not None:
            where = {**where, "mode": "local", "project_root": self.project_root}
        return {
            **where,
            "model": self.model,
            "model_path": self.model_path,
            "force_model": self.force_model,
            "reset_memory": self.reset_memory,
            "namespace": self.namespace,
            "read_only": self.read_only,
            "cache_size": self.cache_size,
            "batch_size": self.batch_size,
            "embedding_int8": not self.float_embeddings,
            "embedding_wait": self.embedding_wait,
            **self.turn_settings(),
            "fact_extractor": None if self.fact_extractor is None else self.fact_extractor.function,
            "fact_extractor_timeout": self.fact_extractor_timeout,
        }


# -- value parsers: each takes the raw text and raises ValueError saying what is accepted --


def _integer(minimum: int, maximum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"expected an integer from {minimum} to {maximum}") from None
        if not minimum <= value <= maximum:
            raise ValueError(f"expected an integer from {minimum} to {maximum}")
        return value

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("expected a number of seconds greater than 0") from None
    if not 0 < value < float("inf"):
        raise ValueError("expected a number of seconds greater than 0")
    return value


def _rate(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("expected requests per second, 0 or more (0: no limit)") from None
    if not 0 <= value < float("inf"):
        raise ValueError("expected requests per second, 0 or more (0: no limit)")
    return value


def _wait_seconds(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("expected a number of seconds, 0 or more") from None
    if not 0 <= value < float("inf"):
        raise ValueError("expected a number of seconds, 0 or more")
    return value


def _interval(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("expected a number of seconds, 0 or more (0: off)") from None
    if not 0 <= value < float("inf"):
        raise ValueError("expected a number of seconds, 0 or more (0: off)")
    return value


def _extractor_timeout(text: str) -> float:
    # The facade's bound (memory.py): checked here so a bad value stops the start.
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("expected a number of seconds greater than 0, under 1000000") from None
    if not 0 < value < 1e6:
        raise ValueError("expected a number of seconds greater than 0, under 1000000")
    return value


def _turn_value(option: TurnOption) -> Callable[[str], int | float]:
    """A parser for one of the automatic path's settings, its range from TURN_OPTIONS."""

    def parse(text: str) -> int | float:
        try:
            return option.check(option.kind(text.strip()))
        except (ValueError, InvalidParameterError):
            raise ValueError(f"expected {option.accepted()}") from None

    return parse


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in choices:
            raise ValueError(f"expected one of: {', '.join(choices)}")
        return value

    return parse


def parse_bool(text: str) -> bool:
    """A boolean from an environment variable: 1/true/yes/on or 0/false/no/off."""
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"expected one of: {', '.join(_TRUE + _FALSE)}")


def _path(text: str) -> Path:
    if not text.strip():
        raise ValueError("expected a path")
    return Path(text).expanduser().resolve()


def _data_dir(text: str) -> Path:
    path = _path(text)
    if path.exists() and not path.is_dir():
        raise ValueError("expected a directory, but it is a file")
    return path


def _directory(text: str) -> Path:
    path = _path(text)
    if not path.is_dir():
        raise ValueError(
            "expected a directory, but it is a file"
            if path.exists()
            else "expected an existing directory"
        )
    return path


def _database_url(text: str) -> str:
    url = text.strip()
    if not url.startswith(("postgresql://", "postgres://")):
        raise ValueError("expected a PostgreSQL URL: postgresql://user@host:port/database")
    return url


def _namespaces(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise ValueError("expected namespace names separated by commas")
    for name in names:
        _namespace(name)
    return names


#: Buckets a namespace range splits namespaces into when an operator names none.
DEFAULT_BUCKETS = 100


def namespace_bucket(namespace: str, buckets: int = DEFAULT_BUCKETS) -> int:
    """memcore's bucket of ``namespace`` among ``buckets``, as every node computes it for
    ``--namespace-range`` (the core's, rust/memcore/src/pg/placement.rs; known values
    pinned in tests/test_settings.py)."""
    return facade.namespace_bucket(namespace, buckets)


@dataclass(frozen=True, slots=True)
class NamespaceRange:
    """Buckets ``lo`` to ``hi`` (inclusive) of ``buckets``: what a node serves."""

    lo: int
    hi: int
    buckets: int

    @classmethod
    def parse(cls, text: str) -> NamespaceRange:
        """Parse ``LO-HI/BUCKETS``, e.g. ``0-49/100``; ValueError shows the form."""
        try:
            return cls(*facade.parse_namespace_range(text))
        except InvalidParameterError as exc:
            raise ValueError(str(exc).rstrip(".")) from None

    def __contains__(self, namespace: object) -> bool:
        return (
            isinstance(namespace, str)
            and self.lo <= namespace_bucket(namespace, self.buckets) <= self.hi
        )

    def __str__(self) -> str:
        return f"{self.lo}-{self.hi}/{self.buckets}"


def _namespace_range(text: str) -> str:
    return str(NamespaceRange.parse(text))


def _model(text: str) -> str | None:
    name = text.strip()
    if name.lower() in NO_MODEL:
        return None
    # Imported here: the registry is plain data, but its package is not needed to parse
    # the other settings.
    from memcore.embeddings.registry import REGISTRY

    if name not in REGISTRY:
        hint = "; a model folder goes in --model-path" if "/" in name or "\\" in name else ""
        raise ValueError(f"expected a model name ({', '.join(REGISTRY)}) or 'none'{hint}")
    return name


def _model_path(text: str) -> Path:
    path = _path(text)
    if not path.is_dir():
        raise ValueError("expected a directory holding model.onnx, tokenizer.json and config.json")
    missing = [
        f for f in ("model.onnx", "tokenizer.json", "config.json") if not (path / f).is_file()
    ]
    if missing:
        raise ValueError(f"the directory lacks {', '.join(missing)}")
    return path


def _namespace(text: str) -> str:
    name = text.strip()
    if not name or len(name) > 128 or not name.isprintable():
        raise ValueError("expected 1-128 printable characters")
    return name


def _tools(text: str) -> str:
    # Only the shape is checked here; the server checks the names against its registry.
    parts = [p.strip() for p in text.split(",")]
    if not all(parts):
        raise ValueError("expected 'core', 'all' or a comma-separated list of groups and tools")
    return ",".join(parts)


def _host(text: str) -> str:
    host = text.strip()
    if not host or any(c.isspace() for c in host):
        raise ValueError("expected a host name or IP address")
    return host


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: how to parse it, its help, and whether it is an on/off flag."""

    name: str
    parse: Callable[[str], Any]
    help: str
    metavar: str | None = None
    is_flag: bool = False

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``--cache-size``."""
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        """The environment variable, e.g. ``MEMCORE_CACHE_SIZE``."""
        return ENV_PREFIX + self.name.upper()


OPTIONS: dict[str, Option] = {
    o.name: o
    for o in (
        Option(
            "data_dir",
            _data_dir,
            "data directory (~/.local/share/memcore; with --project-root: DIR/.memcore)",
            "DIR",
        ),
        Option(
            "project_root",
            _directory,
            "local mode: the project's directory; the store goes in DIR/.memcore (unless "
            "--data-dir is given) and document paths are relative to DIR (none: global mode)",
            "DIR",
        ),
        Option(
            "database_url",
            _database_url,
            "PostgreSQL URL: serve as a node of that database; the data directory holds "
            "its replica (none: SQLite)",
            "URL",
        ),
        Option(
            "namespaces",
            _namespaces,
            "with --database-url: the namespaces this node serves, comma-separated (all)",
            "LIST",
        ),
        Option(
            "replica_rebuild",
            parse_bool,
            "with --database-url: rebuild from the database a replica that is another "
            "database's copy, holds writes the database lost, or is damaged, instead of "
            "refusing to start",
            is_flag=True,
        ),
        Option(
            "namespace_range",
            _namespace_range,
            "with --database-url, instead of --namespaces: serve the namespaces whose bucket "
            "(memcore namespace-bucket NAME) is in LO-HI of BUCKETS, e.g. 0-49/100 (all)",
            "LO-HI/BUCKETS",
        ),
        Option("model", _model, "embedding model, or 'none' for text-only (minilm)", "NAME"),
        Option(
            "model_path",
            _model_path,
            "folder with model.onnx, tokenizer.json, config.json",
            "DIR",
        ),
        Option("cache_size", _integer(0, 10_000_000), "query-embedding cache entries (1000)", "N"),
        Option("batch_size", _integer(1, 4096), "texts per embedding batch (32)", "N"),
        Option(
            "float_embeddings",
            parse_bool,
            "run the embedding model as shipped, without int8 products",
            is_flag=True,
        ),
        Option(
            "embedding_wait",
            _wait_seconds,
            "seconds a call that embeds waits for a model still loading (5)",
            "SECONDS",
        ),
        Option("timeout", _seconds, "seconds a call waits for the store to open (60)", "SECONDS"),
        Option(
            "min_seq_wait",
            _wait_seconds,
            "with --database-url: seconds a read's min_seq waits for this node to apply it (2)",
            "SECONDS",
        ),
        Option(
            "log_level", _choice(*LOG_LEVELS), "trace, debug, info, warn or error (info)", "LEVEL"
        ),
        Option("force_model", parse_bool, "on a model mismatch use the stored model", is_flag=True),
        Option("reset_memory", parse_bool, "on a model mismatch wipe the store", is_flag=True),
        Option("namespace", _namespace, "namespace of stdio calls and the CLI (default)", "NAME"),
        Option("read_only", parse_bool, "open the store read-only", is_flag=True),
        Option(
            "tools", _tools, "tool profile: core, all, or groups/tools, comma-separated", "LIST"
        ),
        Option("transport", _choice("stdio", "http"), "stdio or http (stdio)", "NAME"),
        Option("host", _host, "HTTP bind address (127.0.0.1)", "HOST"),
        Option("port", _integer(1, 65535), "HTTP port (8765)", "PORT"),
        Option("auth_file", _path, "bearer-token file for HTTP (see memcore auth)", "FILE"),
        Option("allow_no_auth", parse_bool, "serve HTTP off loopback without tokens", is_flag=True),
        Option("max_request_bytes", _integer(1024, 1 << 30), "largest request body (1 MiB)", "N"),
        Option("max_items", _integer(1, 1_000_000), "most items in any argument list (1000)", "N"),
        Option(
            "max_sessions_per_token",
            _integer(1, 100_000),
            "open HTTP sessions per token; the oldest idle one is ended for a new one (64)",
            "N",
        ),
        Option(
            "session_idle_timeout", _seconds, "seconds an idle HTTP session lives (600)", "SECONDS"
        ),
        Option("rate_limit", _rate, "HTTP requests per second per token, 0 for none (100)", "N"),
        Option("rate_burst", _integer(1, 1_000_000), "HTTP requests per token at once (200)", "N"),
        *(
            Option(o.name, _turn_value(o), o.help, "N" if o.kind is int else "NUMBER")
            for o in TURN_OPTIONS
        ),
        Option(
            "fact_extractor",
            load_extractor,
            "module:function replacing the rules that capture facts in memory_after_turn "
            "(none: the rules)",
            "MODULE:FUNCTION",
        ),
        Option(
            "fact_extractor_timeout",
            _extractor_timeout,
            "seconds --fact-extractor may take per turn before the rules capture instead (10)",
            "SECONDS",
        ),
        Option(
            "maintenance_interval",
            _interval,
            "seconds between maintenance runs in the server, 0 for none: clients call "
            "memory_run_maintenance (0)",
            "SECONDS",
        ),
    )
}

#: What commands that open a store use.
STORE_OPTIONS = (
    "data_dir",
    "project_root",
    "database_url",
    "namespaces",
    "namespace_range",
    "replica_rebuild",
    "model",
    "model_path",
    "cache_size",
    "batch_size",
    "float_embeddings",
    "embedding_wait",
    "timeout",
    "log_level",
    "force_model",
    "reset_memory",
    "namespace",
    "read_only",
    *TURN_SETTING_NAMES,
)
#: What the server uses: everything.
SERVER_OPTIONS = tuple(OPTIONS)


def add_options(parser: argparse.ArgumentParser, names: Iterable[str] = SERVER_OPTIONS) -> None:
    """Add the flags of the named settings to ``parser`` (values stay raw until resolved)."""
    group = parser.add_argument_group("settings (flag > MEMCORE_* variable > default)")
    for name in names:
        option = OPTIONS[name]
        help_text = f"{option.help} [{option.env}]"
        if option.is_flag:
            group.add_argument(
                option.flag,
                dest=name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=help_text,
            )
        else:
            group.add_argument(
                option.flag, dest=name, default=None, metavar=option.metavar, help=help_text
            )


def resolve(
    args: argparse.Namespace | Mapping[str, Any],
    names: Iterable[str] = SERVER_OPTIONS,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Settings from parsed flags, then the environment, then the defaults.

    Args:
        args: Parsed flags (raw strings, or booleans for on/off flags); None means unset.
        names: The settings to read; the others keep their defaults, so a command is never
            refused over a variable it does not use.
        env: The environment (default ``os.environ``).

    Raises:
        SettingsError: A value is invalid, or two settings contradict each other.
    """
    given = vars(args) if isinstance(args, argparse.Namespace) else dict(args)
    environ = os.environ if env is None else env
    values: dict[str, Any] = {}
    for name in names:
        option = OPTIONS[name]
        raw = given.get(name)
        if raw is not None:
            values[name] = raw if isinstance(raw, bool) else _parse(option, raw, option.flag)
        elif (text := environ.get(option.env)) is not None and text.strip():
            values[name] = _parse(option, text, option.env)
    if values.get("database_url") is not None and "data_dir" in values:
        # A data directory named explicitly is the node's replica; otherwise Memory keys
        # the default by the database's identity, so no two databases share one.
        values["replica_dir"] = values["data_dir"]
    root = values.get("project_root")
    if root is not None and given.get("data_dir") is None:
        # As Memory(mode="local") does: the project's store, unless --data-dir names
        # another (MEMCORE_DATA_DIR is the global store's, so the project root wins).
        values["data_dir"] = root / LOCAL_DIR_NAME
    settings = Settings(**values)
    _check_combinations(settings)
    return settings


def _parse(option: Option, raw: Any, source: str) -> Any:
    try:
        return option.parse(str(raw))
    except ValueError as exc:
        raise SettingsError(f"Invalid {source} {str(raw)!r}: {exc}.") from None


def _check_combinations(settings: Settings) -> None:
    _check_turn_settings(settings)
    if settings.maintenance_interval > 0 and settings.read_only:
        raise SettingsError(
            "--maintenance-interval changes the store; drop --read-only or set it to 0."
        )
    if settings.force_model and settings.reset_memory:
        raise SettingsError("Use --force-model or --reset-memory, not both.")
    if settings.read_only and settings.reset_memory:
        raise SettingsError("--reset-memory needs write access; drop --read-only.")
    if settings.replica_rebuild and settings.database_url is None:
        raise SettingsError(
            "--replica-rebuild rebuilds a PostgreSQL node's replica; pass --database-url too."
        )
    if settings.namespaces is not None and settings.database_url is None:
        raise SettingsError(
            "--namespaces selects what a PostgreSQL node serves; pass --database-url too."
        )
    if settings.namespace_range is not None and settings.database_url is None:
        raise SettingsError(
            "--namespace-range selects what a PostgreSQL node serves; pass --database-url too."
        )
    if settings.namespaces is not None and settings.namespace_range is not None:
        raise SettingsError(
            "Use --namespaces or --namespace-range, not both: one rule decides what a node "
            "serves, so the proxy's routing can match it."
        )
    # Over stdio and in the CLI every call uses --namespace; over HTTP tokens name theirs.
    if (
        settings.namespaces is not None
        and settings.transport == "stdio"
        and settings.namespace not in settings.namespaces
    ):
        raise SettingsError(
            f"--namespace {settings.namespace!r} is not among --namespaces; add it or pick "
            "one of them."
        )
    if settings.namespace_range is not None and settings.transport == "stdio":
        served = NamespaceRange.parse(settings.namespace_range)
        if settings.namespace not in served:
            bucket = namespace_bucket(settings.namespace, served.buckets)
            raise SettingsError(
                f"--namespace {settings.namespace!r} is in bucket {bucket}, outside "
                f"--namespace-range {served}; pick a namespace of the range or widen it."
            )
    if settings.read_only and settings.database_url is not None:
        raise SettingsError(
            "A PostgreSQL node always writes its replica (and never waits for a writer); "
            "drop --read-only or --database-url."
        )
    if (
        settings.transport == "http"
        and settings.auth_file is None
        and not settings.allow_no_auth
        and not is_loopback(settings.host)
    ):
        raise SettingsError(
            f"Refusing to serve HTTP on {settings.host} without bearer tokens: pass --auth-file "
            "(create tokens with `memcore auth add-token`), bind to 127.0.0.1, or pass "
            "--allow-no-auth if something else authenticates requests."
        )


def _check_turn_settings(settings: Settings) -> None:
    """The rules between the automatic path's settings (TurnSettings.from_values)."""
    try:
        TurnSettings.from_values(settings.turn_settings())
    except InvalidParameterError as exc:
        details = getattr(exc, "details", None)
        name = str(details.get("field", "")) if isinstance(details, dict) else ""
        if name == "l2_retention_days":
            raise SettingsError(
                f"--l2-retention-days ({settings.l2_retention_days}) must be at least "
                f"--l1-retention-days ({settings.l1_retention_days}): facts about this week "
                "must outlive facts about today; raise the first or lower the second."
            ) from None
        flag = OPTIONS[name].flag if name in OPTIONS else "a lifecycle setting"
        raise SettingsError(f"Invalid {flag}: {exc}") from None


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def describe(settings: Settings) -> dict[str, Any]:
    """The settings as plain values, for a start-up log line."""
    out: dict[str, Any] = {}
    for f in fields(settings):
        value = getattr(settings, f.name)
        out[f.name] = str(value) if isinstance(value, Path | ExtractorSpec) else value
    if settings.database_url is not None:
        out["database_url"] = redact_password(settings.database_url)
    return out


def redact_password(url: str) -> str:
    """``url`` with the password of its user part replaced by ``***`` (for logs)."""
    return re.sub(r"^([a-z]+://[^:/@]*):[^@]*@", r"\1:***@", url)
