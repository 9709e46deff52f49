"""Commands started with SIGINT at its default, as a shell starts a foreground command.

A suite started with SIGINT ignored (a background job of a script, some CI runners) hands its children the ignored
SIGINT; an ignored signal stays ignored across exec, and Python then never turns SIGINT into KeyboardInterrupt. A
test that sends SIGINT says so by starting its command through `with_default_sigint`.
"""

from __future__ import annotations

import sys

_DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"
)


def with_default_sigint(command: list[str]) -> list[str]:
    """`command`, run with SIGINT at its default whatever this process inherited."""
    return [sys.executable, "-S", "-c", _DEFAULT_SIGINT, *command]
