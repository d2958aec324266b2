"""tracebot's own words in every language it answers in: button labels, headings, fixed replies, and the
labels of the values read off an error. Renderers and the service take text from here only, so a
language is added in one place. A key missing in a language falls back to English."""

from __future__ import annotations

from tracebot.notes import FORMS, read_note
from tracebot.result import Diagnosis

LANGS = ("en", "ja")

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "helpful": "Helpful",
        "not_this": "Not this",
        "why_all": "Why & all steps",
        "what_it_says": "What it says",
        "matched_line": "Matched {where}",
        "the_text": "the text",
        "reads_like": "Your message reads like “{phrase}”",
        "fix": "Fix",
        "why": "Why",
        "all_steps": "All steps",
        "evidence": "Evidence",
        "sources": "Sources",
        "source": "Source",
        "next": "Next",
        "also_matched": "Also matched",
        "other_matches": "Other matches",
        "no_other_matches": "No other entries matched.",
        "symptom": "symptom: the root cause is usually elsewhere in the log",
        "no_match": "No known error matched. Try `/trace kb <words>` to search the knowledge base.",
        "not_confident": "Nothing matched with confidence (threshold {threshold}). Closest guesses:",
        "no_error_here": "Nothing here looks like an error I know. Paste the error message or the log (or attach it) "
        "and I'll look it up, or search with `/trace kb <words>`.",
        "if_it_is": "If it is *{title}*: {step}",
        "more_steps": "{n} more steps and the cause: *Why & all steps*",
        "gone": "That answer is no longer in my records.",
        "thanks_helpful": "Thanks, noted as helpful.",
        "thanks_not_this": "Thanks. Noted as not this one: knowledge-base maintainers see it in `tracebot stats`.",
        "feedback_not_recorded": "Thanks, but I could not record that just now (my database failed); please click again later.",
        "first_failure": "First failure",
        "unknown_first_failure": "Not a known problem: everything after it in the log follows from this error.",
        "after_first_failure": "After the first failure: {cascade}.",
        "internal_doc": "internal document",
        "pointer": "Same error as above: *{title}*, see <{link}|my earlier answer>.",
        "logs_unread": "I could not read all of the attached log, so I cannot say what went wrong in it:",
        "failed": ":x: Sorry, I could not diagnose that ({error}); the error is in my log.",
        "refused": ":x: Sorry, I diagnosed this but Slack refused my answer (Slack said: {reason}); the details are in my log.",
        "unconfirmed": ":warning: I diagnosed this, but Slack did not confirm my answer ({error}). If it is not in this thread, mention me again.",
        "answer_changed": ":pencil2: The message was edited, so my answer above no longer applies, and Slack would not let me change it ({reason}). This is the answer now:",
        "shedding": ":hourglass: I'm answering too many messages right now, so I skipped this one and may skip "
        "others here for a minute or two. Post it again in a few minutes, or mention me with it.",
        "busy_click": ":hourglass: I'm too busy to answer that click right now; click it again in a minute.",
        "empty_mention": "Paste an error after mentioning me (or attach a log), or try `/trace help`.",
        # the ranks a multi-rank log's triage points at (render/slack.py triage_lead)
        "silent_one": ":mag: Rank {ranks}{more} {how}: look there first.",
        "silent_many": ":mag: Ranks {ranks}{more} {how}: look there first.",
        "silent_more": " and {n} more",
        "went_quiet.timed_out": "printed nothing while the others timed out",
        "went_quiet.stopped": "stopped printing before the others",
        "lagging": "Behind the others in the same collective: ranks {ranks}.",
        "in_frame": "in {v}",
        # values read off the error: fact.<name> for every name of tracebot.knowledge.facts.FACT_NAMES
        "fact.requested": "asked for {v}",
        "fact.gpu": "GPU {v}",
        "fact.capacity": "{v} total",
        "fact.free": "{v} free",
        "fact.in_use": "this process held {v}",
        "fact.other_pid": "PID {v}",
        "fact.other_held": "{v} held by another process",
        "fact.another_process": "another process, PID {pid}, holds {held}{on}",
        "fact.some_process": "process {pid} holds {held}{on} (another process, or this one seen from outside its container)",
        "fact.on_gpu": " on GPU {v}",
        "fact.see": "see {v}",
        "fact.port": "port {v}",
        "fact.collective": "collective {v}",
        "fact.seq": "sequence number {v}",
        "fact.ran_for": "waited {v}",
        "fact.timeout": "timeout {v}",
        "fact.job": "job {v}",
        "fact.node": "on {v}",
        "fact.reason": "{v}",
        "fact.exit_code": "exit code {v}",
        "fact.signal": "{v}",
        "fact.rank": "rank {v}",
        "fact.local_rank": "local rank {v}",
        "fact.ranks": "ranks {v}",
        "fact.host": "host {v}",
        "fact.line": "line {v}",
        "fact.occurrences": "{v} times",
        **{f"note.{key}": form for key, form in FORMS.items()},
    },
    "ja": {
        "helpful": "役に立った",
        "not_this": "これではない",
        "why_all": "原因とすべての手順",
        "what_it_says": "エラーの内容",
        "matched_line": "該当箇所: {where}",
        "the_text": "本文",
        "reads_like": "「{phrase}」に近い内容です",
        "fix": "対処",
        "why": "原因",
        "all_steps": "すべての手順",
        "evidence": "根拠",
        "sources": "出典",
        "source": "出典",
        "next": "次の一手",
        "also_matched": "ほかの候補",
        "other_matches": "ほかの候補",
        "no_other_matches": "ほかに該当するエントリはありません。",
        "symptom": "症状: 根本原因はログの別の場所にあることが多い",
        "no_match": "既知のエラーには該当しませんでした。`/trace kb <キーワード>` でナレッジベースを検索できます。",
        "not_confident": "確信をもって該当するものはありません (しきい値 {threshold})。近い候補:",
        "no_error_here": "既知のエラーらしきものは見当たりません。エラーメッセージかログを貼り付ける (または添付する) と調べます。"
        "`/trace kb <キーワード>` でナレッジベースも検索できます。",
        "if_it_is": "*{title}* の場合: {step}",
        "more_steps": "残り {n} 件の手順と原因: *原因とすべての手順*",
        "gone": "その回答はもう記録に残っていません。",
        "thanks_helpful": "ありがとうございます。役に立ったと記録しました。",
        "thanks_not_this": "ありがとうございます。「これではない」と記録しました (メンテナは `tracebot stats` で確認します)。",
        "feedback_not_recorded": "ありがとうございます。ただ、データベースの障害で今は記録できませんでした。後でもう一度押してください。",
        "first_failure": "最初の失敗",
        "unknown_first_failure": "既知の問題ではありません。ログのこれ以降はこのエラーの結果です。",
        "after_first_failure": "最初の失敗のあと: {cascade}。",
        # the cascade (tracebot.result.CascadeCount), one name per kind of tracebot.matcher.triage.CASCADE_KINDS
        "cascade.watchdog timeout": "ウォッチドッグのタイムアウト",
        "cascade.aborted communicator": "通信路 (communicator) の中断",
        "cascade.launcher exit": "ランチャーによるプロセス終了",
        "cascade_part": "{kind} {n} 件",
        "cascade_part_on": "{ranks} rank で{kind} {n} 件",
        "cascade_and": "、",
        "cascade_follows": "{listed}がこれに続いています",
        "internal_doc": "社内文書",
        "pointer": "上と同じエラーです: *{title}*。<{link}|先ほどの回答>を見てください。",
        "logs_unread": "添付のログをすべては読めなかったため、何が起きたのかを判断できません:",
        "failed": ":x: すみません、診断できませんでした ({error})。エラーの内容はログに残しています。",
        "refused": ":x: すみません、診断はできましたが Slack が回答を受け付けませんでした (Slack の応答: {reason})。詳細はログに残しています。",
        "unconfirmed": ":warning: 診断はできましたが、Slack から回答の投稿の確認がありませんでした ({error})。このスレッドに回答がなければ、もう一度メンションしてください。",
        "answer_changed": ":pencil2: メッセージが編集されたため上の回答はもう当てはまりませんが、Slack が回答の書き換えを受け付けませんでした ({reason})。今の回答はこちらです:",
        "shedding": ":hourglass: 今は答えるメッセージが多すぎるため、このメッセージは飛ばしました。この後 1〜2 分は、ここで"
        "ほかのメッセージも飛ばすかもしれません。数分後にもう一度投稿するか、メンションを付けて送ってください。",
        "busy_click": ":hourglass: 今は混み合っていて、このボタンに応えられませんでした。1 分ほどしてからもう一度押してください。",
        "empty_mention": "メンションの後にエラーを貼り付けるか (ログの添付でも構いません)、`/trace help` を試してください。",
        "silent_one": ":mag: rank {ranks}{more} は{how}。まずそこを見てください。",
        "silent_many": ":mag: rank {ranks}{more} は{how}。まずそこを見てください。",
        "silent_more": " ほか {n} 件",
        "went_quiet.timed_out": "ほかの rank がタイムアウトする間、何も出力していません",
        "went_quiet.stopped": "ほかの rank より先に出力が止まっています",
        "lagging": "同じ集団通信でほかより遅れている rank: {ranks}。",
        "in_frame": "{v} の中",
        "fact.requested": "要求 {v}",
        "fact.gpu": "GPU {v}",
        "fact.capacity": "総容量 {v}",
        "fact.free": "空き {v}",
        "fact.in_use": "このプロセスが {v} 使用",
        "fact.other_pid": "PID {v}",
        "fact.other_held": "別のプロセスが {v} 使用",
        "fact.another_process": "別のプロセス (PID {pid}) が{on} {held} を使用",
        "fact.some_process": "プロセス {pid} が{on} {held} を使用 (別のプロセスか、コンテナの外から見たこのプロセス)",
        "fact.on_gpu": " GPU {v} で",
        "fact.see": "{v} を参照",
        "fact.port": "ポート {v}",
        "fact.collective": "集団通信 {v}",
        "fact.seq": "シーケンス番号 {v}",
        "fact.ran_for": "{v} 待機",
        "fact.timeout": "タイムアウト {v}",
        "fact.job": "ジョブ {v}",
        "fact.node": "ノード {v}",
        # the scheduler's and the kernel's own English words (DUE TO TIME LIMIT, SIGKILL) said as such
        "fact.reason": "キャンセル理由 {v}",
        "fact.exit_code": "終了コード {v}",
        "fact.signal": "シグナル {v}",
        "fact.rank": "rank {v}",
        "fact.local_rank": "ローカル rank {v}",
        "fact.ranks": "rank {v}",
        "fact.host": "ホスト {v}",
        "fact.line": "{v} 行目",
        "fact.occurrences": "{v} 回",
        # notes about what was not read (tracebot.notes.FORMS); sizes and error texts are filled in as found
        "note.binary_seen": "バイナリが混ざっていたため、テキストとして読める行だけを読みました",
        "note.not_text": "テキストファイルではありません (バイナリ)。ログはテキストか .gz で添付してください",
        "note.read_error": "{size} 読んだところで読み込みが止まりました: {error}",
        "note.read_limit": "先頭の {size} だけを読みました (上限)",
        "note.time_limit": "{size} 読んだところで時間切れになり、残りは読んでいません",
        "note.unpack_time_limit": "{size} 展開したところで時間切れになり、残りは読んでいません",
        "note.unpack_limit": "展開すると {limit} を超えるため、先頭の {limit} だけを読みました",
        "note.gzip_damaged": "gzip データが壊れているか途中で切れています ({size} 展開したところで: {error})。残りは読んでいません",
        "note.thanks": "お礼か解決の報告と判断しました。自動では回答しません",
        "note.change": "変更 (プルリクエスト、コミット、レビュー) と判断しました。自動では回答しません",
        "note.not_a_log": "テキストでもログでもないため読んでいません",
        "note.skipped_not_text": "テキストファイルではない (バイナリ) ため読んでいません。ログはテキストか .gz で添付してください",
        "note.too_large": "{size} を超えるため読んでいません",
        "note.time_budget_spent": "このメッセージで使える読み込み時間を前のファイルで使い切ったため読んでいません",
        "note.size_budget_spent": "このメッセージで展開できる {size} を前のファイルで使い切ったため読んでいません",
        "note.unreadable": "読めませんでした ({error})",
        "note.empty": "空 (または空白だけ) で、読む内容がありません (ログはまだ書き込み中でしたか?)",
        "note.zst_not_read": "Zstandard (.zst) は展開しないため読んでいません。ログはテキスト、.gz、.xz、.bz2、.zip で添付してください",
        "note.archive_damaged": "{kind} のデータが壊れているか途中で切れています ({size} 展開したところで: {error})。残りは読んでいません",
        "note.archive_many": "{n} 個のファイルが入っています。最初の {max} 個だけを読みました",
        "note.archive_nested": "アーカイブの中のアーカイブは展開しないため読んでいません",
        "note.archive_outside": "名前がアーカイブの外を指しているため読んでいません",
        "note.archive_encrypted": "暗号化されているため読んでいません",
    },
}


