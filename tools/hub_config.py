"""JupyterHub's configuration for a class on one machine (started by `tools/hub.py start`, i.e. `sudo make hub`).

Everything it needs comes from the environment tools/hub.py sets: HUB_PREFIX (the install), HUB_PORT, HUB_IP,
HUB_ROOT (the checkout) and HUB_CLASS (the test class's student logins; empty for a real class, which lists its
own in `c.Authenticator.allowed_users` or uses a group, see docs/instructor.md).
"""

import os
import pwd
import shutil
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub's config loader defines it)

PREFIX = Path(os.environ["HUB_PREFIX"])
ENV = PREFIX / "env"
INSTRUCTOR = "instructor"
START_PAGE = "llm-serving-math/notebooks/00_start_here.ipynb"

c.JupyterHub.bind_url = f"http://{os.environ.get('HUB_IP', '127.0.0.1')}:{os.environ.get('HUB_PORT', '8000')}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.db_url = f"sqlite:///{PREFIX / 'state' / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(PREFIX / "state" / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.command = [str(PREFIX / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(PREFIX / "state" / "jupyterhub-proxy.pid")

# Logins: the machine's own accounts (PAM). The test class is listed; the instructor is the hub's admin.
c.JupyterHub.authenticator_class = "jupyterhub.auth.PAMAuthenticator"
c.Authenticator.allowed_users = set(os.environ.get("HUB_CLASS", "").split()) | {INSTRUCTOR}
c.Authenticator.admin_users = {INSTRUCTOR}

# Each user's JupyterLab runs as that user, from the shared environment, and opens the course's start page.
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [str(ENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = f"/lab/tree/{START_PAGE}"
c.Spawner.environment = {"PATH": f"{ENV / 'bin'}:/usr/local/bin:/usr/bin:/bin", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
c.Spawner.args = ["--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                  f"--LabApp.app_settings_dir={os.environ.get('HUB_ROOT', '')}/tools/lab_settings"]
c.Spawner.args += os.environ.get("HUB_SPAWNER_ARGS", "").split()     # e.g. the tests' --LabApp.expose_app_in_browser
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

# Students get nbgrader's Assignments tab; only the instructor gets the formgrader and Create Assignment.
STUDENT_SERVER = {"nbgrader.server_extensions.formgrader": False, "nbgrader.server_extensions.course_list": False,
                  "nbgrader.server_extensions.assignment_list": True,
                  "nbgrader.server_extensions.validate_assignment": True}
STUDENT_LAB_OFF = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                   "@jupyter/nbgrader:course-list"]


def _write(path: Path, text: str, user: pwd.struct_passwd) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for folder in [path, *path.parents]:
        if folder == Path(user.pw_dir):
            break
        os.chown(folder, user.pw_uid, user.pw_gid)


def prepare_home(spawner) -> None:
    """Before a user's first server: a copy of the chapters and practice notebooks in their home, and the
    nbgrader extensions their role gets (written as their own Jupyter config, owned by them)."""
    import json

    user = pwd.getpwnam(spawner.user.name)
    home = Path(user.pw_dir)
    course = home / "llm-serving-math"
    if not course.exists():
        shutil.copytree(PREFIX / "course", course)
        for path in [course, *course.rglob("*")]:
            os.chown(path, user.pw_uid, user.pw_gid)
    if spawner.user.name == INSTRUCTOR:
        spawner.notebook_dir = str(home / "course")
        spawner.default_url = "/lab"
        # The formgrader opens in an iframe of JupyterLab; the single-user server forbids framing by default.
        config = {"ServerApp": {"jpserver_extensions": {},
                                "tornado_settings": {"headers": {
                                    "Content-Security-Policy": "frame-ancestors 'self'"}}}}
        page = {"disabledExtensions": {}}
        # The server runs in the home folder: tell nbgrader (and the formgrader) where the course is.
        _write(home / ".jupyter" / "nbgrader_config.py",
               "c = get_config()  # noqa: F821\nc.CourseDirectory.root = %r\n" % str(home / "course"), user)
    else:
        config = {"ServerApp": {"jpserver_extensions": STUDENT_SERVER}}
        page = {"disabledExtensions": {name: True for name in STUDENT_LAB_OFF}}
    _write(home / ".jupyter" / "jupyter_server_config.json", json.dumps(config, indent=1), user)
    _write(home / ".jupyter" / "labconfig" / "page_config.json", json.dumps(page, indent=1), user)


c.Spawner.pre_spawn_hook = prepare_home

# The idle culler: a server nobody has used for an hour is stopped (its user's files stay).
c.JupyterHub.load_roles = [{"name": "idle-culler", "services": ["idle-culler"],
                            "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}]
c.JupyterHub.services = [{"name": "idle-culler",
                          "command": [str(ENV / "bin" / "python"), "-m", "jupyterhub_idle_culler",
                                      f"--timeout={int(os.environ.get('HUB_CULL_SECONDS', 3600))}"]}]

# `make bench-class` (tools/bench_class.py) drives the class through the hub's API with a token of its own.
if os.environ.get("HUB_BENCH_TOKEN"):
    c.JupyterHub.services.append({"name": "bench-class", "api_token": os.environ["HUB_BENCH_TOKEN"]})
    c.JupyterHub.load_roles.append({"name": "bench-class", "services": ["bench-class"],
                                    "scopes": ["admin:users", "admin:servers", "access:servers", "list:users"]})
