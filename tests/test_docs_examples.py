"""Every example of the README and the documentation site (`docs/**/*.md`) runs here as a reader would run it.

Each test names the blocks it runs by page and a piece of their text (`claim(PAGE, NEEDLE)`); a block no test names
fails `test_every_example_is_claimed`, so a new example cannot go untested. Python blocks run as files in a
fresh interpreter (through the test fork server) from a folder like the repository root; `$ command` transcripts run
through bash with their output compared; shell blocks run line by line; configuration blocks are read by the code
that reads them. A few blocks are checked by the test module that already sets up their scene (`ELSEWHERE`), and
a few cannot run here at all (`NOT_RUN`, each with its reason).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client

from skillwire.cli.main import _parser
from skillwire.core.scopes import parse_policy
from skillwire.sources.mcp.credentials import load_credentials
from tests.support import forkserver
from tests.support.doc_blocks import Block, Sandbox, all_blocks, find, matches, sandbox, transcript
from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, resources_list, resources_read, wire

README = "README.md"
HOST = "docs/getting-started/host-authors.md"
OPERATORS = "docs/getting-started/server-operators.md"
AUTHORS = "docs/getting-started/skill-authors.md"
DEPLOYING = "docs/deploying.md"
INSTALL = "docs/install.md"

# Blocks run by another test module, which holds the needle's text (checked below) and sets up the scene.
ELSEWHERE = {
    (DEPLOYING, "proxy_pass http://127.0.0.1:8000;"): "tests/service/test_reverse_proxy.py",
    (AUTHORS, "$ skillwire validate --format github ."): "tests/cli/test_formats.py",
    ("docs/sources/gateway.md", "$ skillwire lock show skills.lock"): "tests/sources/mcp/test_lock.py",
    ("docs/new-source.md", "class TarSource:"): "tests/sources/test_new_source_example.py",
    ("docs/new-source.md", '"tar": "skillwire.sources.tar:open_spec",'): "tests/sources/test_new_source_example.py",
}

# Blocks that cannot run inside the suite, and why.
NOT_RUN = {
    (README, "make serve   #"): "`make test` is this suite; `make serve`'s recipe is checked by test_make_serve",
    (INSTALL, "make serve   #"): "the README's block again; see test_make_serve",
    (INSTALL, "pipx install ."): "installs into the user's home; run by hand with pipx 1.18.4 and uv 0.13.9",
    (DEPLOYING, "python -m deploy.fleet"): "three fresh replicas and nginx: tests/service/test_replicas.py runs "
    "deploy.fleet's running_fleet, which the command wraps",
}


def claimed() -> set[tuple[str, str]]:
    """Every (page, needle) a test here (a `claim(PAGE, NEEDLE)` call), a test elsewhere or NOT_RUN stands for."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    here = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "claim":
            page, needle = node.args
            name = globals()[page.id] if isinstance(page, ast.Name) else ast.literal_eval(page)
            here.add((name, ast.literal_eval(needle)))
    return here | set(ELSEWHERE) | set(NOT_RUN)


def claim(page: str, needle: str) -> Block:
    """The block of `page` holding `needle`, which the calling test runs (the claim is read from this file)."""
    return find(page, needle)


def test_every_example_is_claimed() -> None:
    """skillwire choice (issue 22): no example on the site or in the README goes untested."""
    claims = claimed()
    blocks = {block for page, needle in claims for block in [find(page, needle)]}
    unclaimed = [str(block) for block in all_blocks() if block.is_example and block not in blocks]
    assert unclaimed == []
    assert len(blocks) == len(claims), "two claims name one block"


def test_blocks_checked_elsewhere_are_read_there() -> None:
    for (page, needle), test_file in ELSEWHERE.items():
        text = (REPO_ROOT / test_file).read_text(encoding="utf-8")
        assert page in text, f"{test_file} does not read {page}"
        assert needle in text, f"{test_file} does not name the block holding {needle!r}"


