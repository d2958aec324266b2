"""tracebot's one configuration object, read from the environment and ``TRACEBOT_CONFIG`` in one place.

Every setting has an environment variable (README "Configuration"); ``TRACEBOT_CONFIG`` may point to a
YAML file with the structured parts: ``admins``, ``users`` (Slack user id -> cluster user),
``confidence_threshold``, ``channels`` (the channel policy: where ``/trace`` runs and where tracebot
answers unprompted) and one section per plugin (``slurm:``, ``sagemaker:``, ``pyspy:``, ``cli:``).
A plugin sees only its own section (:meth:`Config.plugin_settings`), never the Slack secrets.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_THRESHOLD = 75.0  # a match scoring at least this is posted unprompted in a channel
_FILE_KEYS = {"admins", "users", "confidence_threshold", "channels"}
_POLICY_KEYS = ("trace", "auto_reply")


def is_direct(channel: str | None) -> bool:
    """A DM with tracebot (Slack's conversation ids for DMs start with D)."""
    return bool(channel) and str(channel).startswith("D")


@dataclass(frozen=True)
class ChannelPolicy:
    """Where ``/trace`` (and ``@tracebot <command>``) may run and where tracebot answers a paste nobody
    addressed to it. ``None`` means every channel (the default). A DM with tracebot is always allowed:
    nobody else reads it. Mentions and the message shortcut are always answered (someone asked)."""

    trace: frozenset[str] | None = None
    auto_reply: frozenset[str] | None = None

    def may_trace(self, channel: str | None) -> bool:
        return self.trace is None or not channel or is_direct(channel) or channel in self.trace

    def may_auto_reply(self, channel: str) -> bool:
        return self.auto_reply is None or channel in self.auto_reply

    @classmethod
    def from_yaml(cls, data: object) -> ChannelPolicy:
        if data is None:
            return cls()
        if not isinstance(data, dict) or set(data) - set(_POLICY_KEYS):
            raise ValueError(f"channels: must be a mapping with {' and/or '.join(_POLICY_KEYS)} (lists of channel ids)")
        lists: dict[str, frozenset[str] | None] = {}
        for key in _POLICY_KEYS:
            value = data.get(key)
            if value is None or value == "*":
                lists[key] = None
            elif isinstance(value, list) and all(isinstance(c, str) and c.strip() for c in value):
                lists[key] = frozenset(c.strip() for c in value)
            else:
                raise ValueError(f"channels.{key} must be a list of channel ids (C…/G…) or \"*\", got {value!r:.80}")
        return cls(**lists)


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    """A positive, finite number from the environment (the default when unset or empty)."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    if not 0 < value < math.inf:  # also refuses nan
        raise ValueError(f"{name} must be a positive number, got {raw!r}")
    return value


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """A whole number of at least 1 (threads, queue places, a burst): ``0.5`` would otherwise be cut to 0
    (no worker: nothing answered; no queue place: every paste refused as "busy")."""
    value = _number(env, name, default)
    if value != int(value):
        raise ValueError(f"{name} must be a whole number of at least 1, got {env[name].strip()!r}")
    return int(value)


def threshold(raw: object, where: str) -> float:
    """A confidence threshold: a number from 0 to 100 (a match's score is on that scale)."""
    try:
        if isinstance(raw, bool):  # YAML's "yes", "on", "true" would otherwise read as a threshold of 1
            raise TypeError(raw)
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where} must be a number from 0 to 100, got {raw!r}") from exc
    if not 0.0 <= value <= 100.0:  # also refuses nan
        raise ValueError(f"{where} must be a number from 0 to 100, got {raw!r}")
    return value


ON_WORDS = ("on", "true", "yes", "1")
OFF_WORDS = ("off", "false", "no", "0")
# Switches read where they act, and checked by Config.from_env so that every command refuses a bad word
MODEL_ENV = "TRACEBOT_MODEL"  # the ranking model (tracebot.matcher)
TRAIN_HELPER_ENV = "TRACEBOT_TRAIN_HELPER"  # train the model in a second process (tracebot.matcher.trainer)
ENTRY_POINTS_ENV = "TRACEBOT_LOAD_ENTRYPOINTS"  # third-party /trace plugins (tracebot.service.plugin_host)


def on_off(raw: str, where: str) -> bool:
    """A switch, as every on/off setting is written: on/true/yes/1 or off/false/no/0, in any case. Any
    other word is refused: reading it as "on" left ``TRACEBOT_MODEL=off`` on without a word."""
    word = raw.strip().lower()
    if word in ON_WORDS:
        return True
    if word in OFF_WORDS:
        return False
    raise ValueError(f"{where} must be on or off (also true/false, yes/no, 1/0), got {raw.strip()[:20]!r}")


@overload
def env_switch(name: str, default: bool, env: Mapping[str, str] | None = None) -> bool: ...
@overload
def env_switch(name: str, default: None, env: Mapping[str, str] | None = None) -> bool | None: ...
def env_switch(name: str, default: bool | None, env: Mapping[str, str] | None = None) -> bool | None:
    """The on/off setting ``name`` from the environment (``default`` when unset or empty: ``None`` for a
    switch whose unset state means "decide for me", as :data:`TRAIN_HELPER_ENV`'s)."""
    raw = ((os.environ if env is None else env).get(name) or "").strip()
    return on_off(raw, name) if raw else default


def _scalar(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip() != ""


def _admins(raw: object) -> set[str]:
    """``admins:``, a list of Slack user ids. One id written without brackets would otherwise be read
    letter by letter (``U``, ``0``, ``A``, …): no admin at all, and no word of why."""
    if raw is None:
        return set()
    if not isinstance(raw, list) or not all(_scalar(u) for u in raw):
        raise ValueError(f"admins: must be a list of Slack user ids ([U0ADMIN, …]), got {raw!r:.80}")
    return {str(u).strip() for u in raw}


def _users(raw: object) -> dict[str, str]:
    """``users:``, a mapping of Slack user id to one cluster user name."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(_scalar(k) and _scalar(v) for k, v in raw.items()):
        raise ValueError(f"users: must map Slack user ids to cluster user names ({{U0ALICE: alice}}), got {raw!r:.80}")
    return {str(k).strip(): str(v).strip() for k, v in raw.items()}


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(env: Mapping[str, str], default: str) -> str:
    """``TRACEBOT_LOG_LEVEL`` by name: refused here, with the names, rather than by logging's
    ``ValueError: Unknown level`` traceback once ``serve`` or ``run`` configures its log."""
    raw = (env.get("TRACEBOT_LOG_LEVEL") or "").strip().upper()
    if not raw:
        return default
    if raw not in LOG_LEVELS:
        raise ValueError(f"TRACEBOT_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {raw.lower()!r}")
    return raw


def _megabytes(env: Mapping[str, str], name: str, default_bytes: int) -> int:
    return int(_number(env, name, default_bytes / (1 << 20)) * (1 << 20))


@dataclass
class Config:
    knowledge_dir: Path = field(default_factory=lambda: REPO_ROOT / "knowledge")
    db_path: Path = field(default_factory=lambda: REPO_ROOT / "var" / "tracebot.sqlite3")
    confidence_threshold: float = DEFAULT_THRESHOLD
    # Slack (only read from the environment; never logged, never posted, never given to plugins)
    slack_bot_token: str | None = None
    slack_signing_secret: str | None = None
    slack_app_token: str | None = None
    slack_api_url: str | None = None  # e.g. http://127.0.0.1:PORT/api/ for the fake Slack in tests
    # /trace access control
    admins: set[str] = field(default_factory=set)  # Slack user ids
    user_map: dict[str, str] = field(default_factory=dict)  # Slack user id -> cluster user name
    extra: dict[str, Any] = field(default_factory=dict)  # plugin sections from the YAML file, by name
    channels: ChannelPolicy = field(default_factory=ChannelPolicy)
    # How the bot runs
    repeat_window_s: float = 600.0  # the same error again in a thread within this gets a pointer
    max_file_bytes: int = 50 << 20  # largest attachment downloaded and read
    # A .gz attachment is unpacked up to this much (a gzip bomb of zeros inflates 300-fold)...
    max_inflated_bytes: int = 256 << 20
    # ... and all of one message's files together up to this much, within message_budget_s.
    max_message_inflated_bytes: int = 512 << 20
    message_budget_s: float = 60.0
    channel_rate: float = 1.0  # messages per second per channel (Slack allows about one)
    channel_burst: int = 3
    job_workers: int = 4  # threads answering messages
    trace_workers: int = 4  # threads running /trace commands
    max_pending: int = 500  # queued jobs per pool before tracebot answers "busy"
    max_pending_per_channel: int = 100  # queued answers in one channel before it sheds that channel's
    log_level: str = "INFO"
    drain_s: float = 60.0  # a stopping bot posts its queued answers this long (systemd's stop timeout: 90 s)
    replay_max_age_s: float = 3600.0  # at start, accepted work a dead process left is answered up to this old

    @property
    def has_slack(self) -> bool:
        return bool(self.slack_bot_token and (self.slack_app_token or self.slack_signing_secret))

    def secrets(self) -> list[str]:
        """The values that must never appear in anything tracebot posts, prints or logs."""
        return [s for s in (self.slack_bot_token, self.slack_signing_secret, self.slack_app_token) if s]

    def plugin_settings(self, name: str) -> dict[str, Any]:
        """The ``name:`` section of TRACEBOT_CONFIG (empty when absent or not a mapping)."""
        section = self.extra.get(name)
        return dict(section) if isinstance(section, dict) else {}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        env = os.environ if environ is None else environ
        cfg = cls()
        if env.get("TRACEBOT_KNOWLEDGE"):
            cfg.knowledge_dir = Path(env["TRACEBOT_KNOWLEDGE"])
        if env.get("TRACEBOT_DB"):
            cfg.db_path = Path(env["TRACEBOT_DB"])
        if (env.get("TRACEBOT_THRESHOLD") or "").strip():
            cfg.confidence_threshold = threshold(env["TRACEBOT_THRESHOLD"].strip(), "TRACEBOT_THRESHOLD")
        cfg.slack_bot_token = env.get("SLACK_BOT_TOKEN") or None
        cfg.slack_signing_secret = env.get("SLACK_SIGNING_SECRET") or None
        cfg.slack_app_token = env.get("SLACK_APP_TOKEN") or None
        cfg.slack_api_url = env.get("SLACK_API_URL") or None
        if env.get("TRACEBOT_ADMINS"):
            cfg.admins = {u.strip() for u in env["TRACEBOT_ADMINS"].split(",") if u.strip()}
        cfg.repeat_window_s = _number(env, "TRACEBOT_REPEAT_WINDOW_S", cfg.repeat_window_s)
        cfg.max_file_bytes = _megabytes(env, "TRACEBOT_MAX_FILE_MB", cfg.max_file_bytes)
        cfg.max_inflated_bytes = _megabytes(env, "TRACEBOT_MAX_INFLATED_MB", cfg.max_inflated_bytes)
        cfg.max_message_inflated_bytes = _megabytes(
            env, "TRACEBOT_MAX_MESSAGE_INFLATED_MB", cfg.max_message_inflated_bytes
        )
        cfg.message_budget_s = _number(env, "TRACEBOT_MESSAGE_BUDGET_S", cfg.message_budget_s)
        cfg.channel_rate = _number(env, "TRACEBOT_CHANNEL_RATE", cfg.channel_rate)
        cfg.channel_burst = _count(env, "TRACEBOT_CHANNEL_BURST", cfg.channel_burst)
        cfg.job_workers = _count(env, "TRACEBOT_JOB_WORKERS", cfg.job_workers)
        cfg.trace_workers = _count(env, "TRACEBOT_TRACE_WORKERS", cfg.trace_workers)
        cfg.max_pending = _count(env, "TRACEBOT_MAX_PENDING", cfg.max_pending)
        cfg.max_pending_per_channel = _count(env, "TRACEBOT_MAX_PENDING_PER_CHANNEL", cfg.max_pending_per_channel)
        cfg.drain_s = _number(env, "TRACEBOT_DRAIN_S", cfg.drain_s)
        cfg.replay_max_age_s = _number(env, "TRACEBOT_REPLAY_MAX_AGE_S", cfg.replay_max_age_s)
        cfg.log_level = _log_level(env, cfg.log_level)
        for switch in (MODEL_ENV, ENTRY_POINTS_ENV, TRAIN_HELPER_ENV):  # read where they act; a bad word is
            env_switch(switch, True, env)  # refused here, before anything starts
        path = env.get("TRACEBOT_CONFIG")
        if path:
            cfg._merge_file(Path(path))
        return cfg

    def _merge_file(self, path: Path) -> None:
        import yaml  # here: a command with no config file never imports PyYAML (~0.015 s of a warm start)

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"cannot read TRACEBOT_CONFIG {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"TRACEBOT_CONFIG {path}: top level must be a mapping")
        try:
            self.admins |= _admins(data.get("admins"))
            self.user_map.update(_users(data.get("users")))
        except ValueError as exc:
            raise ValueError(f"TRACEBOT_CONFIG {path}: {exc}") from exc
        try:
            self.channels = ChannelPolicy.from_yaml(data.get("channels"))
        except ValueError as exc:
            raise ValueError(f"TRACEBOT_CONFIG {path}: {exc}") from exc
        if "confidence_threshold" in data:
            self.confidence_threshold = threshold(
                data["confidence_threshold"], f"TRACEBOT_CONFIG {path}: confidence_threshold"
            )
        self.extra = {k: v for k, v in data.items() if k not in _FILE_KEYS}
