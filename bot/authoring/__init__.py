"""Tools for knowledge-base authors: lint, eval, compare, draft (``kb new``), import and their CLI.

They sit above the matcher (they run it over examples and corpora) and beside the service; nothing below
imports them."""
