"""Settings: a threshold that is not a score is refused with a message that says where it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracebot.config import DEFAULT_THRESHOLD, Config


@pytest.mark.parametrize("raw", ["high", "-1", "100.5", "nan", "inf"])
def test_threshold_from_the_environment_must_be_a_score(raw: str) -> None:
    with pytest.raises(ValueError, match=r"TRACEBOT_THRESHOLD must be a number from 0 to 100"):
        Config.from_env({"TRACEBOT_THRESHOLD": raw})


def test_threshold_from_the_environment_is_read() -> None:
    assert Config.from_env({"TRACEBOT_THRESHOLD": " 82.5 "}).confidence_threshold == 82.5
    assert Config.from_env({"TRACEBOT_THRESHOLD": ""}).confidence_threshold == DEFAULT_THRESHOLD


@pytest.mark.parametrize("value", ["'high'", "[80]", "-5", "101", "yes", "true"])
def test_threshold_in_the_config_file_names_the_file(tmp_path: Path, value: str) -> None:
    path = tmp_path / "tracebot.yaml"
    path.write_text(f"confidence_threshold: {value}\n", encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        Config.from_env({"TRACEBOT_CONFIG": str(path)})
    assert str(path) in str(caught.value) and "confidence_threshold" in str(caught.value)


def test_threshold_in_the_config_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "tracebot.yaml"
    path.write_text("confidence_threshold: 90\n", encoding="utf-8")
    assert Config.from_env({"TRACEBOT_CONFIG": str(path)}).confidence_threshold == 90.0


@pytest.mark.parametrize("raw", ["0", "-2", "nan", "inf", "fast"])
def test_a_rate_or_size_must_be_a_positive_number(raw: str) -> None:
    with pytest.raises(ValueError, match=r"TRACEBOT_CHANNEL_RATE must be a"):
        Config.from_env({"TRACEBOT_CHANNEL_RATE": raw})


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("admins: U0ADMIN\n", "admins"),  # one id, not a list: read as the ids "U", "0", "A", ... before
        ("admins: {U0ADMIN: yes}\n", "admins"),
        ("users: [alice]\n", "users"),  # a traceback at start before
        ("users: alice\n", "users"),
        ("users: {U0ALICE: [alice, bob]}\n", "users"),
    ],
)
def test_admins_and_users_of_the_wrong_shape_are_refused_with_the_file_and_key(
    tmp_path: Path, text: str, key: str
) -> None:
    path = tmp_path / "tracebot.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        Config.from_env({"TRACEBOT_CONFIG": str(path)})
    assert str(path) in str(caught.value) and f"{key}:" in str(caught.value)


def test_admins_and_users_of_the_documented_shape_are_read(tmp_path: Path) -> None:
    path = tmp_path / "tracebot.yaml"
    path.write_text("admins: [U0ADMIN]\nusers: {U0ALICE: alice}\n", encoding="utf-8")
    cfg = Config.from_env({"TRACEBOT_CONFIG": str(path), "TRACEBOT_ADMINS": "U0OTHER"})
    assert cfg.admins == {"U0ADMIN", "U0OTHER"} and cfg.user_map == {"U0ALICE": "alice"}


@pytest.mark.parametrize("raw", ["verbose", "5", "info,debug"])
def test_an_unknown_log_level_is_refused_at_start(raw: str) -> None:
    # before: accepted here, then `tracebot serve` ended in logging's traceback ("Unknown level")
    with pytest.raises(ValueError, match=r"TRACEBOT_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR"):
        Config.from_env({"TRACEBOT_LOG_LEVEL": raw})


def test_a_log_level_is_read_in_any_case() -> None:
    assert Config.from_env({"TRACEBOT_LOG_LEVEL": " debug "}).log_level == "DEBUG"


@pytest.mark.parametrize(
    "name",
    ["TRACEBOT_JOB_WORKERS", "TRACEBOT_TRACE_WORKERS", "TRACEBOT_MAX_PENDING", "TRACEBOT_MAX_PENDING_PER_CHANNEL",
     "TRACEBOT_CHANNEL_BURST"],
)
@pytest.mark.parametrize("raw", ["0.5", "2.5"])
def test_a_count_must_be_a_whole_number(name: str, raw: str) -> None:
    # before: 0.5 became 0 workers (the console answered nothing) or a queue of 0 (every paste "busy")
    with pytest.raises(ValueError, match=rf"{name} must be a whole number of at least 1, got '{raw}'"):
        Config.from_env({name: raw})


def test_a_count_is_read() -> None:
    assert Config.from_env({"TRACEBOT_JOB_WORKERS": "8", "TRACEBOT_MAX_PENDING": " 20 "}).job_workers == 8


def test_an_on_off_setting_reads_the_usual_words_and_refuses_any_other() -> None:
    from tracebot.config import env_switch

    for word, value in (("on", True), ("TRUE", True), (" yes ", True), ("1", True), ("Off", False),
                        ("false", False), ("no", False), ("0", False)):
        assert env_switch("TRACEBOT_MODEL", not value, {"TRACEBOT_MODEL": word}) is value, word
    assert env_switch("TRACEBOT_MODEL", True, {"TRACEBOT_MODEL": ""}) is True
    for name in ("TRACEBOT_MODEL", "TRACEBOT_LOAD_ENTRYPOINTS"):
        with pytest.raises(ValueError, match=rf"{name} must be on or off .*got 'disabled'"):
            Config.from_env({name: "disabled"})
