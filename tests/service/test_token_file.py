"""`--token-file`: the static-token format, its checks, and what a bad file does (skillwire choices).

A line is `TOKEN [subject=NAME] [scopes=a,b]`; a bad line is named by number and the token never
quoted; a file that is not a regular file is refused without blocking; a world-readable file warns.
"""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import threading
import time
from pathlib import Path

import httpx2
import pytest

from skillwire.cli.main import main
from skillwire.core.errors import TokenFileError
from skillwire.service.token_file import TokenFile, parse_token_file, read_token_file
from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, http_server, serve_command

TOKEN = "tok_0123456789abcdefABCDEF"


def test_lines_attach_a_subject_and_scopes_and_comments_are_skipped() -> None:
    """The format the SCOPE policy matches on: subject and scopes per token; `#` lines and trailing comments."""
    tokens = parse_token_file(f"# team\n\n{TOKEN} subject=ci scopes=a,b:c  # the CI job\n{TOKEN}x\n", path="f")
    assert [(t.subject, t.scopes) for t in tokens] == [("ci", ("a", "b:c")), ("static", ())]
    assert TOKEN not in repr(tokens)


@pytest.mark.parametrize(
    "line",
    [
        "short",
        f"{TOKEN} role=admin",
        f"{TOKEN} subject=",
        f"{TOKEN} scopes=a,,b",
        f"{TOKEN}\x1b[2J",
        f"{TOKEN} second-token-pasted-here-0123456789",
        f"{TOKEN} scopes=a second-token-pasted-here=",
    ],
)
def test_a_bad_line_is_named_by_number_without_quoting_the_token(line: str) -> None:
    """A typo is reported as file:line, and no secret on that line (the token, a second token) reaches the error."""
    with pytest.raises(TokenFileError) as caught:
        parse_token_file(f"# ok\n{line}\n", path="tokens")
    assert str(caught.value).startswith("tokens:2: ")
    assert TOKEN not in str(caught.value)
    assert "pasted" not in str(caught.value)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """Attack: a FIFO swapped in for the token file must not freeze the server (open would wait for a writer)."""
    fifo = tmp_path / "tokens"
    os.mkfifo(fifo)
    outcome: list[BaseException | object] = []

    def read() -> None:
        try:
            outcome.append(read_token_file(str(fifo)))
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # frozen on open(): unblock it with a writer, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO token file froze")
    assert isinstance(outcome[0], TokenFileError)
    assert "not a regular file" in str(outcome[0])


def test_a_world_readable_token_file_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Every user on the machine could read the tokens: say so (by path, never the tokens)."""
    path = tmp_path / "tokens"
    path.write_text(TOKEN + "\n", encoding="utf-8")
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        TokenFile(path)
    assert "readable by every user" in caplog.text
    assert TOKEN not in caplog.text


def test_a_file_broken_while_serving_accepts_no_token_until_fixed(tmp_path: Path) -> None:
    """Fail closed: a token file rewritten badly does not keep the old tokens alive."""
    path = tmp_path / "tokens"
    path.write_text(TOKEN + "\n", encoding="utf-8")
    path.chmod(0o600)
    tokens = TokenFile(path)
    assert tokens.match(TOKEN) is not None
    path.write_text("oops\n", encoding="utf-8")
    assert tokens.match(TOKEN) is None
    path.write_text(f"{TOKEN} subject=back\n", encoding="utf-8")
    found = tokens.match(TOKEN)
    assert found is not None
    assert found.subject == "back"


def test_serve_with_a_bad_token_file_stops_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A token file with a bad line stops the server before it serves anyone, naming the line."""
    path = tmp_path / "tokens"
    path.write_text(f"{TOKEN} scope=a\n", encoding="utf-8")
    assert main(["serve", "examples/skills", "--http", "127.0.0.1:0", "--quiet", "--token-file", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"skillwire: error: {path}:1: word 2 is not subject=NAME or scopes=a,b "
        "(write `TOKEN subject=NAME scopes=a,b`, one token a line; the word is not shown: it may be a secret)"
    ]


# -- issue 19, hole 6: a second bare word on a line (often a second token) never reaches a log ------------------------


def _shows_any_of(text: str, secret: str) -> bool:
    """True if `text` holds any 8-character run of `secret` (the old message quoted its first 40 characters)."""
    return any(secret[i : i + 8] in text for i in range(len(secret) - 7))


def _token_lines(second_word: str) -> str:
    return f"# team tokens\n{TOKEN} subject=ci\n{TOKEN}x {second_word}\n"


def test_a_second_bare_word_is_named_by_line_and_never_quoted_at_start_up(tmp_path: Path) -> None:
    """Attack (issue 19, hole 6): two tokens pasted on one line, or a token after a space. A real `skillwire
    serve` refuses the file naming line 3 and what is wrong, and no part of the second word reaches stderr."""
    second = secrets.token_urlsafe(32)
    path = tmp_path / "tokens"
    path.write_text(_token_lines(second), encoding="utf-8")
    path.chmod(0o600)
    command = serve_command([EXAMPLE_SKILLS], "--http", "127.0.0.1:0", "--token-file", str(path))
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT, check=False)
    assert done.returncode == 1
    assert not _shows_any_of(done.stderr, second), done.stderr
    assert f"{path}:3: word 2 is not subject=NAME or scopes=a,b" in done.stderr


def test_a_second_bare_word_is_named_by_line_and_never_quoted_when_reloaded(tmp_path: Path) -> None:
    """Attack (issue 19, hole 6): the same line written while a real server runs. Its warning names line 3, says
    no token is accepted until the file is fixed, and no part of the second word reaches stderr (even at --debug)."""
    second = secrets.token_urlsafe(32)
    path = tmp_path / "tokens"
    path.write_text(f"{TOKEN} subject=ci\n", encoding="utf-8")
    path.chmod(0o600)
    with http_server([EXAMPLE_SKILLS], "--no-watch", "--debug", "--token-file", str(path)) as server:
        path.write_text(_token_lines(second), encoding="utf-8")
        response = httpx2.get(server.url.removesuffix("/mcp") + "/", headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 401  # fail closed while the file is broken
        deadline = time.monotonic() + 10
        while "no token from it is accepted" not in server.stderr and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _shows_any_of(server.stderr, second), server.stderr
        assert f"{path}:3: word 2 is not subject=NAME or scopes=a,b" in server.stderr
