"""The HTML view of Block Kit payloads: Slack's formatting, and nothing a user wrote becomes markup."""

from __future__ import annotations

from tracebot.render import html, slack


def test_mrkdwn_bold_code_links_and_code_blocks_become_their_html():
    out = html.mrkdwn("*Fix*\n1. run `nvidia-smi`\nsee <https://example.org/a?b=1&amp;c=2|the docs>\n```a\nb```")
    assert '<div class="ln"><b>Fix</b></div>' in out
    assert "<code>nvidia-smi</code>" in out
    assert '<a href="https://example.org/a?b=1&amp;c=2">the docs</a>' in out
    assert "<pre>a\nb</pre>" in out


def test_user_text_escaped_for_slack_is_shown_as_typed_and_never_as_markup():
    typed = '<script>alert(1)</script> & <img src=x onerror="y"> *bold* `code`'
    text, blocks = slack.section(slack.escape(typed))["text"]["text"], [slack.section(slack.code(typed))]
    out = html.mrkdwn(text) + html.page([html.Shown("tracebot", "1.1", blocks=blocks)])
    assert "<script>" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img" in out


def test_a_link_that_is_not_http_is_shown_as_text():
    out = html.mrkdwn("<javascript:alert(1)|click me>")
    assert "href" not in out and "click me" in out


def test_a_persons_paste_is_plain_text_and_attributes_cannot_be_broken_out_of():
    page = html.page([html.Shown('U1"><b>x', '1"2', "*not bold* <b>", plain=True,
                                 files=[html.FileCard('a"<b>.txt', "<i>t</i>", 2048)])])
    assert "<b>x" not in page and "*not bold* &lt;b&gt;" in page and "&lt;i&gt;t&lt;/i&gt;" in page
    assert 'data-ts="1&quot;2"' in page and "2 KB" in page


def test_buttons_context_fields_and_dividers_are_drawn():
    blocks = [
        {"type": "section", "text": {"type": "mrkdwn", "text": "hi"},
         "fields": [{"type": "mrkdwn", "text": "*a*"}, {"type": "plain_text", "text": "*b*"}]},
        {"type": "divider"},
        slack.context("`x` · score 9"),
        {"type": "actions", "elements": [slack.button("Helpful", "a", "1", "primary"), slack.button("No", "b", "1")]},
    ]
    page = html.page([html.Shown("tracebot", "1.1", blocks=blocks, only_visible_to="U1")])
    assert '<div class="field"><div class="ln"><b>a</b></div></div>' in page and "*b*" in page
    assert '<span class="btn primary">Helpful</span><span class="btn">No</span>' in page
    assert 'class="block context"' in page and "Only visible to U1" in page and "<hr" in page


def test_console_html_writes_the_conversation_with_answers_ephemerals_and_files(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    log = tmp_path / "rank3.log"
    log.write_text("step 1 loss 2.0\n" * 20 + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                   "20.00 MiB. GPU 3 has a total capacity of 79.15 GiB of which 3.06 MiB is free.\n")
    script = f"<b>paste</b> below\n---\n/attach {log}\nhere\n---\n/click why\n/trace nope\n"
    page = tmp_path / "chat.html"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TRACEBOT_"))}
    done = subprocess.run(
        [sys.executable, "-m", "tracebot.cli", "console", "--db", ":memory:", "--html", str(page)],
        input=script, capture_output=True, text=True, timeout=180, env={**env, "TRACEBOT_LOAD_ENTRYPOINTS": "0"},
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    shown = page.read_text(encoding="utf-8")
    assert html.CSP_META in shown and "&lt;b&gt;paste&lt;/b&gt; below" in shown
    assert '<div class="file">' in shown and "rank3.log" in shown, "the attached log as a file card"
    assert "CUDA out of memory" in shown and '<span class="btn primary">Helpful</span>' in shown
    assert shown.count("Only visible to U0CONSOLE") == 2, "Why & all steps, and the unknown command"
    assert 'data-block-id="tracebot_fix"' in shown
