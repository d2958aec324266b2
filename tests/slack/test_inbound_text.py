"""What Slack sends back to what the user pasted: Slack's own markup undone, the user's text kept."""

from __future__ import annotations

from tracebot.markup import plain_text


def test_slack_links_read_as_the_text_the_user_pasted():
    # Slack links file names whose suffix is a country's domain, and bare addresses
    slack = 'File "/opt/<http://train.py|train.py>", line 12\nOSError: <http://libnccl.so|libnccl.so>.2: cannot open shared object file'
    assert plain_text(slack) == 'File "/opt/train.py", line 12\nOSError: libnccl.so.2: cannot open shared object file'
    assert plain_text("see <https://pytorch.org/docs/stable/notes/cuda.html>") == "see https://pytorch.org/docs/stable/notes/cuda.html"
    assert plain_text("mail <mailto:ops@example.org|ops@example.org>") == "mail ops@example.org"


def test_channels_and_special_mentions_read_as_names_and_mentions_as_nothing():
    assert plain_text("<!here> job 123 died, see <#C0TRAIN|training>") == "@here job 123 died, see #training"
    assert plain_text("<@U0BOT> why?", strip_mentions=True) == "why?"


def test_the_users_own_angle_brackets_are_kept():
    # Slack escapes what the user typed: "&lt;" is theirs, and stays a bracket
    assert plain_text("Tried to allocate &lt;20 MiB&gt; &amp; failed <x>") == "Tried to allocate <20 MiB> & failed <x>"
    # ...even when what they typed looks like Slack's markup: only Slack's own (unescaped) brackets are
    # undone, so the order (markup first, entities after) is what this holds
    typed = "see &lt;http://train.py|train.py&gt; and &lt;#C0TRAIN|training&gt; &lt;!here&gt; &lt;mailto:a@b.c&gt;"
    assert plain_text(typed) == "see <http://train.py|train.py> and <#C0TRAIN|training> <!here> <mailto:a@b.c>"
    assert plain_text("<http://a.b|x &lt;http://c.d|y&gt;>") == "x <http://c.d|y>"  # a label's brackets are theirs
