"""A small host for the official MCP conformance suite's client mode (Skills extension, SEP-2640).

It drives skillwire's `Host` the way a real host does, so the suite can watch its
wire traffic: connect to one server under a host-assigned label and list the
catalog (Lazy Retrieval: no file is read on connection or listing); for the
`-verify-*` scenarios, load the first skill (approved by `ApproveLoads`, which
grants no frontmatter field and allows nothing else) and, if loading
succeeded, read every file of the held entry. The mock server serves a
tampered SKILL.md in those scenarios, so a correct host refuses to load it and
never reads the skill's other files; that refusal is printed on stderr and the
program exits 0. Exit status 1 means something else went wrong (connection,
an unexpected error), 2 an unknown scenario.

    conformance client --command "python examples/conformance_host.py" --scenario sep-2640-client-verify-digest -o out/

The suite appends the mock server's URL as the last argument and names the
scenario in MCP_CONFORMANCE_SCENARIO; without that variable the program only lists.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import anyio

from skillwire import ApproveLoads, Host, InvalidEntry, SkillwireError, VerificationError

LABEL = "conformance"
LIST_ONLY = frozenset({"", "sep-2640-client-no-prefetch"})
VERIFY = frozenset(
    {"sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter"}
)


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def run(url: str, scenario: str) -> int:
    """Connect, list, and (for the verify scenarios) load the first skill and read its files."""
    async with Host(prompt=ApproveLoads()) as host:  # loads only: no field granted, nothing run
        # The mock answers both `server/discover` and `initialize`, so the SDK's default ("auto") mode is used.
        await host.add_server(LABEL, url)
        catalog = host.catalog()
        print(f"{len(catalog)} skill(s) listed by {url}:")
        for item in catalog:
            print(f"  {item.handle}  {item.description}")
        for problem in host.problems(LABEL):
            say(f"dropped an invalid entry: {problem}" if isinstance(problem, InvalidEntry) else str(problem))
        if scenario in LIST_ONLY:
            return 0
        if not catalog:
            say("no skill to load")
            return 1
        handle = catalog[0].handle
        try:
            loaded = await host.load_skill(handle)
        except VerificationError as err:  # SkillChanged included
            say(f"refused to load {handle}: {type(err).__name__}: {err}")
            return 0
        print(f"loaded {handle}:\n{loaded.text}")
        entry = host.window(handle).entry
        if isinstance(entry.resources, str):
            return 0
        for record in entry.resources:
            if record.uri == entry.uri:
                continue
            try:
                text = await host.read_skill_text(handle, record.uri)
            except VerificationError as err:  # SkillChanged included
                say(f"refused {record.uri}: {type(err).__name__}: {err}")
                continue
            print(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        say("usage: conformance_host.py URL (the scenario comes from MCP_CONFORMANCE_SCENARIO)")
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario not in LIST_ONLY | VERIFY:
        say(f"unknown scenario {scenario!r}; this host knows {', '.join(sorted(LIST_ONLY | VERIFY - {''}))}")
        return 2
    try:
        return anyio.run(run, args[-1], scenario)
    except (SkillwireError, OSError) as err:
        say(f"error: {type(err).__name__}: {err}")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
