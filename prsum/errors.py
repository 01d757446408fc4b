"""One error family for the whole library; the CLI turns each into an exit code."""

from __future__ import annotations

EXIT_OK = 0
EXIT_PARTIAL = 1
EXIT_USAGE = 2


class PrsumError(Exception):
    """Base of every error prsum raises on purpose.

    The message is one line, meant for a user: it names the problem and what to do.
    """

    exit_code: int = EXIT_USAGE


class UsageError(PrsumError):
    """The command line asks for something that cannot be done as given."""


class ConfigError(PrsumError):
    """A setting has a value prsum cannot use."""


class RepositoryError(PrsumError):
    """The path is not a usable git repository."""


class RevisionError(PrsumError):
    """A revision or range does not resolve, or selects nothing."""


class ModelError(PrsumError):
    """The model file is missing, unreadable or not a GGUF model."""


class GenerationError(PrsumError):
    """The model failed while writing a card."""

    exit_code = EXIT_PARTIAL


class PrReadError(PrsumError):
    """One PR's diff or commits could not be read; the others still can."""

    exit_code = EXIT_PARTIAL


class OutputError(PrsumError):
    """The output cannot be written."""


class ServerError(PrsumError):
    """The inference server cannot be reached, refuses a request, or answers what prsum cannot read."""
