"""Whether a person's words ask something: one definition for the two rules that need it.

The ranking model reads it (``TextInfo.asks``: only a text that asks may be answered confidently on wording
alone), and so do the rules that keep a thank-you, a reply saying it is solved and a change's description
silent unless they also ask (``core``). Two lists had drifted apart: Chinese asking words counted for the
thank-you rule but not for the model, a line opening with "how" or "does" for the model but not for the
thank-you rule.
"""

from __future__ import annotations

import re

# A question mark; a line that opens as a question; a request ("any idea", "please", "help" as a word:
# "Add a helper that retries …" and "that would have been helpful, thanks" ask nothing); Japanese why,
# is it …?, tell me, what should I do; Chinese why, how, may I ask, would you mind (a request's courtesy),
# help, ask for advice.
#
# An auxiliary opening a line asks ("Can I", "Does anyone", "Should I") unless "not" or "be" follows it: "Should
# be fine now", "Does not happen any more" state something, their subject left out. A contraction still asks:
# "Can't load the DP model", "Don't know why it hangs" open a request for help (measured: without them a title
# like that lost its confident answer). The
# space before a line's first word is [^\S\n]*, not \s*: \s crosses line ends, so every line of a run of blank
# ones would rescan the rest (quadratic).
_ASKING = re.compile(
    r"[?？]|^[^\S\n]*(?:how|why|what|which|anyone|any idea|is there"
    r"|(?:does|do|should|can|could)(?![^\S\n]+(?:not|be)\b))\b"
    r"|in advance|any (?:idea|help|hint)|please|\bhelp(?:s|ed|ing)?\b"
    r"|なぜ|でしょうか|ですか|教えて|どうすれば|どうしたら"
    r"|为什么|為什麼|怎么|怎麼|如何|请问|請問|麻烦|麻煩|求助|请教|請教",
    re.IGNORECASE | re.MULTILINE,
)
# The same Chinese words in a closing thank-you ask nothing: "now I know why / how" (知道为什么了, 明白怎么回事了,
# 学会了如何…; not 不知道/没明白, which still ask), "that's why" (这就是为什么), "sorry for the trouble" (添麻烦了),
# "anyway" (无论如何). These spans are taken out before the asking words are looked for.
_NOT_ASKING = re.compile(
    r"(?<![不没沒])(?:知道|明白|清楚|懂|懂得|学会|學會|弄懂|搞懂|就是)了?(?:为什么|為什麼|怎么|怎麼|如何)"
    r"|添麻烦|添麻煩|无论如何|無論如何"
)


def asks(prose: str) -> bool:
    """Whether ``prose`` (the lines a person wrote, ``core.prose_lines``) asks something: a question mark
    or asking words, not only thanks, a report or a change."""
    return bool(_ASKING.search(_NOT_ASKING.sub(" ", prose)))
