"""The child process :mod:`tracebot.matcher.trainer` starts: ``python -m tracebot.matcher.train_child DIR``.

It imports the training code (scikit-learn, SciPy) at once, while its parent parses the knowledge base
and builds the matcher; it trains when it reads ``go KEY`` on its standard input (the parent has stored the
matcher in the cache by then, under KEY) and exits quietly on end of input.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path


def main() -> int:
    directory = Path(sys.argv[1])
    import tracebot.matcher.training  # noqa: F401 — scikit-learn and SciPy: the import this process exists for
    from tracebot.knowledge.cache import cache_dir, lookup
    from tracebot.matcher.loading import load_compiled, matcher_of

    told = sys.stdin.readline().split()  # "go KEY": the matcher is in the cache under KEY
    if told[:1] != ["go"] or cache_dir() is None:
        return 0
    if len(told) == 2 and re.fullmatch(r"[0-9a-f]{24}", told[1]):
        # only read under that key, never built: the directory may have changed since the parent hashed
        # it, and a matcher of the new files stored under the old files' key would be served for them
        found = lookup("matcher", told[1])
        if found is None:  # gone meanwhile (pruned): the parent trains
            return 0
        kb, _errors, index = found
    else:  # anything but a key as the parent writes them: found by hashing the directory, as the parent did
        kb, _errors, index = load_compiled(directory)
    matcher_of(kb, index, model=True)  # trains and stores the model in the cache, as the parent would
    return 0


if __name__ == "__main__":
    code = main()
    # The model is stored (written and renamed into place) and the parent is waiting for this process
    # to end: tearing down the interpreter (scikit-learn's modules, the training arrays) took ~0.3 s.
    os._exit(code)
