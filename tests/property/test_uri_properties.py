"""Properties of the skill:// parser and canonical form, for every input string.

`canonical_uri` is what keeps a request from naming a path the catalog did not publish: the
server looks a read up by exact match on its canonical URI, and whatever maps a URI to a file
(the host's cache, a pull) joins its decoded segments onto a folder. So for any string, either
InvalidSkillUri is raised or the answer is canonical (a fixed point), plain RFC 3986, and
contained: no '.'/'..' segment, no encoded separator, no control character, nothing that climbs
out of a folder it is joined onto. The strings are built from the tokens path tricks are made of.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote_to_bytes

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skillwire.cache.store import SkillCache
from skillwire.core.errors import InvalidSkillUri
from skillwire.core.uri import (
    MAX_URI_LENGTH,
    PREFIX,
    _normal_uri_general,
    canonical_uri,
    file_uri,
    normal_uri,
    skill_root_of,
)

# Pieces of path tricks: dots and separators, raw and percent-encoded in both cases, overlong
# UTF-8, Unicode look-alikes of '.' and '/', controls, surrogates, query/fragment/authority marks.
TOKENS = (
    "a", "b", "Z", "0", "-", "_", "~", "SKILL.md", "x.md", "é", "名",
    "/", "//", ".", "..", "...", "%", "%%", "%2", "%2e", "%2E", "%2e%2e", "%2E%2e", ".%2e", "%2f", "%2F",
    "%5c", "%5C", "\\", "%00", "%0a", "%7f", "%c2%85", "%25", "%252e", "%252f", "%41", "%7e", "%7E",
    "%c0%ae", "%c0%af", "%e0%80%ae", "%ff", "%fe%ff", "%C3%A9", "%e2%80%a4", "%ef%bc%8e", "%e2%88%95",
    "\u2024", "\uff0e", "\u2215", "\u2044", "\uff0f", "\u29f8", "\ufe52", "\u3002",
    "\x00", "\t", "\n", "\r", "\x1b", "\x7f", "\u0085", "\u2028", "\u202e", "\u200b", "\ufeff",
    "\ud800", "\udfff", "\U0001f600",
    "?", "#", "@", ":", "[", "]", ";", "=", "&", "+", ",", "!", "$", "'", "(", ")", "*", " ",
    "user:pw@", "host:80", "[::1]", "..;", ";..", "%3f", "%23", "%40",
)  # fmt: skip
SCHEMES = (
    "skill://", "skill://", "skill://", "SKILL://", "Skill://", "skill:/", "skill:", "skill:///",
    "skill:\\\\", " skill://", "file://", "https://", "", "//", "skill://./", "skill://../",
)  # fmt: skip

adversarial_uris = st.one_of(
    st.builds(lambda s, parts: s + "".join(parts), st.sampled_from(SCHEMES), st.lists(st.sampled_from(TOKENS))),
    st.builds(lambda parts: PREFIX + "/".join(parts), st.lists(st.sampled_from(TOKENS), min_size=1)),
    st.builds(lambda tail: PREFIX + tail, st.text()),
    st.builds(lambda tail: PREFIX + tail, st.text(st.characters(codec="utf-8", categories=None), max_size=40)),
    st.builds(lambda tail: PREFIX + "a/" + tail, st.text(st.characters(min_codepoint=0, max_codepoint=0xDFFF))),
    st.text(),
)

# RFC 3986: a canonical path holds only unreserved, sub-delims, ':', '@', '/' and %XX (upper-case hex).
_PLAIN_OR_ENCODED = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})+")
_ENCODED_SEPARATOR = re.compile(r"%(?:2[Ff]|5[Cc])")


def _canonical_or_none(uri: str) -> str | None:
    """canonical_uri(uri), or None when it refuses; any exception other than InvalidSkillUri fails the test."""
    try:
        return canonical_uri(uri)
    except InvalidSkillUri:
        return None


def _decoded_segments(canonical: str) -> list[str]:
    return [unquote_to_bytes(s).decode("utf-8") for s in canonical[len(PREFIX) :].split("/")]


@given(adversarial_uris)
@example("skill://a/\ud800")  # found by this test: raised UnicodeEncodeError
@example("skill://a/" + "\u00e9" * 2000)  # found by this test: canonical form over the limit, refused when re-parsed
def test_every_string_is_refused_or_canonicalised_to_a_contained_fixed_point(uri: str) -> None:
    """skillwire guarantee (Resource Mapping): any request URI is refused, or canonical, idempotent and contained."""
    canonical = _canonical_or_none(uri)
    if canonical is None:
        return
    assert canonical.startswith(PREFIX)
    assert len(canonical) <= MAX_URI_LENGTH, "a canonical URI the parser itself would refuse as too long"
    assert canonical_uri(canonical) == canonical, "canonical form is not a fixed point"
    path = canonical[len(PREFIX) :]
    assert _PLAIN_OR_ENCODED.fullmatch(path), f"raw character outside RFC 3986 in {canonical!r}"
    assert not _ENCODED_SEPARATOR.search(path)
    root = "/srv/skills"
    segments = _decoded_segments(canonical)
    for segment in segments:
        assert segment not in ("", ".", "..")
        assert "/" not in segment
        assert "\\" not in segment
        assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in segment)
    joined = posixpath.normpath(posixpath.join(root, *segments))
    assert joined.startswith(root + "/"), f"{canonical!r} leaves the folder it is joined onto: {joined!r}"
    assert len(joined) - len(root) - 1 == len("/".join(segments)), "normpath changed the path: a segment moved"


@given(adversarial_uris)
def test_skill_root_of_any_string_is_refused_or_a_prefix_of_it(uri: str) -> None:
    """skillwire guarantee: skill_root_of never raises anything but InvalidSkillUri and only cuts /SKILL.md off."""
    try:
        root = skill_root_of(uri)
    except InvalidSkillUri:
        return
    assert uri == root + "/SKILL.md"


@given(adversarial_uris)
@example("skill://team-a/area-3/skill-00001/references/doc-0.md")  # the hot path: a plain URI
@example("github://o/r/x/SKILL.md#a")  # a fragment is no plain path
@example("skill://%\ud800")  # found by this test: the general path raised UnicodeEncodeError
def test_the_normal_form_shortcut_agrees_with_the_general_path(uri: str) -> None:
    """skillwire choice (issue 13): the shortcut for plain URIs gives what re-encoding each segment gives."""
    assert normal_uri(uri) == _normal_uri_general(uri)


# Names a folder or file may have on disk (no '/', no NUL, not '.' or '..'), control characters aside.
segment_names = st.text(
    st.characters(exclude_categories=["Cs", "Cc"], exclude_characters="/\\"), min_size=1, max_size=12
).filter(lambda s: s not in (".", ".."))


@st.composite
def respelled(draw: st.DrawFn, segments: list[str]) -> str:
    """The URI of `segments` with each character written literally or percent-encoded (either hex case)."""
    parts = []
    for segment in segments:
        out = []
        for char in segment:
            literal = re.fullmatch(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]", char) is not None
            if literal and not draw(st.booleans()):
                out.append(char)
                continue
            encoded = "".join(f"%{b:02X}" for b in char.encode("utf-8"))
            out.append(encoded.lower() if draw(st.booleans()) else encoded)
        parts.append("".join(out))
    return PREFIX + "/".join(parts)


@given(st.lists(segment_names, min_size=2, max_size=6), st.data())
def test_published_uris_are_canonical_and_every_spelling_of_them_finds_them(
    segments: list[str], data: st.DataObject
) -> None:
    """Resource Mapping: a URI the server publishes (file_uri) is canonical, and equivalent spellings resolve to it."""
    published = file_uri(segments[:1], "/".join(segments[1:]))
    if len(published) > MAX_URI_LENGTH:
        return
    assert canonical_uri(published) == published
    assert canonical_uri(data.draw(respelled(segments))) == published


@given(st.sampled_from(["docs", "a b", ".x", "%2e%2e", "UP", "é"]), adversarial_uris)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_host_cache_paths_stay_inside_the_cache_for_any_uri(tmp_path: Path, origin: str, uri: str) -> None:
    """skillwire guarantee (issue 6): the host cache maps any resource URI to a path inside its root, or refuses it."""
    cache = SkillCache(tmp_path / "cache")
    try:
        path = cache.path_for(origin, uri)
    except InvalidSkillUri:
        return
    root = str(cache.root)
    assert posixpath.normpath(str(path)).startswith(root + "/")
    assert ".." not in path.relative_to(cache.root).parts
