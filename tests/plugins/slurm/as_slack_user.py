"""Run one /trace command the way a Slack user reaches it, and print the Result as JSON.

``python as_slack_user.py U-ALICE job 123``: the caller is built from TRACEBOT_CONFIG exactly as the
service builds it for a Slack user id (``users:`` mapping, ``admins:``), then the command goes through
the same router. The security tests run it as the ``tracebot`` service user.
"""

from __future__ import annotations

import json
import sys

from tracebot.config import Config
from tracebot.plugin_api import Caller
from tracebot.service.plugin_host import default_host
from tracebot.service.router import Router


def main(user: str, words: list[str]) -> int:
    config = Config.from_env()
    caller = Caller(slack_user=user, cluster_user=config.user_map.get(user), is_admin=user in config.admins)
    result = Router(default_host(), config).run_text(" ".join(words), caller)
    print(json.dumps(result.to_dict(), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2:]))
