#!/usr/bin/env python3
"""Validate the fresh blind triage set (stdlib only): the checks of tests/triage_heldout/check.py (same
record format and labelling rules), on this folder, with logs of at least 40 lines.

Usage: python3 tests/triage_fresh/check.py [--labels PATH]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "triage_heldout"))

from check import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(here=HERE, min_lines=40))
