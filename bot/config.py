"""Configuration from the environment (and an optional YAML file for mappings). Secrets never leave here.

Every setting has an environment variable; ``TRACEBOT_CONFIG`` may point to a YAML file with the
structured parts (user mapping, admins). See README "Configuration".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc


@dataclass
class Config:
    knowledge_dir: Path = field(default_factory=lambda: REPO_ROOT / "knowledge")
    db_path: Path = field(default_factory=lambda: REPO_ROOT / "var" / "tracebot.sqlite3")
    confidence_threshold: float = 75.0
    # Slack (only read from the environment; never logged, never posted)
    slack_bot_token: str | None = None
    slack_signing_secret: str | None = None
    slack_app_token: str | None = None
    slack_api_url: str | None = None  # e.g. http://127.0.0.1:PORT/api/ for the fake Slack in tests
    # /trace access control
    admins: set[str] = field(default_factory=set)  # Slack user ids
    user_map: dict[str, str] = field(default_factory=dict)  # Slack user id -> cluster user name
    extra: dict[str, Any] = field(default_factory=dict)  # plugin sections from the YAML file, by name

    @property
    def has_slack(self) -> bool:
        return bool(self.slack_bot_token and (self.slack_app_token or self.slack_signing_secret))

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Config:
        env = os.environ if environ is None else environ
        cfg = cls()
        if env.get("TRACEBOT_KNOWLEDGE"):
            cfg.knowledge_dir = Path(env["TRACEBOT_KNOWLEDGE"])
        if env.get("TRACEBOT_DB"):
            cfg.db_path = Path(env["TRACEBOT_DB"])
        if env.get("TRACEBOT_THRESHOLD"):
            cfg.confidence_threshold = _env_float("TRACEBOT_THRESHOLD", cfg.confidence_threshold)
        cfg.slack_bot_token = env.get("SLACK_BOT_TOKEN") or None
        cfg.slack_signing_secret = env.get("SLACK_SIGNING_SECRET") or None
        cfg.slack_app_token = env.get("SLACK_APP_TOKEN") or None
        cfg.slack_api_url = env.get("SLACK_API_URL") or None
        if env.get("TRACEBOT_ADMINS"):
            cfg.admins = {u.strip() for u in env["TRACEBOT_ADMINS"].split(",") if u.strip()}
        path = env.get("TRACEBOT_CONFIG")
        if path:
            cfg._merge_file(Path(path))
        return cfg

    def _merge_file(self, path: Path) -> None:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"cannot read TRACEBOT_CONFIG {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"TRACEBOT_CONFIG {path}: top level must be a mapping")
        self.admins |= {str(u) for u in data.get("admins", []) or []}
        self.user_map.update({str(k): str(v) for k, v in (data.get("users", {}) or {}).items()})
        if "confidence_threshold" in data:
            self.confidence_threshold = float(data["confidence_threshold"])
        self.extra = {k: v for k, v in data.items() if k not in {"admins", "users", "confidence_threshold"}}
