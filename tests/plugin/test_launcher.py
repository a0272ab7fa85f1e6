"""bin/deep-research, the plugin's launcher, from a clean temporary HOME.

The first call must create the environment and install the package; later calls must start
fast; a missing or old Python and a failed install must each give one actionable line.

Tests talk only to this machine, so the install cannot fetch the dependencies: the environment
sees this interpreter's packages (linked on ``PYTHONPATH``) and pip installs, with no index, a
wheel of the package built here from the checkout (``DEEP_RESEARCH_PACKAGE``). Building the
package from the plugin root with its dependencies needs the network; measured by hand, not here.
Cost: about 5 s (creating a virtual environment with pip is most of it).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, fake_launcher_env

LAUNCHER = REPO / "bin" / "deep-research"


def _version() -> str:
    for line in (REPO / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise AssertionError("no version in pyproject.toml")


def build_wheel(target: Path) -> Path:
    """A pure-Python wheel of src/deep_research, written directly (no build backend needed)."""
    version = _version()
    dist_info = f"deep_research-{version}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted((REPO / "src" / "deep_research").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(REPO / "src").as_posix()] = path.read_bytes()
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requires = "".join(f"Requires-Dist: {dep}\n" for dep in project["dependencies"])
    files[f"{dist_info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: deep-research\nVersion: {version}\n{requires}"
    ).encode()
    files[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files[f"{dist_info}/entry_points.txt"] = (
        b"[console_scripts]\ndeep-research = deep_research.cli:main\n"
    )
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = target / f"deep_research-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


#: What the view of this interpreter's packages leaves out: the package under test (the
#: environment must install its own copy) and the installer's own tools.
NOT_DEPENDENCIES = (
    "deep_research",
    "__editable__",
    "pip",
    "setuptools",
    "pkg_resources",
    "_distutils_hack",
    "_virtualenv",
)


def dependencies_view(target: Path) -> Path:
    """A folder of links to this interpreter's installed packages but the package itself.

    On ``PYTHONPATH`` it gives the launcher's new environment the dependencies it cannot fetch
    here, whether this interpreter is a system Python or a virtualenv's: the packages of a
    virtualenv are not its base interpreter's, so ``--system-site-packages`` would miss them.
    """
    target.mkdir()
    folders = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    for folder in sorted(folders):
        for entry in sorted(Path(folder).iterdir()):
            name = entry.name
            if name.endswith(".pth") or name.startswith(NOT_DEPENDENCIES):
                continue
            if not (target / name).exists():
                (target / name).symlink_to(entry)
    return target


def clean_env(home: Path, python_dir: Path) -> dict[str, str]:
    """HOME is empty; PATH has only a python3 (this interpreter, not a shim) and the base tools."""
    return {
        "HOME": str(home),
        "PATH": f"{python_dir}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PIP_NO_INDEX": "1",  # never the network, whatever the machine's pip config says
        "PIP_CONFIG_FILE": os.devnull,
    }


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    python_dir = tmp_path / "pybin"
    python_dir.mkdir()
    (python_dir / "python3").symlink_to(Path(sys.executable).resolve())
    return home, python_dir


def launch(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LAUNCHER), *args], capture_output=True, text=True, env=env, check=False, timeout=300
    )


@pytest.mark.slow  # creates a virtual environment with pip
def test_first_call_installs_then_later_calls_install_nothing(
    sandbox: tuple[Path, Path], tmp_path: Path
) -> None:
    home, python_dir = sandbox
    env = clean_env(home, python_dir) | {
        "PYTHONPATH": str(dependencies_view(tmp_path / "dependencies")),
        "DEEP_RESEARCH_PIP_ARGS": "--no-index --no-deps",
        "DEEP_RESEARCH_PACKAGE": str(build_wheel(tmp_path)),
    }
    first = launch(["--version"], env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"deep-research {_version()}"
    # Announced first, then a line as each stage begins, then the time it took.
    lines = first.stderr.splitlines()
    assert lines[0].startswith("deep-research: first run, installing into "), lines
    assert [line.split("] ")[0] for line in lines[1:4]] == [
        "deep-research: [1/3",
        "deep-research: [2/3",
        "deep-research: [3/3",
    ], lines
    assert re.fullmatch(r"deep-research: installed in \d+s", lines[4]) and len(lines) == 5, lines
    venv = home / ".cache" / "deep-research" / "venv"
    assert (venv / ".deep-research-stamp").read_text(encoding="utf-8").startswith(_version())
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import deep_research; print(deep_research.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    assert installed.startswith(str(venv))  # the environment's own copy, not the checkout

    # A later call starts the installed environment as it is: no install line, no pip run
    # (the install log untouched), the same environment. How fast that is: bench_hook.py.
    log = venv.parent / "install.log"
    before = (log.stat().st_mtime_ns, (venv / ".deep-research-stamp").stat().st_mtime_ns)
    again = launch(["--version"], env)
    assert again.returncode == 0 and again.stderr == ""
    assert (log.stat().st_mtime_ns, (venv / ".deep-research-stamp").stat().st_mtime_ns) == before
    # Exit codes pass through: a check that finds violations still exits 1.
    assert (
        launch(["hosts", "check", "https://a.example", "--brief", str(tmp_path)], env).returncode
        == 0
    )


def test_plugin_data_is_preferred_and_no_bootstrap_never_installs(
    sandbox: tuple[Path, Path], tmp_path: Path
) -> None:
    home, python_dir = sandbox
    data = tmp_path / "plugin-data"
    env = clean_env(home, python_dir) | {
        "CLAUDE_PLUGIN_DATA": str(data),
        "DEEP_RESEARCH_NO_BOOTSTRAP": "1",
    }
    done = launch(["--version"], env)
    assert done.returncode == 69
    assert done.stderr.strip() == (
        f"deep-research: not set up yet in {data}/venv; run: deep-research --version"
    )
    assert not data.exists()


def _fake_env(venv: Path, stamp: str) -> None:
    """A ready-looking environment whose Python is this interpreter (the package is installed)."""
    fake_launcher_env(venv, stamp)


@pytest.mark.parametrize("where", ["plugin-data", "user-cache"])
def test_an_environment_set_up_for_hooks_serves_bash_and_back(
    sandbox: tuple[Path, Path], tmp_path: Path, where: str
) -> None:
    # Claude Code sets CLAUDE_PLUGIN_DATA for hooks, not for Bash commands: one environment
    # must serve both, never a second install.
    home, python_dir = sandbox
    stamp = f"{_version()} {REPO.resolve()}"
    env = clean_env(home, python_dir) | {"DEEP_RESEARCH_NO_BOOTSTRAP": "1"}
    if where == "plugin-data":
        _fake_env(home / ".claude" / "plugins" / "data" / "deep-research-inline" / "venv", stamp)
    else:
        _fake_env(home / ".cache" / "deep-research" / "venv", stamp)
        env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "unused-plugin-data")
    done = launch(["--version"], env)
    assert (done.returncode, done.stdout.strip()) == (0, f"deep-research {_version()}"), done.stderr
    assert not (tmp_path / "unused-plugin-data").exists()


def test_an_environment_for_another_plugin_root_is_not_borrowed(sandbox: tuple[Path, Path]) -> None:
    home, python_dir = sandbox
    _fake_env(
        home / ".claude" / "plugins" / "data" / "other" / "venv", f"{_version()} /somewhere/else"
    )
    done = launch(["--version"], clean_env(home, python_dir) | {"DEEP_RESEARCH_NO_BOOTSTRAP": "1"})
    assert done.returncode == 69 and "not set up yet" in done.stderr


@pytest.mark.parametrize("kind", ["missing", "old"])
def test_missing_or_old_python_is_one_actionable_line(
    sandbox: tuple[Path, Path], tmp_path: Path, kind: str
) -> None:
    home, python_dir = sandbox
    fake = tmp_path / "python3.9"
    fake.write_text(
        "#!/bin/sh\n# reports Python 3.9: fails the >= 3.11 check\nexit 1\n", encoding="utf-8"
    )
    fake.chmod(0o755)
    env = clean_env(home, python_dir) | {
        "DEEP_RESEARCH_PYTHON": str(fake) if kind == "old" else str(tmp_path / "nowhere")
    }
    done = launch(["--version"], env)
    assert done.returncode == 69
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "needs Python 3.11 or newer" in lines[0] and "DEEP_RESEARCH_PYTHON" in lines[0]


@pytest.mark.slow  # creates a virtual environment with pip
def test_failed_install_is_one_actionable_line_and_leaves_nothing(
    sandbox: tuple[Path, Path], tmp_path: Path
) -> None:
    home, python_dir = sandbox
    env = clean_env(home, python_dir) | {
        "DEEP_RESEARCH_PIP_ARGS": "--no-index",  # dependencies cannot be found offline
        "DEEP_RESEARCH_PACKAGE": str(build_wheel(tmp_path)),
    }
    done = launch(["--version"], env)
    assert done.returncode == 69
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("deep-research: first run, installing")
    # The stages up to pip's, then one line with the fix.
    assert [line.split("] ")[0] for line in lines[1:3]] == [
        "deep-research: [1/3",
        "deep-research: [2/3",
    ], lines
    assert len(lines) == 4 and "failed (see " in lines[3] and "retry" in lines[3]
    data = home / ".cache" / "deep-research"
    assert (data / "install.log").is_file()
    assert not (data / "venv").exists() and not (data / "venv.new").exists()
    assert not (data / ".install.lock").exists()
