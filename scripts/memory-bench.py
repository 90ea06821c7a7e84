#!/usr/bin/env python3
"""Resident memory of `innerpeace serve` under uncached requests of mixed sizes.

Starts the server (default settings unless flags follow `--`), sends REQUESTS uncached card
requests (a new seed each, sizes from og up to 4096x4096) from CLIENTS threads on loopback,
samples the resident memory of the server and its worker processes every 100 ms, and prints the
start, peak and final figures (the final one after the server has been idle for IDLE seconds).

    python3 scripts/memory-bench.py --binary .build/release/innerpeace [--requests 1000] [-- serve flags]
"""
import argparse
import http.client
import os
import re
import subprocess
import sys
import threading
import time

SIZES = [(1200, 630), (1080, 1080), (1080, 1920), (2048, 1536), (1600, 900), (3000, 2000), (4096, 4096), (800, 800)]


def tree_rss_kib(pid, field="VmRSS"):
    """Resident memory of a process and all its descendants, in KiB: the sum of their resident
    sets (VmRSS, which counts pages they share, such as the binary and the fonts, once for each
    process), or with field="Pss" their proportional sets (a shared page split between sharers:
    what the tree adds to the machine's memory)."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            source = f"/proc/{current}/status" if field == "VmRSS" else f"/proc/{current}/smaps_rollup"
            with open(source) as status:
                match = re.search(rf"^{field}:\s+(\d+)", status.read(), re.M)
                total += int(match.group(1)) if match else 0
            # Children are listed under the thread that started them (workers: a supervisor thread).
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending.extend(int(child) for child in children.read().split())
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/innerpeace")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--time-limit", type=float, default=900.0, help="stop sending after this many seconds")
    parser.add_argument("serve_flags", nargs="*")
    options = parser.parse_args()

    server = subprocess.Popen(
        [options.binary, "serve", "--port", "0", *options.serve_flags],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    port = None
    deadline = time.time() + 60
    while port is None and time.time() < deadline:
        line = server.stderr.readline()
        match = re.search(r"listening on http://[^:]+:(\d+)", line)
        if match:
            port = int(match.group(1))
    if port is None:
        server.kill()
        sys.exit("the server did not start")
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
    time.sleep(1.0)

    samples = []
    peak_parts = []

    def worker_pids():
        pids = []
        for task in os.listdir(f"/proc/{server.pid}/task"):
            try:
                with open(f"/proc/{server.pid}/task/{task}/children") as children:
                    pids.extend(int(child) for child in children.read().split())
            except FileNotFoundError:
                pass
        return pids
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            samples.append((time.time(), tree_rss_kib(server.pid), tree_rss_kib(server.pid, "Pss")))
            if samples[-1][1] >= max(sample[1] for sample in samples):
                peak_parts[:] = [tree_rss_kib(pid) for pid in [server.pid, *worker_pids()]]
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    start_rss = tree_rss_kib(server.pid)
    sampler.start()

    statuses = {}
    lock = threading.Lock()
    next_index = [0]
    started = time.time()

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                index = next_index[0]
                next_index[0] += 1
            if index >= options.requests or time.time() - started > options.time_limit:
                return
            width, height = SIZES[index % len(SIZES)]
            path = f"/random.png?w={width}&h={height}&seed={index + 1_000_000}"
            try:
                connection.request("GET", path)
                response = connection.getresponse()
                response.read()
                status = response.status
            except Exception as error:  # noqa: BLE001 - a failed request is counted, not fatal
                status = type(error).__name__
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    clients = [threading.Thread(target=client) for _ in range(options.clients)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join()
    elapsed = time.time() - started
    time.sleep(options.idle)
    final_rss = tree_rss_kib(server.pid)
    metrics = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    metrics.request("GET", "/metrics")
    retirements = re.search(r"^innerpeace_render_worker_retirements_total (\S+)", metrics.getresponse().read().decode(), re.M)
    final_pss = tree_rss_kib(server.pid, "Pss")
    final_each = []
    for task in os.listdir(f"/proc/{server.pid}/task"):
        with open(f"/proc/{server.pid}/task/{task}/children") as children:
            final_each.extend(int(child) for child in children.read().split())
    final_each = [tree_rss_kib(server.pid) - sum(tree_rss_kib(child) for child in final_each)] + [
        tree_rss_kib(child) for child in final_each]
    stop.set()
    sampler.join()
    server.terminate()
    server.wait(timeout=60)

    peak = max(rss for _, rss, _ in samples) if samples else 0
    peak_pss = max(pss for _, _, pss in samples) if samples else 0
    print(f"requests: {sum(statuses.values())} in {elapsed:.1f} s, statuses {statuses}")
    print("final rss MiB, server then each worker: " + ", ".join(f"{kib / 1024:.0f}" for kib in final_each))
    print(f"rss MiB: start {start_rss / 1024:.0f}, peak {peak / 1024:.0f}, final (after {options.idle:.0f} s idle) {final_rss / 1024:.0f}")
    print("at the peak, rss MiB of the server then each worker (approximate): " + ", ".join(
        f"{kib / 1024:.0f}" for kib in ([peak_parts[0] - sum(peak_parts[1:])] + peak_parts[1:] if peak_parts else [])))
    print(f"workers replaced for their memory: {retirements.group(1) if retirements else 'n/a'}")
    print(f"pss MiB: peak {peak_pss / 1024:.0f}, final {final_pss / 1024:.0f}")


if __name__ == "__main__":
    main()
