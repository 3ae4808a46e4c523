"""Where a student's code runs at autograde: an IPython kernel inside bubblewrap, with bounded resources.

nbgrader's own documentation warns that autograding executes the students' code with the grader's rights. The
course's grader (:mod:`lecture_lib.practice.grading`) starts each submission's kernel through
:class:`SandboxKernelManager` instead, which wraps the kernel's command in `bubblewrap
<https://github.com/containers/bubblewrap>`_ (``bwrap``, Debian's ``bubblewrap`` package) and ``prlimit``:

- **files**: a fresh root holding only ``/usr``, ``/etc``, the Python installation, the course library's own
  folder and the derivation cache, all read-only; ``$HOME`` (the working folder) and ``/tmp`` are small empty
  tmpfs folders thrown away with the kernel. The course directory, the gradebook, the source and release
  notebooks, other submissions, the exchange and the instructor's home are not there at all;
- **network**: a network namespace of its own, with no interface but a loopback that reaches nothing;
- **processes**: a PID namespace of its own, killed whole when the kernel ends (``--die-with-parent``; no process
  outlives its notebook), and at most :attr:`Limits.tasks` tasks (threads included) for the user it runs as;
- **user**: when the grader runs as root, each kernel runs as a user id of its own with no account
  (:data:`SANDBOX_UIDS`), so the task limit bites and one kernel's fork bomb does not use up another's; as any other
  user, it runs as that user with the limit set above what the user already runs;
- **memory, disk, time**: address space, file size and CPU seconds bounded by ``prlimit``; the tmpfs folders
  have a fixed size; the kernel talks to the grader over Unix sockets in a private folder (ZeroMQ's ``ipc``
  transport), since it has no network to share.

Without ``bwrap``, or where it cannot create namespaces (some containers), starting a kernel raises
:class:`SandboxUnavailable` naming what is missing: nothing runs unsandboxed unless the course's configuration
says so (``c.SandboxedExecute.require_sandbox = False``, for a machine that is itself a throwaway container;
docs/instructor.md). ``python -m lecture_lib.practice.sandbox`` says whether the sandbox works here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Limits", "SandboxUnavailable", "command", "problem", "readable_paths"]

#: As root, each kernel runs as a user id of its own from this range, with no account: the task limit counts tasks
#: per user id, so one student's fork bomb cannot use up another sandbox's tasks (as `nobody` they would share them).
SANDBOX_UIDS = range(200_000, 300_000)


def fresh_uid() -> int:
    """A user id for one sandboxed kernel (root only): random in :data:`SANDBOX_UIDS`, not in use by any process."""
    import secrets

    busy = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                busy.add(os.stat(f"/proc/{entry}").st_uid)
            except OSError:
                continue
    while True:
        uid = SANDBOX_UIDS[secrets.randbelow(len(SANDBOX_UIDS))]
        if uid not in busy:
            return uid
HOME = "/home/student"


#: The largest message the grader takes from a sandboxed kernel: a chapter's figure is about 0.1 MB; a 500 MB
#: display drove nbgrader to 1.6 GB before this bound.
MAX_MESSAGE_BYTES = 32 * 2**20


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run here; the message says what is missing and what to do."""


@dataclass(frozen=True)
class Limits:
    """Bounds on one student's kernel (all per kernel, except ``tasks``, which is per user)."""

    memory_bytes: int = 4 * 2**30        # address space: NumPy, SymPy and matplotlib use about 1.5 GiB of it
    tasks: int = 128                     # processes and threads: the kernel itself runs about a dozen
    file_bytes: int = 64 * 2**20         # largest file it may write
    scratch_bytes: int = 64 * 2**20      # size of each of $HOME and /tmp
    cpu_seconds: int = 600               # CPU time of the whole kernel
    open_files: int = 256

    def __post_init__(self):
        for name, value in vars(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive whole number, got {value!r}")


def _bwrap() -> str | None:
    return shutil.which("bwrap")


def problem() -> str | None:
    """Why the sandbox cannot run on this machine, or None when it can (a real ``bwrap`` run is tried)."""
    bwrap = _bwrap()
    if bwrap is None:
        return ("bubblewrap is not installed (no bwrap on PATH): install it (Debian/Ubuntu: apt-get install "
                "bubblewrap) and autograde again")
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is not on PATH: install util-linux"
    trial = subprocess.run([bwrap, *_namespaces(), "--ro-bind", "/", "/", "true"], capture_output=True, text=True)
    if trial.returncode != 0:
        return (f"bwrap cannot create its namespaces here ({trial.stderr.strip() or trial.returncode}): user "
                "namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1) or the container forbids "
                "them; run autograde on a machine or VM where they work")
    return None


def _namespaces() -> list[str]:
    if os.geteuid() == 0:     # real root: no user namespace, so the kernel can drop to a user id of its own for real
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    return ["--unshare-all"]


def readable_paths() -> list[Path]:
    """What a student's kernel may read: the Python installation and the environment (sys.base_prefix,
    sys.prefix), the course library's own folder, the folder it is imported from when that is an editable install's
    link tree, and the derivation cache. Nothing else on sys.path: nbgrader puts the course directory there (it
    loads nbgrader_config.py from it), and the checkout's root holds solutions/."""
    import lecture_lib
    from lecture_lib import formula

    package = Path(lecture_lib.__file__).resolve().parent
    places = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), package}
    for entry in sys.path:          # an editable install's link tree: a folder holding only links to the package
        folder = Path(entry).resolve() if entry else None
        if folder is not None and folder != package.parent and (folder / "lecture_lib").is_dir() \
                and not (folder / "solutions").exists():
            places.add(folder)
    cache = formula._cache_folder()
    try:
        if cache.is_dir() and formula._trusted(cache):
            places.add(cache)
    except OSError:            # a cache folder this user cannot even look at: the kernel derives afresh
        pass
    ordered = sorted(places, key=lambda p: (len(p.parts), str(p)))
    return [p for p in ordered if not any(p != q and p.is_relative_to(q) for q in ordered)]


