"""Properties of host verification: any one-byte change to what an entry lists is caught.

Integrity and Verification: a host "MUST verify the content against that entry's digest and
size" and "MUST NOT use the unverified content"; Frontmatter Verification: it "MUST parse its
YAML frontmatter and compare it field-by-field against the entry's frontmatter". For generated
content and every kind of one-byte edit (flip a bit, insert, delete, truncate, append), the
edited bytes raise the right VerificationError and the unchanged bytes pass.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from skillwire.core.errors import DigestMismatch, FrontmatterError, FrontmatterMismatch, SizeMismatch, VerificationError
from skillwire.core.frontmatter import parse_skill_md
from skillwire.core.hosting.entry import EntryResource, SkillEntry, parse_entry
from skillwire.core.hosting.verify import verify_bytes, verify_frontmatter
from tests.host import digest_of


@st.composite
def one_byte_edits(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` changed by exactly one edit: a bit flipped, a byte inserted or deleted, a cut, or bytes appended."""
    kinds = ["insert", "append"] + (["flip", "delete", "truncate"] if data else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "append":
        return data + draw(st.binary(min_size=1, max_size=4))
    if kind == "insert":
        at = draw(st.integers(0, len(data)))
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at:]
    if kind == "truncate":
        return data[: draw(st.integers(0, len(data) - 1))]
    at = draw(st.integers(0, len(data) - 1))
    if kind == "delete":
        return data[:at] + data[at + 1 :]
    return data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]


def _check_bytes(record: EntryResource, original: bytes, edited: bytes) -> None:
    """verify_bytes passes `original` and raises the mismatch that fits `edited`: size first, else digest."""
    verify_bytes(record, original)
    expected: type[VerificationError] = SizeMismatch if len(edited) != len(original) else DigestMismatch
    with pytest.raises(expected) as caught:
        verify_bytes(record, edited)
    assert caught.value.uri == record.uri


@given(st.binary(max_size=4096), st.data())
def test_any_one_byte_change_to_a_listed_file_is_a_verification_failure(data: bytes, draw: st.DataObject) -> None:
    """Spec MUST (Integrity and Verification): content that differs from the entry's size or digest is refused."""
    record = EntryResource("skill://pdf-processing/templates/invoice.md", digest_of(data), len(data))
    _check_bytes(record, data, draw.draw(one_byte_edits(data)))


# JSON values of frontmatter fields: numbers within JavaScript's exact integers, finite floats.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(st.characters(exclude_categories=["Cs"]), max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12).filter(
    lambda k: k not in ("name", "description")
)


@st.composite
def skill_files(draw: st.DrawFn) -> tuple[SkillEntry, bytes]:
    """A SKILL.md (frontmatter written as `"key": <JSON>` lines, which YAML 1.2 reads as JSON) and its entry."""
    description = draw(st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40).filter(str.strip))
    fields: dict[str, Any] = {"name": "pdf-processing", "description": description}
    fields.update(draw(st.dictionaries(field_names, json_values, max_size=4)))
    lines = "".join(f"{json.dumps(k)}: {json.dumps(v)}\n" for k, v in fields.items())
    body = draw(st.text(max_size=200))
    return _skill_file(f"---\n{lines}---\n{body}".encode())


def _skill_file(data: bytes) -> tuple[SkillEntry, bytes]:
    """The entry a server publishes for SKILL.md `data` (frontmatter as parsed from it), and the bytes."""
    frontmatter = parse_skill_md(data).frontmatter
    uri = "skill://pdf-processing/SKILL.md"
    listed = [{"uri": uri, "digest": digest_of(data), "size": len(data)}]
    return parse_entry({"uri": uri, "frontmatter": frontmatter, "resources": listed}), data


def _numbers_as_doubles(value: Any) -> Any:
    """JSON numbers as JavaScript holds them (0 and 0.0 are one number); booleans stay booleans."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_numbers_as_doubles(v) for v in value]
    return {k: _numbers_as_doubles(v) for k, v in value.items()}


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: key order aside, numbers compared as doubles."""
    return json.dumps(_numbers_as_doubles(a), sort_keys=True) == json.dumps(_numbers_as_doubles(b), sort_keys=True)


@given(skill_files(), st.data())
def test_any_one_byte_change_to_skill_md_is_caught_by_digest_size_or_frontmatter(
    skill: tuple[SkillEntry, bytes], draw: st.DataObject
) -> None:
    """Spec MUST (Integrity, Frontmatter Verification): an edited SKILL.md fails; one whose digest a server also
    changed still fails on its frontmatter unless that parses to the very same JSON object."""
    entry, data = skill
    assert entry.skill_md is not None
    assert verify_frontmatter(entry, data).body == data.decode().split("\n---\n", 1)[1]
    edited = draw.draw(one_byte_edits(data))
    _check_bytes(entry.skill_md, data, edited)
    # A lying server lists the edited bytes' digest and size but keeps the old frontmatter.
    lying = SkillEntry(entry.uri, entry.frontmatter, (EntryResource(entry.uri, digest_of(edited), len(edited)),))
    try:
        same = _same_json(parse_skill_md(edited).frontmatter, entry.frontmatter)
    except FrontmatterError:
        same = False
    if same:
        verify_frontmatter(lying, edited)
    else:
        with pytest.raises(FrontmatterMismatch):
            verify_frontmatter(lying, edited)


@given(skill_files(), field_names, json_values, st.sampled_from(["change", "add", "remove"]))
@example(  # found by make fuzz: 0 and 0.0 are one JSON number, so this "change" changes nothing
    _skill_file(b'---\n"name": "pdf-processing"\n"description": "0"\n"0": [[0, 0]]\n---\n'), "0", [[0, 0.0]], "change"
)
def test_any_change_to_the_entry_frontmatter_is_caught_naming_the_field(
    skill: tuple[SkillEntry, bytes], field: str, value: Any, how: str
) -> None:
    """Spec MUST (Frontmatter Verification): a field that differs, is added or is missing is a failure naming it."""
    entry, data = skill
    frontmatter = dict(entry.frontmatter)
    if how == "remove":
        field = field if field in frontmatter else "description"
        del frontmatter[field]
    elif how == "change" and field in frontmatter:
        if _same_json(frontmatter[field], value):
            return  # the same value: nothing changed
        frontmatter[field] = value
    else:
        if field in frontmatter:
            return
        frontmatter[field] = value
    with pytest.raises(FrontmatterMismatch) as caught:
        verify_frontmatter(SkillEntry(entry.uri, frontmatter, entry.resources), data)
    assert caught.value.fields == (field,)
