"""The SQLite store (sqlite-utils): plain Python, no Slack."""

from tracebot.store.db import ChannelSettings, DiagnosisRecord, Store, StoreError, Work

__all__ = ["ChannelSettings", "DiagnosisRecord", "Store", "StoreError", "Work"]
