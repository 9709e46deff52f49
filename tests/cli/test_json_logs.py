"""`--log-format json`: log records as one JSON object a line, for log collectors (skillwire choice, issue 13).

Every line stays terminal safe: a message quoting a hostile file name cannot move the cursor or forge a record.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from skillwire.cli.output import JsonFormatter
from tests.support.servers import EXAMPLE_SKILLS, run_skillwire


def test_a_record_is_one_json_line_with_control_characters_escaped() -> None:
    """A newline or an escape sequence in a message stays inside the JSON string, escaped."""
    try:
        raise ValueError("boom\x1b]0;title\x07")
    except ValueError:
        record = logging.LogRecord(
            "skillwire.test", logging.WARNING, __file__, 1, "read %s\nforged line", ("a\x1b[31mb",), sys.exc_info()
        )
    line = JsonFormatter().format(record)
    assert "\n" not in line
    assert "\x1b" not in line
    assert "\x07" not in line
    entry = json.loads(line)
    assert entry["level"] == "WARNING"
    assert entry["logger"] == "skillwire.test"
    assert entry["message"] == "read a\x1b[31mb\nforged line"
    assert "ValueError: boom" in entry["exception"]
    assert entry["time"].endswith("+00:00")


def test_serve_writes_its_log_records_as_json_lines(tmp_path: Path) -> None:
    """A real `skillwire serve --log-format json`: the warning about an unusable digest cache is a JSON object."""
    cache = tmp_path / "digests.json"
    cache.write_text("not a digest cache\n")
    done = run_skillwire(
        "serve", str(EXAMPLE_SKILLS), "--digest-cache", str(cache), "--log-format", "json", "--quiet", timeout=120
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert [r["logger"] for r in records] == ["skillwire.sources.digest_cache"], done.stderr
    assert records[0]["level"] == "WARNING"
    assert "ignored" in records[0]["message"]
    assert all(line.startswith("{") for line in done.stderr.splitlines()), done.stderr
