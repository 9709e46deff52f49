"""Generated skills as values: the same rules as every skill, checked when one is made; producers off the loop."""

from __future__ import annotations

import threading

import anyio
import pytest

from skillwire import GeneratedSkill, GeneratedSource, SkillError
from skillwire.core.catalog import GeneratedContent
from skillwire.core.errors import GenerationError
from skillwire.sources.composite import CompositeSource, Member

pytestmark = pytest.mark.anyio


def test_a_generated_skill_breaking_a_name_rule_is_refused_when_made() -> None:
    """Spec MUST (Resource Mapping): the last path segment is the name and follows the naming rules; skillwire
    choice: a generated skill is checked by the same rules as a folder's, when it is made, with the rule's id."""
    with pytest.raises(SkillError) as caught:
        GeneratedSkill("reports/Daily", description="d", instructions="")
    assert caught.value.rule == "name-format"
    with pytest.raises(SkillError) as named:
        GeneratedSkill("reports/daily", description="d", instructions="", frontmatter={"name": "other"})
    assert named.value.rule == "name-mismatch"
    with pytest.raises(SkillError) as control:
        GeneratedSkill("daily", description="d", instructions="", files={"a\x1b[2J.md": "x"})
    assert control.value.rule == "file-name-control"
    with pytest.raises(SkillError) as described:
        GeneratedSkill("daily", description="", instructions="")
    assert described.value.rule == "description-format"


@pytest.mark.parametrize(
    "bad",
    [
        {"path": "a//b"},
        {"path": "../up"},
        {"files": {"SKILL.md": "x"}},
        {"files": {"/abs.md": "x"}},
        {"files": {"a/../b.md": "x"}},
        {"frontmatter": {"score": float("nan")}},
        {"frontmatter": {"when": object()}},
    ],
)
def test_a_generated_skill_with_an_unusable_path_or_field_is_a_value_error(bad: dict[str, object]) -> None:
    """skillwire choice: paths must be plain relative names, SKILL.md is the instructions, and every frontmatter
    field must be JSON that reads back from YAML unchanged (so the entry equals every SKILL.md served)."""
    fields: dict[str, object] = {"path": "daily", "description": "d", "instructions": "", **bad}
    with pytest.raises(ValueError, match=r"."):
        GeneratedSkill(**fields)  # type: ignore[arg-type]


def test_frontmatter_fields_read_back_exactly_as_declared() -> None:
    """Spec MUST (Frontmatter): the entry's frontmatter is identical to SKILL.md's: it is parsed from the very
    bytes served, so keys YAML would read as something else ("yes", "null") and non-ASCII text survive."""
    declared = {"license": "MIT", "yes": True, "null": None, "metadata": {"owner": "ops ✓", "n": "1"}, "a b": [1]}
    skill = GeneratedSkill("daily", description='Café report: 5 € "quoted"', instructions="", frontmatter=declared)
    assert skill.skill.frontmatter == {"name": "daily", "description": 'Café report: 5 € "quoted"', **declared}
    assert skill.skill.to_entry()["resources"] == "dynamic"
    assert skill.head.startswith(b'---\nname: "daily"\n')


def test_two_generated_skills_at_one_path_are_refused_naming_it() -> None:
    """skillwire choice: a path given twice serves the first and refuses the second, saying so."""
    a = GeneratedSkill("daily", description="first", instructions="")
    b = GeneratedSkill("daily", description="second", instructions="")
    catalog = GeneratedSource([a, b]).scan()
    assert [s.frontmatter["description"] for s in catalog.skills] == ["first"]
    [refusal] = catalog.refusals
    assert (refusal.path, refusal.rule) == ("generated/daily", "duplicate-path")


async def test_a_blocking_producer_runs_off_the_event_loop() -> None:
    """skillwire choice: a plain function runs on a worker thread, so one that blocks never stalls the server:
    here it waits for an event only the event loop can set (on the loop it would wait out its 10 s and fail)."""
    released = threading.Event()

    def blocking() -> str:
        return "made" if released.wait(10) else "the loop was blocked"

    skill = GeneratedSkill("daily", description="d", instructions="", files={"data.txt": blocking})
    content = GeneratedSource([skill]).scan().file("skill://daily/data.txt")
    assert content is not None
    assert isinstance(content.content, GeneratedContent)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_set_soon, released)  # the loop sets the event while the producer waits
        made = await content.content.generate(1 << 20)
    assert made == b"made"


async def _set_soon(event: threading.Event) -> None:
    await anyio.sleep(0.05)
    event.set()


async def test_a_producer_over_the_limit_or_returning_no_content_is_a_generation_error() -> None:
    """skillwire choice: content is capped at the limit asked for, and only bytes or text count as content; the
    error names the file, not the producer's value."""
    skill = GeneratedSkill(
        "daily",
        description="d",
        instructions="",
        files={"big.txt": lambda: "x" * 101, "odd.txt": lambda: 42, "text.txt": lambda: "ok ✓"},  # type: ignore[dict-item]
    )
    catalog = GeneratedSource([skill]).scan()

    async def generate(name: str) -> bytes:
        served = catalog.file(f"skill://daily/{name}")
        assert served is not None
        assert isinstance(served.content, GeneratedContent)
        return await served.content.generate(100)

    with pytest.raises(GenerationError, match="over the limit of 100"):
        await generate("big.txt")
    with pytest.raises(GenerationError, match="could not generate") as odd:
        await generate("odd.txt")
    assert "42" not in str(odd.value)
    assert await generate("text.txt") == "ok ✓".encode()


async def test_a_generated_skill_under_a_prefix_stays_dynamic() -> None:
    """Spec MUST (Resources): served beside other sources under a prefix, a generated skill's entry still says
    "dynamic" and its files are still produced at read time."""
    skill = GeneratedSkill("daily", description="d", instructions="", files={"data.txt": lambda: "fresh"})
    catalog = CompositeSource([Member(GeneratedSource([skill]), prefix=("team",))]).scan()
    [published] = catalog.skills
    assert published.to_entry() == {
        "uri": "skill://team/daily/SKILL.md",
        "frontmatter": {"name": "daily", "description": "d"},
        "resources": "dynamic",
    }
    served = catalog.file("skill://team/daily/data.txt")
    assert served is not None
    assert isinstance(served.content, GeneratedContent)
    assert await served.content.generate(100) == b"fresh"


async def test_slow_producers_never_take_the_threads_file_reads_use() -> None:
    """skillwire choice: plain-function producers run a few at a time on a limiter of their own, so fifty reads of
    a slow one leave anyio's shared worker threads (which large file reads and rebuilds use) free meanwhile."""
    release = threading.Event()
    skill = GeneratedSkill("daily", description="d", instructions="", files={"slow.txt": lambda: str(release.wait())})
    served = GeneratedSource([skill], threads=2).scan().file("skill://daily/slow.txt")
    assert served is not None
    assert isinstance(served.content, GeneratedContent)
    content = served.content
    made: list[bytes] = []
    try:
        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(_generate, content, made)
            await anyio.sleep(0.1)  # the reads are under way, two producers running
            with anyio.fail_after(10):  # waits until `release` if the producers held the 40 shared threads
                assert await anyio.to_thread.run_sync(lambda: "free") == "free"
            release.set()
    finally:
        release.set()
    assert made == [b"True"] * 50


async def _generate(content: GeneratedContent, made: list[bytes]) -> None:
    made.append(await content.generate(100))
