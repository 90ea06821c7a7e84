#!/usr/bin/env python3
"""The API contract test: schemathesis, with every check, against a live `innerpeace serve`.

Starts the server on a free loopback port, waits for its "listening on" line, and runs
`st run http://127.0.0.1:PORT/openapi.yaml --checks all` on the document the server itself
serves, bounded by --max-examples per operation and a wall-clock limit. Exits non-zero on any
failure, on a server that does not start, or on a run that does not finish in time; the server
is stopped in every case.

Usage: run_contract.py --binary .build/debug/innerpeace [--max-examples N] [--seconds S]
Run with the test-tools virtualenv's Python (.build/pytools/bin/python).
"""

import argparse
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/debug/innerpeace")
    parser.add_argument("--max-examples", type=int, default=30)
    parser.add_argument("--seconds", type=int, default=240, help="wall-clock limit of the schemathesis run")
    parser.add_argument("--seed", type=int, default=None)
    arguments = parser.parse_args()

    st = os.path.join(os.path.dirname(sys.executable), "st")
    if not os.access(st, os.X_OK):
        print("api contract: schemathesis is missing; run scripts/install-deps.sh --with-test-tools", file=sys.stderr)
        return 1

    server = subprocess.Popen(
        [arguments.binary, "serve", "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = []
    ready = threading.Event()

    def read_server():
        for line in server.stdout:
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if match and not port:
                port.append(match.group(1))
                ready.set()
            if re.search(r"\b(error|critical)\b", line):
                sys.stderr.write("server: " + line)
        ready.set()

    threading.Thread(target=read_server, daemon=True).start()
    try:
        if not ready.wait(30) or not port:
            print("api contract: the server did not start (no 'listening on' line in 30 s)", file=sys.stderr)
            return 1
        url = "http://127.0.0.1:%s/openapi.yaml" % port[0]
        # One worker: with two, schemathesis generates in two threads, and CPython 3.11's AST
        # constructor keeps its recursion depth in one process-wide counter, so hypothesis
        # describing a lambda in both at once fails now and then with "SystemError: AST constructor
        # recursion depth mismatch" (a Runtime Error in the coverage phase, before any request).
        command = [
            st, "--config-file", os.path.join(HERE, "schemathesis.toml"), "run", url,
            "--checks", "all", "--max-examples", str(arguments.max_examples),
            "--max-time", str(max(1, arguments.seconds - 30)), "--request-timeout", "20",
            "--generation-database", "none", "--no-color", "--workers", "1",
        ]
        if arguments.seed is not None:
            command += ["--seed", str(arguments.seed)]
        environment = dict(os.environ, SCHEMATHESIS_HOOKS="hooks", PYTHONPATH=HERE)
        print("api contract: " + " ".join(command[1:]), flush=True)
        started = time.monotonic()
        try:
            run = subprocess.run(command, env=environment, timeout=arguments.seconds)
        except subprocess.TimeoutExpired:
            print("api contract: schemathesis did not finish in %d s" % arguments.seconds, file=sys.stderr)
            return 1
        print("api contract: schemathesis exited %d after %.0f s" % (run.returncode, time.monotonic() - started))
        return run.returncode
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
