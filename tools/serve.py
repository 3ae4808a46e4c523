"""Serve a built folder (``site/`` or ``lite/``) on localhost: ``make site-serve`` / ``make lite-serve``.

    python tools/serve.py FOLDER [--port 8888] [--strict]
    python tools/serve.py --check --port 8888 --strict      # only test that the port is free (make lab)
    python tools/serve.py --pick --port 8866 --variable PRESENT_PORT   # print the port to use (make present)

Without ``--strict`` (the Makefile's default port) a busy port moves on to the next free one, up to
20 further, and the URL printed says which. With ``--strict`` (the user chose ``PORT=``) a busy
port is an error that names ``PORT=``. Standard library only.
"""

from __future__ import annotations

import argparse
import errno
import functools
import http.server
import socket
import sys
from pathlib import Path

HOST = "127.0.0.1"
TRIES = 20


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def next_free(port: int) -> int | None:
    """The first free port after ``port`` (within TRIES), or None."""
    return next((candidate for candidate in range(port + 1, min(port + TRIES, 65535) + 1)
                 if port_free(candidate)), None)


def busy_message(port: int, variable: str = "PORT") -> str:
    free = next_free(port)
    suggestion = (f"run the same make command with {variable}={free}, which is free now "
                  f"(e.g. `make {'present' if variable == 'PRESENT_PORT' else 'lab'} {variable}={free}`)"
                  if free is not None else f"ports {port + 1}-{port + TRIES} are busy too; choose one with {variable}=")
    return (f"port {port} on {HOST} is already in use (another `make lab`, `make present`, `make site-serve` "
            f"or `make lite-serve`?). Stop it, or pick another port: {suggestion}.")


def pick(port: int, strict: bool, variable: str) -> int:
    """The port to start on: ``port`` if free; else, unless ``strict``, the next free one, said on stderr."""
    if port_free(port):
        return port
    if strict:
        raise SystemExit(f"error: {busy_message(port, variable)}")
    free = next_free(port)
    if free is None:
        raise SystemExit(f"error: ports {port}-{port + TRIES} are all in use; choose a free one with {variable}=")
    print(f"port {port} is busy, so this one starts on port {free} instead ({variable}=... chooses one)",
          file=sys.stderr)
    return free


def bind(folder: Path, port: int, strict: bool) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.extensions_map = {**handler.func.extensions_map, ".wasm": "application/wasm",
                              ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json"}
    last = port if strict else port + TRIES
    for candidate in range(port, last + 1):
        try:
            return http.server.ThreadingHTTPServer((HOST, candidate), handler)
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            if candidate == port and not strict:
                print(f"port {port} is busy; trying the next ones (PORT=... chooses one)", file=sys.stderr)
    if strict:
        raise SystemExit(f"error: {busy_message(port)}")
    raise SystemExit(f"error: ports {port}-{last} are all in use; choose a free one with PORT=")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/serve.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, help="the folder to serve (site or lite)")
    parser.add_argument("--port", type=int, default=8888)
    parser.add_argument("--strict", action="store_true", help="a busy port is an error (PORT= was given)")
    parser.add_argument("--check", action="store_true", help="only check that --port is free")
    parser.add_argument("--pick", action="store_true",
                        help="print the port to start on: --port if free, else (without --strict) the next free one")
    parser.add_argument("--variable", default="PORT", help="the make variable that sets the port, for messages")
    args = parser.parse_args(argv)
    if not 0 < args.port < 65536:
        parser.error(f"{args.variable} must be 1..65535, got {args.port}")
    if args.check:
        if args.strict and not port_free(args.port):
            print(f"error: {busy_message(args.port, args.variable)}", file=sys.stderr)
            return 1
        return 0
    if args.pick:
        print(pick(args.port, args.strict, args.variable))
        return 0
    if args.folder is None or not (args.folder / "index.html").is_file():
        parser.error(f"no index.html in {args.folder}: build it first (make site / make lite)")
    server = bind(args.folder, args.port, args.strict)
    port = server.server_address[1]
    print(f"serving {args.folder}/ on http://{HOST}:{port}/  (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
