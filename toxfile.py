"""tox plugin (tox 4 loads ``toxfile.py`` beside ``tox.ini`` as an inline plugin): one installed environment.

Every env that runs passgate (``py``, ``conformance``, ``coverage``, ``bench``)
installs the same thing: passgate with its ``test`` extra, i.e. torch and
executorch, about 1.7 GB. As separate envs a fresh machine downloads and
installs that once per env. ``tox.ini`` points them at one folder
(``env_dir = {toxworkdir}/py``), but tox 4 records which env built a folder
and wipes it when another env name sets it up (tox#2788: "env type changed
from {'name': 'py', ...} to {'name': 'conformance', ...}"), so each switch
between envs would reinstall everything.

The ``shared-virtualenv`` runner here is tox's own virtualenv runner with two
changes:

- for an env whose folder is not its own (``env_dir`` not
  ``{toxworkdir}/<env name>``), the build record (``.tox-info.json``) names
  the folder, not the env, so ``py`` and ``conformance`` see one environment
  and reuse it (and it records tox's runner type, so a folder tox's plain
  runner built is reused as it is, and the other way round); what tox
  compares beyond the name (interpreter, deps, the package's requirements)
  is compared as usual, so an env that asked for other dependencies would
  still be rebuilt: envs sharing a folder must install the same things
  (they all inherit ``[testenv]``);
- setting a folder up holds a lock (``{toxworkdir}/<folder>.lock``), so
  ``tox -p`` or two terminals do not install into it at once (the second
  finds it installed and only reinstalls the editable passgate).

Logs and temporary files stay per env (``{toxworkdir}/<env name>/log``,
tox's defaults). Before the first install of an env's requirements a line
says what goes where, and pip's own lines (``Collecting``, ``Downloading
torch-... (SIZE)``, ``Installing``) are shown as they come: a first install is
minutes of downloads that tox otherwise runs silently (its output only with
``-vv``).
"""

from __future__ import annotations

import fcntl
import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from tox.plugin import impl
from tox.tox_env.info import Info
from tox.tox_env.python.virtual_env.runner import VirtualEnvRunner

__all__ = ["SharedVirtualEnvRunner", "tox_register_tox_env", "tox_on_install"]

_LOG = logging.getLogger(__name__)
# Requirements whose install is worth announcing: the multi-GB part of a first setup.
_LARGE = ("torch", "executorch", "torchao")


class _RecordedAs(Info):
    """A build record that names the env folder instead of the env (every env sharing it matches), and tox's
    runner type instead of this subclass (a folder tox's own runner built is reused, and the other way round)."""

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(path)
        self._as = {"name": name, "type": VirtualEnvRunner.__name__}

    @contextmanager
    def compare(self, value: Any, section: str, sub_section: str | None = None) -> Iterator[tuple[bool, Any]]:
        if section == "ToxEnv" and isinstance(value, dict) and "name" in value:
            value = {**value, **self._as}
        with super().compare(value, section, sub_section) as result:
            yield result


class SharedVirtualEnvRunner(VirtualEnvRunner):
    """tox's virtualenv runner, able to share its folder with other envs (see the module docstring)."""

    @staticmethod
    def id() -> str:
        return "shared-virtualenv"

    @property
    def _shared(self) -> bool:
        return self.env_dir != self.core["work_dir"] / self.name

    @property
    def cache(self) -> Info:
        return _RecordedAs(self.env_dir, self.env_dir.name if self._shared else self.name)

    @contextmanager
    def execute_async(self, cmd, stdin, show=None, cwd=None, run_id="", executor=None, *, capture=False):  # noqa: ANN001
        # pip's own lines (Collecting / Downloading NAME (SIZE) / Installing) shown live on a first install of the
        # requirements, the minutes-long step; reinstalls and checks stay as quiet as tox keeps them
        if show is None and run_id in ("install_package_deps", "install_deps") and not _installed_before(
                self, run_id.removeprefix("install_")):
            show = True
        with super().execute_async(cmd, stdin, show, cwd, run_id, executor, capture=capture) as status:
            yield status

    def setup(self) -> None:
        # Every env of this runner locks, the folder's own env too: `tox -p -e py,conformance` sets up one at a time.
        if self._run_state["setup"]:
            super().setup()
            return
        lock_path = self.env_dir.parent / f"{self.env_dir.name}.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with lock_path.open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            super().setup()


@impl
def tox_register_tox_env(register) -> None:  # noqa: ANN001 - tox's ToxEnvRegister
    register.add_run_env(SharedVirtualEnvRunner)


@impl
def tox_on_install(tox_env, arguments, section: str, of_type: str) -> None:  # noqa: ANN001 - tox's types
    """One line before the first install of a run env's requirements: what, where, and how to watch pip
    (tox names the pip command only when it starts, then stays silent for the minutes the download takes)."""
    if not isinstance(tox_env, VirtualEnvRunner):
        return  # the packaging env's build requirements: small, and tox names them
    # The package's own requirements (torch, executorch, ...) are installed with it, recorded as package_deps.
    recorded_as = "package_deps" if of_type == "package" else of_type
    if _installed_before(tox_env, recorded_as):
        return  # pip only checks (or adds what changed)
    if of_type == "package":
        names = [_name(r) for p in _as_list(arguments) for r in getattr(p, "deps", ())]
    elif hasattr(arguments, "lines"):
        names = [_name(line) for line in arguments.lines() if line.strip() and not line.startswith("-")]
    else:
        names = [_name(a) for a in _as_list(arguments)]
    if not names:
        return
    large = [n for n in names if n.lower() in _LARGE]
    what = f"{len(names)} requirements" + (f", {' + '.join(large)} among them (~1.7 GB)" if large else "")
    _LOG.warning("first install of its %s into %s: %s; pip's progress follows",
                 recorded_as.replace("_", " "), tox_env.env_dir, what)


def _installed_before(tox_env, of_type: str) -> bool:  # noqa: ANN001
    """Whether tox recorded an install of ``of_type`` (deps, package_deps) in the env's folder."""
    recorded = Info(tox_env.env_dir)._content  # noqa: SLF001 - tox's record of what it installed there
    return any(isinstance(v, dict) and of_type in v for v in recorded.values())


def _name(requirement) -> str:  # noqa: ANN001 - packaging's Requirement, or text
    name = getattr(requirement, "name", None)
    if name:
        return str(name)
    text = str(requirement)
    for sep in "=<>!~[; ":
        text = text.split(sep)[0]
    return text


def _as_list(arguments) -> list:  # noqa: ANN001
    try:
        return list(arguments)
    except TypeError:
        return [arguments]
