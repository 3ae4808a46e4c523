"""`sudo make bench-class N=40`: a class of N students on one JupyterHub, pressing Run All at once, then moving sliders.

Each simulated student goes through the hub's own APIs, as a browser would: the hub starts their JupyterLab
(REST: POST /hub/api/users/NAME/server), a session opens Chapter 1 with a kernel (REST: POST /user/NAME/api/sessions),
and the chapter's code cells run one after another over the kernel's websocket (/api/kernels/ID/channels, the Jupyter
messaging protocol), every student starting at the same moment. Then each moves a slider of Chapter 1's first
explorer every few seconds: a move is one execute over the same websocket that sets the slider's value, which runs
the explorer's callback (the new frame) before the kernel replies, so its round trip is what a slider costs the
kernel under that load. One student alone is measured the same way first.

Printed: how long until every Run All finished, slider p50/p90 under load beside alone, the peak memory of the hub,
the proxy and every server and kernel (RSS summed over their processes, sampled every 0.5 s), and failures. Needs the
hub installed (`sudo make hub-install HUB_STUDENTS=N`, done here if missing) and root, like the hub itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
CHAPTER = "llm-serving-math/notebooks/01_batch_size_cost_and_speed.ipynb"
MOVE = """
import gc as _gc
from lecture_lib.explorers.base import Explorer as _E
_x = next(o for o in _gc.get_objects() if isinstance(o, _E) and type(o).__name__ == 'BatchExplorer')
_x.controls['batch'].value = float(2 ** (6 + {step} % 8))
"""


def code_cells(path: Path) -> list[str]:
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


class Kernel:
    """One kernel's websocket, speaking the Jupyter protocol's JSON form."""

    def __init__(self, connection):
        self.connection = connection
        self.session = uuid.uuid4().hex

    async def execute(self, code: str, timeout: float = 600) -> dict:
        msg_id = uuid.uuid4().hex
        await self.connection.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "bench", "session": self.session,
                       "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no execute_reply")
            raw = await asyncio.wait_for(self.connection.read_message(), timeout=left)
            if raw is None:
                raise ConnectionError("the kernel's websocket closed")
            if isinstance(raw, bytes):
                continue        # binary frames (widget buffers) carry no reply
            message = json.loads(raw)
            if message.get("parent_header", {}).get("msg_id") == msg_id and message["msg_type"] == "execute_reply":
                return message["content"]


async def student_run(name: str, base: str, token: str, cells: list[str], start_line: asyncio.Event,
                      moves: int, gap: float, results: dict) -> None:
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest
    from tornado.websocket import websocket_connect

    client = AsyncHTTPClient()         # configured in run_class: one connection per student, not tornado's 10
    headers = {"Authorization": f"token {token}"}
    record = results.setdefault(name, {})
    try:
        await client.fetch(f"{base}/hub/api/users/{name}/server", method="POST", headers=headers, body="{}",
                           raise_error=False, request_timeout=300)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            user = json.loads((await client.fetch(f"{base}/hub/api/users/{name}", headers=headers)).body)
            server = user.get("servers", {}).get("", {})
            if server.get("ready"):
                break
            await asyncio.sleep(1)
        else:
            raise TimeoutError("server not ready in 300 s")
        session = json.loads((await client.fetch(
            f"{base}/user/{name}/api/sessions", method="POST", headers=headers, request_timeout=120,
            body=json.dumps({"path": CHAPTER, "type": "notebook", "kernel": {"name": "python3"}}))).body)
        ws_url = base.replace("http", "ws", 1) + f"/user/{name}/api/kernels/{session['kernel']['id']}/channels"
        connection = await websocket_connect(HTTPRequest(ws_url, headers=headers), max_message_size=512 * 2**20)
        kernel = Kernel(connection)
        await kernel.execute("import os; os.environ['MPLBACKEND'] = 'module://matplotlib_inline.backend_inline'")
        record["ready"] = time.monotonic()
        await start_line.wait()
        began = time.monotonic()
        for cell in cells:
            reply = await kernel.execute(cell)
            if reply.get("status") != "ok":
                raise RuntimeError(f"{reply.get('ename')}: {reply.get('evalue')}")
        record["run_all"] = time.monotonic() - began
        record["run_all_end"] = time.monotonic()
        record["moves"] = []
        for step in range(moves):
            await asyncio.sleep(gap)
            began = time.monotonic()
            reply = await kernel.execute(MOVE.format(step=step + 1))
            if reply.get("status") != "ok":
                raise RuntimeError(f"slider move: {reply.get('ename')}: {reply.get('evalue')}")
            record["moves"].append(time.monotonic() - began)
        connection.close()
    except Exception as error:        # a failure is counted, and the rest of the class goes on
        record["error"] = f"{type(error).__name__}: {error}"


def class_memory(users: list[str]) -> int:
    """RSS of the hub, the proxy and every process the class's users run, in bytes."""
    import psutil

    total = 0
    for process in psutil.process_iter(["username", "cmdline", "memory_info"]):
        info = process.info
        command = " ".join(info.get("cmdline") or [])
        if info.get("username") in users or "jupyterhub" in command or "configurable-http-proxy" in command:
            total += info["memory_info"].rss if info.get("memory_info") else 0
    return total


