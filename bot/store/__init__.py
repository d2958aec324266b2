"""The SQLite store (sqlite-utils): plain Python, no Slack."""

from bot.store.db import ChannelSettings, DiagnosisRecord, Store, StoreError

__all__ = ["ChannelSettings", "DiagnosisRecord", "Store", "StoreError"]
