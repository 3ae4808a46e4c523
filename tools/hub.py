"""A JupyterHub for a class on one machine: `make hub` (install, then start), `make hub-stop`.

    sudo python3 tools/hub.py install [--students 3] [--prefix /opt/llm-serving-math]
    sudo python3 tools/hub.py start   [--port 8000] [--prefix ...]       # in the foreground; Ctrl-C stops it
    sudo python3 tools/hub.py users   [--prefix ...]                     # the test class's logins and passwords

``install`` (idempotent) makes, under PREFIX:

- ``env/``: a virtual environment of Debian's ``/usr/bin/python3`` (readable by every user: a venv whose interpreter
  lives under ``/root`` cannot be started by students), holding the course (``pip install CHECKOUT[lab,grade]``, not
  editable, so students cannot change it), JupyterHub and ``jupyterhub-idle-culler``; nbgrader's student config
  (course id, exchange) in ``env/etc/jupyter``, which every user's Jupyter reads;
- ``proxy/``: configurable-http-proxy from npm, the proxy JupyterHub starts in front of everyone's server;
- the exchange ``/srv/nbgrader/exchange`` (mode 777, as nbgrader requires) and, for a test class, local accounts
  ``instructor`` and ``student01``...: passwords in ``state/class.txt`` (root only). For a real class, use your
  accounts (PAM, the default here) or NativeAuthenticator (docs/instructor.md);
- the instructor's nbgrader course directory ``~instructor/course`` (``nbgrader-source``, graded, sandboxed).

``start`` runs JupyterHub with ``tools/hub_config.py``: PAM logins for the class, each user's JupyterLab spawned as
that user (LocalProcessSpawner) opening the course's start page, a copy of the chapters and practice notebooks in
each home on first login, nbgrader's Assignments tab for students and the formgrader for the instructor only, and
the idle culler (servers idle for an hour are stopped). Where a class outgrows one machine: docs/instructor.md
(Zero to JupyterHub, the same install steps in a user image).
"""

from __future__ import annotations

import argparse
import os
import pwd
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIX = Path(os.environ.get("HUB_PREFIX", "/opt/llm-serving-math"))
EXCHANGE = Path(os.environ.get("HUB_EXCHANGE", "/srv/nbgrader/exchange"))
INSTRUCTOR = "instructor"
STUDENTS_GROUP = "llm-students"
PYTHON = "/usr/bin/python3"
PROXY_VERSION = "4"
HUB_PACKAGES = ["jupyterhub>=5,<7", "jupyterhub-idle-culler>=1.4"]


def say(text: str) -> None:
    print(f"[hub] {text}", flush=True)


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], check=True, **kwargs)


def need_root() -> None:
    if os.geteuid() != 0:
        sys.exit("error: the hub creates accounts and spawns each user's server as that user: run it as root "
                 "(sudo make hub)")


def students(prefix: Path) -> list[str]:
    listing = prefix / "state" / "class.txt"
    if not listing.exists():
        return []
    return [line.split()[0] for line in listing.read_text().splitlines() if line.strip() and
            line.split()[0] != INSTRUCTOR]


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def make_accounts(prefix: Path, count: int) -> None:
    """Local accounts for a test class: the instructor and student01..NN, each with a random password."""
    state = prefix / "state"
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o700)
    listing = state / "class.txt"
    known = dict(line.split() for line in listing.read_text().splitlines() if line.strip()) if listing.exists() \
        else {}
    subprocess.run(["groupadd", "-f", STUDENTS_GROUP], check=True)
    names = [INSTRUCTOR] + [f"student{n:02d}" for n in range(1, count + 1)]
    for name in names:
        if not _user_exists(name):
            extra = [] if name == INSTRUCTOR else ["-G", STUDENTS_GROUP]
            run("useradd", "-m", "-s", "/bin/bash", *extra, name)
        if name not in known:
            known[name] = secrets.token_urlsafe(12)
            run("chpasswd", input=f"{name}:{known[name]}\n", text=True)
    listing.write_text("".join(f"{name} {password}\n" for name, password in known.items()))
    listing.chmod(0o600)
    say(f"accounts: {', '.join(names)} (passwords in {listing}, readable by root only)")


