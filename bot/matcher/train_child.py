"""The child process :mod:`tracebot.matcher.trainer` starts: ``python -I -m tracebot.matcher.train_child``.

It imports the training code (scikit-learn, SciPy) at once, while its parent parses the knowledge base
and builds the matcher; it trains when it reads ``go KEY`` on its standard input (the parent has stored the
matcher in the cache by then, under KEY) and exits quietly on end of input.
"""

from __future__ import annotations

import os
import re
import sys


def main() -> int:
    import tracebot.matcher.training  # noqa: F401 — scikit-learn and SciPy: the import this process exists for
    from tracebot.knowledge.cache import cache_dir, lookup
    from tracebot.matcher.loading import matcher_of

    told = sys.stdin.readline().split()  # "go KEY": the matcher is in the cache under KEY
    if len(told) != 2 or told[0] != "go" or not re.fullmatch(r"[0-9a-f]{24}", told[1]) or cache_dir() is None:
        return 0  # end of input (the parent needs nothing) or not what the parent writes: the parent trains
    # only read under that key, never built: the directory may have changed since the parent hashed it,
    # and a matcher of the new files stored under the old files' key would be served for them
    found = lookup("matcher", told[1])
    if found is None:  # gone meanwhile (pruned): the parent trains
        return 0
    kb, _errors, index = found
    matcher_of(kb, index, model=True)  # trains and stores the model in the cache, as the parent would
    return 0


if __name__ == "__main__":
    code = main()
    # The model is stored (written and renamed into place) and the parent is waiting for this process
    # to end: tearing down the interpreter (scikit-learn's modules, the training arrays) took ~0.3 s.
    os._exit(code)
