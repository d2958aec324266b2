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
    assert 'data-ts="1&quot;2"' in page and "2.0 KB" in page


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
