"""Numbers that name an error, read as the names they stand for: ``exit code -9`` is a SIGKILL, NCCL's ``value 5``
is ``ncclInvalidUsage``.

A person (or a program's own check macro) often reports an error by its number alone: "the task fails with exit
status -9", "exit code 137", "NCCL Error at global_exchange.cpp:127 value 5". The entries name these errors
(SIGKILL, ncclInvalidUsage), so the number meets them only through its name. :func:`names` lists the names a
text's numbers stand for, as words the word analyzer adds to the text's own (:func:`tracebot.matcher.tfidf.word_terms`,
beside the glossary's concepts): the entries' texts and a pasted text are read the same way. Only numbers stated
as an exit status, a signal or an NCCL result count; a bare 137 or 5 is nothing.
"""

from __future__ import annotations

import re

# Linux's signal numbers (signal(7), the x86/ARM column) for the signals that end a training process. A process
# killed by signal N is reported as -N by Python's subprocess and torchrun (``returncode``: "a negative value -N
# indicates that the child was terminated by signal N", Python's subprocess documentation) and as 128 + N by a
# shell or a container runtime (bash manual, "Exit Status": "the exit status is 128+N").
SIGNALS = {6: "sigabrt", 7: "sigbus", 9: "sigkill", 11: "sigsegv", 15: "sigterm"}
# NCCL's ncclResult_t (NVIDIA/nccl src/nccl.h.in; the strings of ncclGetErrorString in src/init.cc name the same
# results: 1 "unhandled cuda error", 2 "unhandled system error", 3 "internal error", 4 "invalid argument",
# 5 "invalid usage", 6 "remote process exited or there was a network error", 7 "NCCL operation in progress").
NCCL_RESULTS = {
    1: "ncclunhandledcudaerror",
    2: "ncclsystemerror",
    3: "ncclinternalerror",
    4: "ncclinvalidargument",
    5: "ncclinvalidusage",
    6: "ncclremoteerror",
    7: "ncclinprogress",
}

_STATUS_WORD = r"(?:exit(?:ed)?|exitcode|exit_code|exit_status|return(?:ed)?|returncode|return_code|status)"
# "exit code -9", "exit status of -9", "exitcode: -9", "returned non-zero exit status 137", "return code = -11",
# "ExitCode 137"; and the other way round, "with -9 exit code"; "signal 9", "killed by signal: 11"
_EXIT = re.compile(
    rf"\b{_STATUS_WORD}\b(?:\s+(?:with|code|status|value|of|was|is|the)){{0,3}}\s*[:=]?\s*[`'\"(]?(?P<n>-\d{{1,2}}|1[2-4]\d)\b"
    rf"|(?<![\w-])(?P<m>-\d{{1,2}}|1[2-4]\d)[`'\")]?\s+{_STATUS_WORD}\b"
    r"|\bsignal:?\s+(?P<s>\d{1,2})\b"
)
# NCCL's result as a number: "NCCL Error 2: unhandled system error" (PyTorch's own), a check macro's "NCCL Error at
# file:line value 5", NCCL's proxy "Failed to execute operation Connect from rank 9, retcode 6", "nccl failed with
# error code: 2". Not any number after "error" on a line that names NCCL: "NET/IB : Got completion from peer … with
# error 4" is the InfiniBand verbs' completion status, not an NCCL result.
_NCCL = re.compile(
    r"\bnccl\s+error\s*[:(]?\s*(?P<a>[1-7])\b(?!\.\d)"
    r"|\bnccl[^\n]{0,160}?\b(?:value|retcode|error code)\s*[:=]?\s*(?P<b>[1-7])\b(?!\.\d)"
)


def names(lowered: str) -> list[str]:
    """The names (lower-case words) that the exit statuses, signals and NCCL results stated in ``lowered`` (a
    lower-cased text) stand for, once per mention."""
    out: list[str] = []
    if "exit" in lowered or "return" in lowered or "status" in lowered or "signal" in lowered:
        for m in _EXIT.finditer(lowered):
            if m["s"]:
                signal = int(m["s"])
            else:
                n = int(m["n"] or m["m"])
                signal = -n if n < 0 else n - 128
            if signal in SIGNALS:
                out.append(SIGNALS[signal])
    if "nccl" in lowered:
        out += [NCCL_RESULTS[int(m["a"] or m["b"])] for m in _NCCL.finditer(lowered)]
    return out