def install_packages(python: Path, etc_jupyter: Path) -> None:
    """The users' environment, the same for this machine's hub and the Zero to JupyterHub image
    (tools/z2jh/Dockerfile runs `tools/hub.py image`): the course (not editable), nbgrader, JupyterHub and the idle
    culler into ``python``'s environment, and nbgrader's students' config (course id, exchange) in ``etc_jupyter``."""
    say("installing the course, nbgrader, JupyterHub and the idle culler")
    run(python, "-m", "pip", "install", "--quiet", "--no-cache-dir", f"{ROOT}[lab,grade]", *HUB_PACKAGES)
    jupyter = Path(python).parent / "jupyter"
    run(jupyter, "labextension", "disable", "--level=sys_prefix", "@jupyterlite/pyodide-kernel-extension",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    etc_jupyter.mkdir(parents=True, exist_ok=True)
    run(python, "-c", "import sys; from lecture_lib.practice import exercises as e; "
        "open(sys.argv[1], 'w').write(e.STUDENT_CONFIG.format(course_id=e.COURSE_ID, exchange=sys.argv[2]))",
        etc_jupyter / "nbgrader_config.py", EXCHANGE)


def install(prefix: Path, count: int) -> None:
    need_root()
    os.umask(0o022)          # everyone reads and runs the environment; only root writes it
    env = prefix / "env"
    if not (env / "bin" / "python").exists():
        say(f"making {env} from Debian's {PYTHON}")
        run(PYTHON, "-m", "venv", env)
        run(env / "bin" / "python", "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    install_packages(env / "bin" / "python", env / "etc" / "jupyter")
    proxy = prefix / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy"
    if not proxy.exists():
        if shutil.which("npm") is None:
            sys.exit("error: configurable-http-proxy comes from npm, which is missing (apt-get install npm)")
        say("installing configurable-http-proxy from npm")
        run("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", prefix / "proxy",
            f"configurable-http-proxy@{PROXY_VERSION}")
    EXCHANGE.mkdir(parents=True, exist_ok=True)
    EXCHANGE.chmod(0o777)
    make_accounts(prefix, count)
    course = Path(pwd.getpwnam(INSTRUCTOR).pw_dir) / "course"
    if not (course / "nbgrader_config.py").exists():
        say(f"writing the instructor's nbgrader course in {course}")
        run("runuser", "-u", INSTRUCTOR, "--", env / "bin" / "python", "-m", "lecture_lib.practice.exercises",
            "nbgrader-source", ROOT / "solutions", course, "--exchange", EXCHANGE)
    for folder in (ROOT / "notebooks", ROOT / "exercises"):
        target = prefix / "course" / folder.name
        shutil.copytree(folder, target, dirs_exist_ok=True)
    # The sources of graded work for the instructor (the practice problems and the quiz bank), readable by them only.
    instructor = pwd.getpwnam(INSTRUCTOR)
    sources = Path(instructor.pw_dir) / "sources"
    for folder in (ROOT / "solutions", ROOT / "quizzes"):
        if folder.is_dir():
            shutil.copytree(folder, sources / folder.name, dirs_exist_ok=True)
    for path in [sources, *sources.rglob("*")]:
        os.chown(path, instructor.pw_uid, instructor.pw_gid)
    sources.chmod(0o700)
    say(f"installed under {prefix}; start it with: sudo make hub (or {sys.executable} tools/hub.py start)")


def start(prefix: Path, port: int, ip: str) -> None:
    need_root()
    env = prefix / "env"
    if not (env / "bin" / "jupyterhub").exists():
        sys.exit(f"error: no hub installed under {prefix}: run `sudo make hub` (or tools/hub.py install) first")
    state = prefix / "state"
    os.environ.update(HUB_PREFIX=str(prefix), HUB_PORT=str(port), HUB_IP=ip, HUB_ROOT=str(ROOT),
                      HUB_CLASS=" ".join(students(prefix)))
    os.umask(0o022)
    os.chdir(state)
    say(f"JupyterHub on http://{ip}:{port}/ (Ctrl-C stops it and every user's server)")
    os.execv(str(env / "bin" / "jupyterhub"), [str(env / "bin" / "jupyterhub"), "-f", str(ROOT / "tools" / "hub_config.py")])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tools/hub.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["install", "start", "users", "image"],
                        help="image: only the users' environment, into this Python (the Zero to JupyterHub image)")
    parser.add_argument("--prefix", type=Path, default=PREFIX)
    parser.add_argument("--students", type=int, default=3, help="accounts for a test class (install; default 3)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("HUB_PORT", 8000)))
    parser.add_argument("--ip", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 500:
        parser.error(f"--students must be 1 to 500, got {args.students}")
    if not 1 <= args.port <= 65535:
        parser.error(f"--port must be 1 to 65535, got {args.port}")
    if args.command == "install":
        install(args.prefix, args.students)
    elif args.command == "image":
        install_packages(Path(sys.executable), Path(sys.prefix) / "etc" / "jupyter")
    elif args.command == "start":
        start(args.prefix, args.port, args.ip)
    else:
        need_root()
        print((args.prefix / "state" / "class.txt").read_text(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