async def run_class(base: str, token: str, users: list[str], cells: list[str], moves: int, gap: float) -> dict:
    from tornado.httpclient import AsyncHTTPClient

    # Every student's requests at once: tornado's client otherwise queues all but 10 and times the rest out.
    AsyncHTTPClient.configure(None, max_clients=max(10, 2 * len(users)),
                              defaults=dict(connect_timeout=120, request_timeout=600))
    results, line = {}, asyncio.Event()
    peak, sampling = [0], [True]

    async def sample():
        while sampling[0]:
            peak[0] = max(peak[0], await asyncio.to_thread(class_memory, users))
            await asyncio.sleep(0.5)

    sampler = asyncio.create_task(sample())
    tasks = [asyncio.create_task(student_run(u, base, token, cells, line, moves, gap, results)) for u in users]
    while any(not t.done() for t in tasks) and sum("ready" in r or "error" in r for r in results.values()) < len(users):
        await asyncio.sleep(0.5)
    started = time.monotonic()
    line.set()
    await asyncio.gather(*tasks)
    sampling[0] = False
    await sampler
    ends = [r["run_all_end"] for r in results.values() if "run_all_end" in r]
    moves_all = [m for r in results.values() for m in r.get("moves", [])]
    return {"students": len(users), "failures": [f"{u}: {r['error']}" for u, r in results.items() if "error" in r],
            "all_finished": (max(ends) - started) if ends else float("nan"),
            "run_all_median": statistics.median([r["run_all"] for r in results.values() if "run_all" in r] or [0]),
            "slider_p50": percentile(moves_all, 50), "slider_p90": percentile(moves_all, 90),
            "peak_memory": peak[0]}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def stop_servers(base: str, token: str, users: list[str]) -> None:
    import requests

    for user in users:
        requests.delete(f"{base}/hub/api/users/{user}/server", headers={"Authorization": f"token {token}"},
                        timeout=120)


def main(argv=None) -> int:
    import requests

    from browser_support import free_port

    parser = argparse.ArgumentParser(prog="tools/bench_class.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, nargs="+", default=[40])
    parser.add_argument("--moves", type=int, default=10, help="slider moves per student (default 10)")
    parser.add_argument("--gap", type=float, default=3.0, help="seconds between a student's moves (default 3)")
    parser.add_argument("--prefix", type=Path, default=Path(os.environ.get("HUB_PREFIX", "/opt/llm-serving-math")))
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("the hub runs each student's server as that student: run as root (sudo make bench-class)")
    largest = max(args.students)
    subprocess.run(["/usr/bin/python3", ROOT / "tools" / "hub.py", "install", "--students", str(largest),
                    "--prefix", args.prefix], check=True, stdout=subprocess.DEVNULL)
    token = secrets.token_hex(32)
    port = free_port()
    log = open(args.prefix / "state" / "bench-hub.log", "w")
    hub = subprocess.Popen(["/usr/bin/python3", ROOT / "tools" / "hub.py", "start", "--port", str(port), "--prefix",
                            args.prefix], stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                           env={**os.environ, "HUB_BENCH_TOKEN": token})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(180):
            try:
                if requests.get(f"{base}/hub/api/", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.5)
        cells = code_cells(ROOT / "notebooks" / Path(CHAPTER).name)
        everyone = [f"student{n:02d}" for n in range(1, largest + 1)]
        rows = []
        alone = asyncio.run(run_class(base, token, everyone[:1], cells, args.moves, args.gap))
        stop_servers(base, token, everyone[:1])
        rows.append(alone)
        for count in args.students:
            if count == 1:
                continue
            rows.append(asyncio.run(run_class(base, token, everyone[:count], cells, args.moves, args.gap)))
            stop_servers(base, token, everyone[:count])
            time.sleep(5)
    finally:
        os.killpg(hub.pid, signal.SIGTERM)
        try:
            hub.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(hub.pid, signal.SIGKILL)
    cores = os.cpu_count()
    print(f"Chapter 1, Run All at once, then a slider move every {args.gap:g} s ({args.moves} each); "
          f"{cores} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB")
    print("| students | every Run All done | median Run All | slider p50 | slider p90 | peak memory | per student | failures |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['students']} | {row['all_finished']:.0f} s | {row['run_all_median']:.0f} s | "
              f"{row['slider_p50'] * 1e3:.0f} ms | {row['slider_p90'] * 1e3:.0f} ms | "
              f"{row['peak_memory'] / 2**30:.1f} GiB | {row['peak_memory'] / row['students'] / 2**20:.0f} MiB | "
              f"{len(row['failures'])} |")
    for row in rows:
        for failure in row["failures"]:
            print(f"failure ({row['students']} students): {failure}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if any(row["failures"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
