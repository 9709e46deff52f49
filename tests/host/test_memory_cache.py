"""`Host` keeps verified files in memory by default (Lazy Retrieval: hosts SHOULD cache what they retrieve).

In process, over the hostile server's honest scenario, whose request log proves what was (not) read: a file read
again sends no `resources/read`; a changed digest is never answered from memory; the bound holds; the off switch
sends every read; a disk cache sits behind the memory.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from skillwire.cache import MemoryCache, SkillCache
from skillwire.core.errors import SkillChanged
from skillwire.core.hosting.approvals import ApproveLoads
from skillwire.core.hosting.entry import EntryResource
from skillwire.core.hosting.registry import SkillKey
from skillwire.host.host import Host
from tests.support import hostile as h

pytestmark = pytest.mark.anyio

PDF = "skill://pdf-processing/SKILL.md"
INVOICE = "skill://pdf-processing/templates/invoice.md"
ORDER = "skill://pdf-processing/templates/purchase-order.md"
SKILL = "h:pdf-processing"
INVOICE_RECORD = EntryResource(INVOICE, h.digest_of(h.PDF_INVOICE), len(h.PDF_INVOICE))
ORDER_RECORD = EntryResource(ORDER, h.digest_of(h.PDF_PURCHASE_ORDER), len(h.PDF_PURCHASE_ORDER))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _read_all_twice(host: Host) -> None:
    """Load the skill, read both templates, then unload, load and read them again."""
    for _ in range(2):
        await host.load_skill(SKILL)
        assert await host.read_skill_file(SKILL, "templates/invoice.md") == h.PDF_INVOICE
        assert await host.read_skill_file(SKILL, "templates/purchase-order.md") == h.PDF_PURCHASE_ORDER
        host.unload(SKILL)


async def test_a_file_read_again_sends_no_resources_read() -> None:
    """Spec SHOULD (Lazy Retrieval): the second read of each file, SKILL.md included, is answered from memory."""
    server = h.build_hostile_server("honest")
    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server("h", server.server)
        await _read_all_twice(host)
        assert isinstance(host.memory_cache, MemoryCache)
        assert len(host.memory_cache) == 3
    assert server.reads() == [PDF, INVOICE, ORDER]


async def test_a_changed_digest_is_never_answered_from_memory() -> None:
    """Spec MUST (verify before use): after the server changes a file and lists its new digest, the held entry
    changes, and the next read goes to the server for the new bytes; the old ones stay unused in memory."""
    server = h.build_hostile_server("honest")
    changed = b"# Invoice\n\nCustomer:\nAmount:\nDue:\n"
    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server("h", server.server)
        await host.load_skill(SKILL)
        assert await host.read_skill_file(SKILL, "templates/invoice.md") == h.PDF_INVOICE

        (listed,) = (e for e in server.catalog.listed if e["uri"] == PDF)
        (invoice,) = (r for r in listed["resources"] if r["uri"] == INVOICE)
        invoice.update(digest=h.digest_of(changed), size=len(changed))
        server.catalog.files[INVOICE] = changed
        await host.refresh("h")
        with pytest.raises(SkillChanged):  # the held entry no longer answers reads
            await host.read_skill_file(SKILL, "templates/invoice.md")
        await host.load_skill(SKILL)  # approved again, for the new set
        assert await host.read_skill_file(SKILL, "templates/invoice.md") == changed
        assert await host.read_skill_file(SKILL, "templates/invoice.md") == changed
    assert server.reads() == [PDF, INVOICE, INVOICE], "SKILL.md kept its digest; the invoice was read anew, once"


async def test_the_bound_holds_and_a_file_over_the_item_bound_is_read_each_time() -> None:
    """skillwire choice: `memory_cache_bytes` bounds what is charged in all; a file over an eighth of it (here
    SKILL.md, 151 bytes, against 100) is never kept, so each load reads it again."""
    server = h.build_hostile_server("honest")
    bound = 8 * 100
    async with Host(prompt=ApproveLoads(), memory_cache_bytes=bound) as host:
        await host.add_server("h", server.server)
        memory = host.memory_cache
        assert memory is not None
        assert (memory.max_bytes, memory.max_item_bytes) == (bound, 100)
        await _read_all_twice(host)
        assert memory.charged <= bound
        assert memory.get("h", EntryResource(PDF, h.digest_of(h.PDF_MD), len(h.PDF_MD))) is None
        assert memory.get("h", INVOICE_RECORD) is not None or memory.get("h", ORDER_RECORD) is not None
    assert len(h.PDF_MD) > 100
    assert server.reads().count(PDF) == 2


async def test_memory_cache_bytes_zero_sends_every_read() -> None:
    """The off switch: `Host(memory_cache_bytes=0)` keeps nothing; reading a file twice sends two reads."""
    server = h.build_hostile_server("honest")
    async with Host(prompt=ApproveLoads(), memory_cache_bytes=0) as host:
        await host.add_server("h", server.server)
        assert host.memory_cache is None
        await host.load_skill(SKILL)
        for _ in range(2):
            assert await host.read_skill_file(SKILL, "templates/invoice.md") == h.PDF_INVOICE
    assert server.reads() == [PDF, INVOICE, INVOICE]


async def test_memory_sits_in_front_of_the_disk_cache(tmp_path: Path) -> None:
    """skillwire choice: with a disk cache, memory is asked first (the disk copy is not read again while memory
    holds the file); a new host finds the file on disk and keeps it in memory from then on."""
    disk = SkillCache(tmp_path / "cache")
    server = h.build_hostile_server("honest")
    async with Host(prompt=ApproveLoads(), cache=disk) as host:
        await host.add_server("h", server.server)
        await host.load_skill(SKILL)
        await host.read_skill_file(SKILL, "templates/invoice.md")
        on_disk = disk.path_for("h", INVOICE)
        assert on_disk.read_bytes() == h.PDF_INVOICE
        on_disk.unlink()
        assert await host.read_skill_file(SKILL, "templates/invoice.md") == h.PDF_INVOICE
        assert not on_disk.exists(), "answered from memory, not from (or back to) the disk"
    assert server.reads() == [PDF, INVOICE]

    disk.put("h", INVOICE_RECORD, h.PDF_INVOICE)  # as a first run would have left it
    later = h.build_hostile_server("honest")
    async with Host(prompt=ApproveLoads(), cache=SkillCache(tmp_path / "cache")) as host:
        await host.add_server("h", later.server)
        await host.load_skill(SKILL)
        assert await host.read_skill_file(SKILL, "templates/invoice.md") == h.PDF_INVOICE  # from disk
        on_disk.unlink()
        assert await host.read_skill_file(SKILL, "templates/invoice.md") == h.PDF_INVOICE  # from memory
    assert later.reads() == [], "SKILL.md and the invoice came from disk, then from memory"


async def test_removing_a_server_forgets_its_files_in_memory() -> None:
    server = h.build_hostile_server("honest")
    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server("h", server.server)
        await host.load_skill(SKILL)
        await host.read_skill_file(SKILL, "templates/invoice.md")
        await host.remove_server("h")
        assert host.memory_cache is not None
        assert (len(host.memory_cache), host.memory_cache.charged) == (0, 0)
        await host.add_server("h", server.server)
        await host.load_skill(SKILL)
        await host.read_skill_file(SKILL, "templates/invoice.md")
        assert host.registry.get(SkillKey("h", PDF)) is not None
    assert server.reads() == [PDF, INVOICE, PDF, INVOICE]


async def test_reads_answered_from_memory_still_let_other_tasks_run() -> None:
    """skillwire choice: a hit does no I/O, yet each read still yields to the event loop once, so a caller reading
    cached files in a loop cannot starve the tasks beside it (a rollout reader once spun forever on cached reads
    while the timer that would stop it never ran)."""
    server = h.build_hostile_server("honest")
    turns = 0

    async def beside() -> None:
        nonlocal turns
        while True:
            turns += 1
            await anyio.sleep(0)

    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server("h", server.server)
        await host.load_skill(SKILL)
        await host.read_skill_file(SKILL, "templates/invoice.md")
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(beside)
            await anyio.sleep(0)
            before = turns
            for _ in range(20):
                await host.read_skill_file(SKILL, "templates/invoice.md")
            during = turns - before
            tasks.cancel_scope.cancel()
    assert server.reads() == [PDF, INVOICE]
    assert during >= 10, during