def answer_key_paths() -> list[Path]:
    """The folders holding the answer key (``lecture_lib/practice/problems``: every problem's ``expected``), as they
    appear in the sandbox: the package's own and an editable install's link tree. The sandbox mounts an empty folder
    over each, so a submission cannot compute its answers with the key, nor ask the self-study checker."""
    import lecture_lib

    found = [Path(lecture_lib.__file__).resolve().parent / "practice" / "problems"]
    for folder in readable_paths():
        linked = folder / "lecture_lib" / "practice" / "problems"
        if linked.is_dir() and linked not in found:
            found.append(linked)
    return [path for path in found if path.is_dir()]


def _own_tasks(uid: int) -> int:
    """Tasks (threads included) the user runs now: RLIMIT_NPROC counts them all."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry}/task"))
            except OSError:
                continue
    return count


def _parents(path: Path) -> list[str]:
    return [str(parent) for parent in reversed(path.parents) if str(parent) != "/"]


def command(argv: list[str], *, run_dir: str | Path, student: str = "", limits: Limits = Limits(),
            env: dict | None = None, uid: int | None = None) -> list[str]:
    """``argv`` (a kernel's command) wrapped so that it runs sandboxed; ``run_dir`` is the one folder it may
    write outside its tmpfs (its connection file and sockets); as root it runs as ``uid`` (default: the run folder's
    owner, see :func:`private_run_dir`). Raises :class:`SandboxUnavailable`."""
    reason = problem()
    if reason:
        raise SandboxUnavailable(f"The autograde sandbox cannot run: {reason}. Nothing was run unsandboxed.")
    if not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError(f"argv must be a non-empty list of strings, got {argv!r}")
    run_dir = Path(run_dir).resolve()
    root = os.geteuid() == 0
    args = [_bwrap(), *_namespaces(), "--die-with-parent", "--new-session", "--clearenv",
            "--proc", "/proc", "--dev", "/dev", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in ("lib", "lib64", "lib32", "bin", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += ["--perms", "0755", "--dir", str(Path(HOME).parent)]
    for folder in (HOME, "/tmp"):      # before the binds: the run folder may live under /tmp
        args += ["--perms", "1777", "--size", str(limits.scratch_bytes), "--tmpfs", folder]
    made = {"/tmp", "/home", HOME}
    for place in [*readable_paths(), run_dir]:
        for parent in _parents(place):
            if parent not in made and not parent.startswith(("/usr/", "/etc/")) and parent not in ("/usr", "/etc"):
                args += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        args += ["--bind" if place == run_dir else "--ro-bind", str(place), str(place)]
    for key in answer_key_paths():      # after the binds, so the empty folder covers the key
        args += ["--perms", "0555", "--tmpfs", str(key)]
    settings = {"HOME": HOME, "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
                "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/matplotlib", "IPYTHONDIR": "/tmp/ipython",
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                "PYTHONDONTWRITEBYTECODE": "1", "LECTURE_PROGRESS_FILE": "off",
                "NBGRADER_EXECUTION": "autograde", "LECTURE_CACHE_DIR": str(Path(
                    os.environ.get("LECTURE_CACHE_DIR") or Path.home() / ".cache" / "lecture_lib"))}
    if student:
        settings["LECTURE_STUDENT"] = student
    settings.update(env or {})
    for name, value in settings.items():
        args += ["--setenv", name, str(value)]
    args += ["--chdir", HOME, "--"]
    if root:
        uid = uid if uid is not None else run_dir.stat().st_uid
        if uid not in SANDBOX_UIDS:
            raise ValueError(f"uid must be one of the sandbox's own user ids ({SANDBOX_UIDS.start}..."
                             f"{SANDBOX_UIDS.stop - 1}), got {uid!r}")
    else:
        uid = os.getuid()
    tasks = limits.tasks + (0 if root else _own_tasks(uid))
    if root:
        args += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        args[1:1] = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    args += ["prlimit", f"--as={limits.memory_bytes}", f"--nproc={tasks}", f"--fsize={limits.file_bytes}",
             f"--cpu={limits.cpu_seconds}", f"--nofile={limits.open_files}", "--core=0", "--", *argv]
    return args


def private_run_dir() -> Path:
    """A new folder for one kernel's connection file and sockets, owned by the user the kernel runs as (as root: a
    fresh user id of its own, :func:`fresh_uid`)."""
    folder = Path(tempfile.mkdtemp(prefix="lecture-sandbox-"))
    if os.geteuid() == 0:
        uid = fresh_uid()
        os.chown(folder, uid, uid)
    return folder


# ------------------------------------------------------------------ the kernel manager nbgrader uses

def _kernel_manager_class():
    import zmq
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import Type, Unicode

    class SandboxKernelClient(AsyncKernelClient):
        """The grader's end of a sandboxed kernel: its sockets refuse any message over :data:`MAX_MESSAGE_BYTES`
        (ZeroMQ drops it and the connection), so one huge output cannot fill the grader's memory."""

        def _create_connected_socket(self, channel, identity=None):
            context = self.context
            original = context.socket

            def bounded(kind, *args, **kwargs):
                sock = original(kind, *args, **kwargs)
                sock.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
                return sock

            context.socket = bounded
            try:
                return super()._create_connected_socket(channel, identity=identity)
            finally:
                del context.socket          # the context's own method again

    class SandboxKernelManager(AsyncKernelManager):
        """An ``AsyncKernelManager`` whose kernel runs in :func:`command`'s sandbox, over ``ipc`` sockets in a
        private folder, interrupted by message (a signal cannot reach a process in another session)."""

        client_factory = Type(klass=AsyncKernelClient, default_value=SandboxKernelClient)
        student = Unicode("", help="the student whose submission this kernel runs (sets $LECTURE_STUDENT)")
        numbers = Unicode("", help="that student's numbers as JSON (sets $LECTURE_NUMBERS: the key is not there)")

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._run_dir = private_run_dir()
            self.transport = "ipc"
            self.connection_file = str(self._run_dir / "kernel.json")
            self.ip = str(self._run_dir / "kernel-ipc")

        @property
        def kernel_spec(self):
            spec = super().kernel_spec
            if spec is not None:
                spec.interrupt_mode = "message"
            return spec

        def format_kernel_cmd(self, extra_arguments=None):
            argv = super().format_kernel_cmd(extra_arguments)
            if os.path.exists(self.connection_file) and os.geteuid() == 0:
                owner = self._run_dir.stat().st_uid
                os.chown(self.connection_file, owner, owner)
            return command(argv, run_dir=self._run_dir, student=self.student,
                           env={"LECTURE_NUMBERS": self.numbers} if self.numbers else None)

        def cleanup_resources(self, restart=False):
            super().cleanup_resources(restart=restart)
            if not restart:
                shutil.rmtree(self._run_dir, ignore_errors=True)

    return SandboxKernelManager


def __getattr__(name):
    if name == "SandboxKernelManager":      # built on first use: jupyter_client is the grade extra's
        value = _kernel_manager_class()
        globals()[name] = value
        return value
    raise AttributeError(name)


def main(argv: list[str] | None = None) -> int:
    """``python -m lecture_lib.practice.sandbox``: say whether student code can be sandboxed here, and try it."""
    reason = problem()
    if reason:
        print(f"The autograde sandbox cannot run here: {reason}.")
        return 1
    run_dir = private_run_dir()
    try:
        probe = ("import os, socket; print('user', os.getuid());"
                 "print('course folder holds:', sorted(os.listdir(os.environ['PROBE'])) if "
                 "os.path.isdir(os.environ['PROBE']) else 'nothing');"
                 "s = socket.socket();\ntry:\n s.connect(('1.1.1.1', 80)); print('network: reachable')\n"
                 "except OSError as e: print('network: none')")
        done = subprocess.run(command([sys.executable, "-c", probe], run_dir=run_dir,
                                      env={"PROBE": str(Path.cwd())}), capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    print(done.stdout.strip() or done.stderr.strip())
    print("The autograde sandbox works here." if done.returncode == 0 else "The sandbox failed to start.")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