def msg(lang: str, key: str, **values: object) -> str:
    """The text for ``key`` in ``lang`` (English when missing), with ``values`` filled in."""
    text = MESSAGES.get(lang, {}).get(key) or MESSAGES["en"][key]
    return text.format(**values) if values else text


def say_cascade(d: Diagnosis, lang: str) -> str:
    """The cascade after a log's first failure in ``lang``: the matcher's English (:attr:`Diagnosis.cascade`),
    or its counts said in ``lang`` when it has a name for each kind."""
    said = MESSAGES.get(lang, {})
    if lang == "en" or not d.cascade_counts or any(f"cascade.{c.kind}" not in said for c in d.cascade_counts):
        return d.cascade
    parts = [msg(lang, "cascade_part_on" if c.ranks > 1 else "cascade_part", kind=said[f"cascade.{c.kind}"],
                 n=c.lines, ranks=c.ranks) for c in d.cascade_counts]
    listed = said["cascade_and"].join(parts)
    return msg(lang, "cascade_follows", listed=listed) if d.cascade_follows else listed


def say_note(text: str, lang: str) -> str:
    """A diagnosis's note (:mod:`tracebot.notes`) in ``lang``: as it is in English, or when it was not made
    from a form (a plugin's own words)."""
    read = read_note(text) if lang != "en" else None
    if read is None or f"note.{read.key}" not in MESSAGES.get(lang, {}):
        return text
    said = msg(lang, f"note.{read.key}", **read.values)
    return f"{read.file}: {said}" if read.file is not None else said
