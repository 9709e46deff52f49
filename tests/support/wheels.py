"""Real wheels and real virtual environments for the package source's tests, made offline.

A wheel is a zip archive with a `.dist-info` folder (METADATA, WHEEL, entry_points.txt, RECORD): written
here with `zipfile`, as a build backend would, so no build tool or index is needed. `fresh_venv` makes a
venv with `python -m venv` and installs wheels into it with pip (`--no-deps --no-index`); skillwire and its
dependencies come from the test environment through a `.pth` file, as a venv made with
`--system-site-packages` would see them.

    wheel = build_wheel(tmp_path, "acme-tools", "1.2.0", {"acme_tools/skills/a/SKILL.md": b"..."},
                        {"acme": "acme_tools:skills"})
    python = fresh_venv(tmp_path / "venv", [wheel])
"""

from __future__ import annotations

import base64
import hashlib
import re
import site
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

ENTRY_POINT_GROUP = "skillwire.skills"

_FIXED_TIME = (2026, 1, 1, 0, 0, 0)
_PIP = (sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check")


def build_wheel(
    out_dir: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes],
    entry_points: Mapping[str, str],
    *,
    group: str = ENTRY_POINT_GROUP,
    extra_entries: Mapping[str, bytes] | None = None,
) -> Path:
    """A pure-Python wheel of `files` (paths inside the wheel) declaring `entry_points` (name -> value) in `group`.

    `extra_entries`: zip members written as given, outside RECORD (a hostile archive's odd names).
    """
    stem = re.sub(r"[-_.]+", "_", name)
    dist_info = f"{stem}-{version}.dist-info"
    meta: dict[str, bytes] = {
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: skillwire-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
        f"{dist_info}/entry_points.txt": (
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items())
        ).encode(),
    }
    members = {**files, **meta}
    record = "".join(f"{path},sha256={_record_digest(data)},{len(data)}\n" for path, data in members.items())
    record += f"{dist_info}/RECORD,,\n"
    wheel = out_dir / f"{stem}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in [*members.items(), (f"{dist_info}/RECORD", record.encode())]:
            archive.writestr(zipfile.ZipInfo(path, _FIXED_TIME), data)
        for path, data in (extra_entries or {}).items():
            archive.writestr(zipfile.ZipInfo(path, _FIXED_TIME), data)
    return wheel


def package_files(package: str, skills: Mapping[str, bytes], folder: str = "skills") -> dict[str, bytes]:
    """A package `package` holding `skills` (relative path -> bytes) in its folder `folder`."""
    return {f"{package}/__init__.py": b"", **{f"{package}/{folder}/{rel}": data for rel, data in skills.items()}}


def fresh_venv(where: Path, wheels: Sequence[Path]) -> Path:
    """A new venv at `where` with `wheels` installed by pip (offline, no dependencies); its python executable."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=60)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    # skillwire and its dependencies, from the environment running the tests (after the venv's own packages).
    ours = ", ".join(repr(p) for p in site.getsitepackages())
    Path(purelib, "zz_test_environment.pth").write_text(f"import site; list(map(site.addsitedir, [{ours}]))\n")
    if wheels:
        pip_install(python, wheels)
    return python


def pip_install(python: Path, wheels: Sequence[Path]) -> None:
    """Install (or upgrade to) `wheels` into the environment of `python` with pip (offline, no dependencies)."""
    _pip(python, "install", "--no-deps", "--no-index", *(str(w) for w in wheels))


def pip_uninstall(python: Path, names: Sequence[str]) -> None:
    """Uninstall the distributions `names` from the environment of `python` with pip."""
    _pip(python, "uninstall", "--yes", *names)


def _pip(python: Path, *args: str) -> None:
    subprocess.run([*_PIP, "--python", str(python), *args], check=True, timeout=120, capture_output=True)


def _record_digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