def test_python_examples_import_only_from_skillwire() -> None:
    """skillwire choice (issue 11): an example shows the public API, so no skillwire import reaches past it."""
    deep = []
    for block in all_blocks():
        if block.lang != "python" or block.page == "docs/new-source.md":  # a source kind uses skillwire.sources
            continue
        for node in ast.walk(ast.parse(block.text)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skillwire."):
                deep.append(f"{block}: {node.module}")
            elif isinstance(node, ast.Import):
                deep.extend(f"{block}: {a.name}" for a in node.names if a.name.startswith("skillwire."))
    assert deep == []


# -- running examples -------------------------------------------------------------------------------------------------


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Sandbox]:
    with sandbox(tmp_path, "8000", "8001", "8002") as made:
        yield made


def run_python(
    box: Sandbox, source: str, *, answer: str = "", name: str = "example.py"
) -> subprocess.CompletedProcess[str]:
    """A Python block saved as a file and run with the interpreter skillwire is installed in, as the pages say."""
    script = box.root / name
    script.write_text(box.localize(source), encoding="utf-8")
    return subprocess.run(
        forkserver.command([str(script)]),
        cwd=box.root,
        env=box.env,
        input=answer,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def _is_server(command: str) -> bool:
    """A command left running: one ending in `&`, or an HTTP server that listens until stopped."""
    return command.endswith("&") or (command.startswith("skillwire serve") and "--http 127.0.0.1:" in command)


def run_transcript(box: Sandbox, block: Block, *, answers: dict[int, str] | None = None) -> None:
    """Each `$ command` of `block` in turn; its output (stdout and stderr as a terminal shows them: one stream,
    unbuffered) must be what the page shows. A server (see `_is_server`) is started and left running: what the page
    shows under it, if anything, must be what it printed by its "listening on" line."""
    for i, step in enumerate(transcript(block)):
        shown = box.localize(step.shown)
        assignment = re.fullmatch(r"([A-Z_]+)=(.+)", step.command)
        if assignment:  # a shell variable later lines use: kept in the sandbox's environment
            value = box.run(f"printf %s {assignment[2]}", merged=False)
            assert value.returncode == 0, f"{block}: `{step.command}` failed: {value.stderr}"
            assert not shown, f"{block}: an assignment prints nothing"
            box.env[assignment[1]] = value.stdout
            continue
        if _is_server(step.command):
            printed = box.start(step.command)
            assert not shown or matches(shown, printed), f"{block}: `{step.command}` printed\n{printed}"
            continue
        run = box.run(step.command, stdin=(answers or {}).get(i, ""))
        printed = run.stdout
        assert matches(shown, printed), f"{block}: `{step.command}` (exit {run.returncode}) printed\n{printed}"


def run_script(box: Sandbox, block: Block) -> list[subprocess.CompletedProcess[str]]:
    """A shell block line by line (comments and blank lines skipped): a server (`... --http ...`, or a line ending
    in `&`) is started and left running once it listens; any other line must exit 0."""
    runs = []
    for line in block.text.splitlines():
        command = line.split("  #")[0].strip()
        if not command or command.startswith("#"):
            continue
        if _is_server(command):
            box.start(command)
            continue
        run = box.run(command)
        assert run.returncode == 0, f"{block}: `{command}` exited {run.returncode}:\n{run.stdout}"
        runs.append(run)
    return runs


@pytest.fixture
def served(box: Sandbox) -> Sandbox:
    """`make serve`'s server (examples/skills on the page's port 8000), for the pages that talk to it."""
    box.start("skillwire serve examples/skills --http 127.0.0.1:8000 --quiet")
    return box


# -- the README -------------------------------------------------------------------------------------------------------


def test_make_serve() -> None:
    """The two-command block's `make serve` is the first transcript's command, on 127.0.0.1:8000."""
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "HOST ?= 127.0.0.1\nPORT ?= 8000\n" in makefile
    assert "serve: $(BIN)/skillwire\n\t$(BIN)/skillwire serve examples/skills --http $(HOST):$(PORT)\n" in makefile


def test_validate_transcripts(box: Sandbox) -> None:
    run_transcript(box, claim(README, "$ skillwire validate examples/skills"))


def test_serve_transcripts(box: Sandbox) -> None:
    run_transcript(box, claim(README, "$ skillwire serve examples/skills --http 127.0.0.1:8000\n"))
    for process in box.background:
        process.terminate()
        process.wait()
    box.background.clear()
    run_transcript(box, claim(OPERATORS, "$ skillwire serve examples/skills --http 127.0.0.1:8000\n"))


def test_readme_host_example(box: Sandbox) -> None:
    block = claim(README, "from skillwire import ApproveLoads, Host")
    run = run_python(box, block.text, name="host_example.py")
    assert run.returncode == 0, run.stderr
    readme = (REPO_ROOT / README).read_text(encoding="utf-8")
    said = readme[readme.index("It prints the verified files: `") :].split("`")[1].replace("\n", " ")
    assert run.stdout == said + "\n"


# -- MCP client configuration -----------------------------------------------------------------------------------------


def _stdio_command(block: Block, servers_key: str, box: Sandbox) -> list[str]:
    config = json.loads(block.text)
    [server] = config[servers_key].values()
    assert Path(server["command"]).is_absolute()
    args = [
        str(box.root / "examples" / "skills") if a in ("/home/you/skills", "${workspaceFolder}/skills") else a
        for a in server["args"]
    ]
    assert server["command"] == "/home/you/.local/bin/skillwire"
    return [*forkserver.command(["-m", "skillwire"]), *args]


@pytest.mark.anyio
async def test_client_configurations_start_a_server_a_client_reads(box: Sandbox) -> None:
    """Claude Desktop's and VS Code's snippets: valid JSON in each client's shape, whose command line serves."""
    from mcp.client.stdio import StdioServerParameters

    blocks = [
        (claim(README, '"mcpServers": {'), "mcpServers"),
        (claim(INSTALL, '"mcpServers": {'), "mcpServers"),
        (claim(INSTALL, '"servers": {'), "servers"),
    ]
    for block, key in blocks:
        command = _stdio_command(block, key, box)
        if key == "servers":
            assert json.loads(block.text)["servers"]["skills"]["type"] == "stdio"
        params = StdioServerParameters(command=command[0], args=command[1:], env=box.env, cwd=str(box.root))
        async with Client(params, cache=None) as client:
            listed = [r["uri"] for r in wire(await resources_list(client))["resources"]]
            assert "skill://pdf-processing/SKILL.md" in listed
            tools = [tool.name for tool in (await client.list_tools()).tools]
            assert {"list_skills", "search_skills", "read_skill", "read_skill_file"} <= set(tools)
            assert len((await client.list_prompts()).prompts) == 5


# -- getting started ---------------------------------------------------------------------------------------------------


def test_host_authors_script(box: Sandbox) -> None:
    """skillwire choice (issue 11): the host script lists, asks, loads, verifies and reads, as it says."""
    run = run_python(box, claim(HOST, "from skillwire import Host, JsonApprovalStore").text, answer="y\n")
    assert run.returncode == 0, run.stderr
    assert "docs:pdf-processing docs Extract, fill, and assemble PDF documents" in run.stdout, run.stdout
    assert '<skill-content origin="mcp:docs" skill="skill://pdf-processing/SKILL.md"' in run.stdout
    assert "skill://pdf-processing/templates/invoice.md" in run.stdout
    assert "# Invoice" in run.stdout
    assert "['list_skills', 'search_skills', 'load_skill', 'read_skill_file', 'list_skill_directory']" in run.stdout
    assert "Load this skill? [y/N, v to read its SKILL.md first]" in run.stderr
    assert "skill://pdf-processing/SKILL.md" in (box.root / "approvals.json").read_text(encoding="utf-8")
    assert list((Path(box.env["XDG_CACHE_HOME"])).rglob("invoice.md")), "the cache holds the verified file"


def test_host_cli_transcript(served: Sandbox) -> None:
    # The answer typed at the prompt shows after it, as on a terminal: the prompt echoes an answer it reads from a pipe.
    run_transcript(
        served, claim(HOST, "$ skillwire host --server docs=http://127.0.0.1:8000/mcp --load"), answers={0: "y\n"}
    )


def test_inspect_and_pull_transcripts(served: Sandbox) -> None:
    run_transcript(served, claim(OPERATORS, "$ skillwire inspect http://127.0.0.1:8000/mcp --verify"))
    run_transcript(served, claim(OPERATORS, "$ skillwire pull http://127.0.0.1:8000/mcp pdf-processing"))
    assert (served.root / "pdf-processing" / ".skillwire-provenance.json").is_file()


def test_skill_authors_pages(box: Sandbox) -> None:
    """The SKILL.md shown is the example's; validate prints what the page shows for the folder it describes."""
    shown = claim(AUTHORS, "name: pdf-processing").text
    assert shown == (EXAMPLE_SKILLS / "pdf-processing" / "SKILL.md").read_text(encoding="utf-8")
    (box.root / "Wrong").mkdir()
    (box.root / "Wrong" / "SKILL.md").write_text("---\nname: Wrong\ndescription: Says hello\n---\nHi\n")
    (box.root / "bad-skill").mkdir()
    (box.root / "bad-skill" / "SKILL.md").write_text(claim(AUTHORS, "name: bad-skill").text, encoding="utf-8")
    for name in ("examples", "src", "tools"):  # the folder the page describes holds only those two skills
        path = box.root / name
        path.rename(box.root.parent / f"kept-{name}")
    run_transcript(box, claim(AUTHORS, "$ skillwire validate .\n"))


# -- sources -----------------------------------------------------------------------------------------------------------


def test_git_source_script(box: Sandbox) -> None:
    run_script(box, claim("docs/sources/git.md", "git init -q -b main team-skills"))


def test_packages_pages(box: Sandbox) -> None:
    """The entry-point snippet is the example distribution's; its commands serve what the comments say. `pip install`
    installs into a folder on PYTHONPATH (`--target`), not into the environment the suite shares."""
    snippet = tomllib.loads(claim("docs/sources/packages.md", '[project.entry-points."skillwire.skills"]').text)
    project = tomllib.loads((REPO_ROOT / "examples/packaged-skills/pyproject.toml").read_text(encoding="utf-8"))
    assert snippet["project"]["entry-points"] == project["project"]["entry-points"]
    assert snippet["tool"]["setuptools"] == project["tool"]["setuptools"]
    block = claim("docs/sources/packages.md", "pip install ./examples/packaged-skills")
    site = box.root.parent / "site"
    box.env["PYTHONPATH"] = ":".join(p for p in (str(site), box.env.get("PYTHONPATH", "")) if p)
    lines = [line.split("  #")[0].strip() for line in block.text.splitlines()]
    assert lines[0] == "pip install ./examples/packaged-skills"
    install = box.run(f"python -m pip install --quiet --no-deps --target {site} ./examples/packaged-skills")
    assert install.returncode == 0, install.stdout
    assert "Warning" not in install.stdout, install.stdout  # setuptools' "absent from `packages`" for a data folder
    expected = {
        1: ["skill://release-notes/SKILL.md"],
        2: ["skill://pdf-processing/SKILL.md", "skill://release-notes/SKILL.md"],
        3: ["skill://vendor/release-notes/SKILL.md"],
    }
    for i, uris in expected.items():
        run = box.run(lines[i])  # stdio: the server ends at the end of its (empty) input
        assert run.returncode == 0, run.stdout
        for uri in uris:
            assert uri in run.stdout, run.stdout


def test_gateway_pages(box: Sandbox, tmp_path: Path) -> None:
    [host] = run_script(box, claim("docs/sources/gateway.md", "vendor=mcp:http://127.0.0.1:8001/mcp team="))
    assert "gw:vendor/pdf-processing" in host.stdout or "gw:pdf-processing" in host.stdout, host.stdout
    credentials = tmp_path / "credentials.json"
    credentials.write_text(claim("docs/sources/gateway.md", '"token_file": "secrets/tools.token"').text)
    loaded = load_credentials(str(credentials))
    assert set(loaded) == {"https://tools.example/mcp", "https://maps.example/mcp"}


def test_python_api_scripts(box: Sandbox) -> None:
    run = run_python(box, claim("docs/python-api.md", "SkillsExtension.from_paths").text)
    assert (run.returncode, run.stdout) == (0, ""), run.stderr  # examples/skills: nothing refused
    run = run_python(box, claim("docs/python-api.md", "digest_cache=").text)
    assert (run.returncode, run.stdout) == (0, "5 skills\n"), run.stderr
    assert (box.root / "skills-cache.json").is_file()
    run = run_python(box, claim("docs/sources/memory.md", "MemorySource(files)").text)
    assert (run.returncode, run.stdout) == (0, "['skill://greet/SKILL.md']\n"), run.stderr
    run = run_python(box, claim("docs/sources/generated.md", "GeneratedSkill(").text)  # stdio, empty input: ends
    assert run.returncode == 0, run.stderr


def test_new_source_serving_block(box: Sandbox) -> None:
    """The guide's "Serving it" block continues its example: a tar file's skills, served."""
    import tarfile

    with tarfile.open(box.root / "skills.tar", "w") as tar:
        tar.add(EXAMPLE_SKILLS, arcname="bundle/skills")
    source = find("docs/new-source.md", "class TarSource:").text
    serving = claim("docs/new-source.md", 'TarSource("skills.tar", "bundle/skills")').text
    run = run_python(box, source + serving + "print(len(skills.service.catalog.skills))\n")
    assert (run.returncode, run.stdout) == (0, "5\n"), run.stderr


def test_large_catalogs_example_prints_what_the_page_shows(box: Sandbox) -> None:
    """skillwire choice (issue 14): the search, catalog prompt and search_skills output on the page is real."""
    run = run_python(box, claim("docs/large-catalogs.md", "LocalSkill(").text)
    assert run.returncode == 0, run.stderr
    text = (REPO_ROOT / "docs/large-catalogs.md").read_text(encoding="utf-8")
    shown = text[text.index("LocalSkill(") :].split("```text\n", 1)[1].split("```", 1)[0]
    assert run.stdout == shown


# -- deploying ---------------------------------------------------------------------------------------------------------


def test_token_file_transcript(box: Sandbox) -> None:
    run_transcript(box, claim(DEPLOYING, "$ umask 077; python3 -c 'import secrets"))


def test_production_command_parses() -> None:
    """The production command names hosts this suite cannot reach; argparse accepts it as written."""
    block = claim(DEPLOYING, "skillwire serve /srv/skills --http 0.0.0.0:8000")
    argv = block.text.replace("\\\n", " ").split()
    assert argv[0] == "skillwire"
    parsed = _parser().parse_args(argv[1:])
    assert (parsed.auth_issuer, parsed.public_url) == ("https://id.example.com", "https://skills.example.com")


def test_oauth_transcript(box: Sandbox) -> None:
    block = claim(DEPLOYING, "tools/node/test-oidc-provider.mjs demo-secret")
    steps = transcript(block)
    box.start(steps[0].command, ready="")  # the provider prints its issuer to issuer.json, not to the terminal
    issuer = box.root / "issuer.json"
    box.ports["43343"] = _issuer_port(issuer)
    rest = "".join(f"$ {s.command}\n{s.shown}" for s in steps[1:])
    run_transcript(box, Block(block.page, block.line, block.lang, rest))


def _issuer_port(issuer: Path) -> str:
    """The port of the issuer the provider wrote to `issuer` once it listens (the page shows the one it had then)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            return str(json.loads(issuer.read_text(encoding="utf-8"))["issuer"].rsplit(":", 1)[1])
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    raise AssertionError(f"the provider wrote no issuer to {issuer}")


def test_scopes_example_gives_each_caller_what_the_page_says(box: Sandbox) -> None:
    """skillwire rule (issue 22): ci sees all five, a token with scope skills:billing only the refunds skill (its
    subject plays no part), any other valid token only git-workflow."""
    policy = claim(DEPLOYING, "# scopes.toml").text
    parse_policy(policy, origin="scopes.toml")
    (box.root / "scopes.toml").write_text(policy, encoding="utf-8")
    tokens = {"ci": "subject=ci scopes=skills:read", "billing": "subject=billing scopes=skills:billing", "other": ""}
    (box.root / "tokens.txt").write_text("".join(f"{name}-token-0123456789 {rest}\n" for name, rest in tokens.items()))
    for name in tokens:
        (box.root / f"{name}.token").write_text(f"{name}-token-0123456789\n")
    box.start("skillwire serve examples/skills --http 127.0.0.1:8000 --token-file tokens.txt --scopes scopes.toml")
    seen = {}
    for name in tokens:
        run = box.run(
            f"skillwire inspect http://127.0.0.1:8000/mcp --token-file {name}.token --format json", merged=False
        )
        assert run.returncode == 0, run.stderr
        seen[name] = sorted(skill["uri"] for skill in json.loads(run.stdout)["skills"])
    assert len(seen["ci"]) == 5
    assert seen["billing"] == ["skill://acme/billing/refunds/SKILL.md"]
    assert seen["other"] == ["skill://git-workflow/SKILL.md"]
    text = (REPO_ROOT / DEPLOYING).read_text(encoding="utf-8")
    assert "a token whose line says `scopes=skills:billing` (whatever its subject) only" in text


def test_network_transcripts(box: Sandbox) -> None:
    run_transcript(box, claim(DEPLOYING, "$ skillwire serve examples/skills --http 0.0.0.0:8000"))
    run_transcript(box, claim(DEPLOYING, "--allowed-host skills.internal:8000 --quiet &"))


def test_prometheus_scrape_config_passes_promtool(tmp_path: Path) -> None:
    block = claim(DEPLOYING, "scrape_configs:")
    token = tmp_path / "skillwire.token"
    token.write_text("token\n")
    config = tmp_path / "prometheus.yml"
    config.write_text(block.text.replace("/etc/prometheus/skillwire.token", str(token)), encoding="utf-8")
    assert yaml.safe_load(block.text)["scrape_configs"][0]["job_name"] == "skillwire"
    run = subprocess.run(["promtool", "check", "config", str(config)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


# -- the embedding examples serve reads, in-process (issue 20) --------------------------------------------------------


def _embedding_server(source: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run a block that builds an `MCPServer` named `mcp`, in-process from a folder holding `examples/skills`."""
    (folder / "examples").mkdir(parents=True)
    (folder / "examples" / "skills").symlink_to(EXAMPLE_SKILLS)
    monkeypatch.chdir(folder)
    namespace: dict[str, Any] = {}
    exec(compile(source, "docs", "exec"), namespace)
    return namespace["mcp"]


@pytest.mark.anyio
async def test_embedding_examples_serve_reads_of_skill_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """skillwire choice (issue 20): the servers that embed the extension are whole: a skill file listed by
    resources/list is read by resources/read (the generated one runs without its final `mcp.run()`)."""
    generated = find("docs/sources/generated.md", "GeneratedSkill(").text
    assert generated.endswith("mcp.run()\n")
    blocks = {
        "skill://pdf-processing/SKILL.md": find("docs/python-api.md", "SkillsExtension.from_paths").text,
        "skill://reports/daily/data/today.csv": generated.removesuffix("mcp.run()\n"),
    }
    for uri, source in blocks.items():
        server = _embedding_server(source, tmp_path / uri.split("/")[2], monkeypatch)
        async with Client(server, cache=None) as client:
            listed = [r["uri"] for r in wire(await resources_list(client))["resources"]]
            [read] = wire(await resources_read(client, uri))["contents"]
        assert uri in listed
        assert read["uri"] == uri
    capsys.readouterr()
