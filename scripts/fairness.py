#!/usr/bin/env python3
"""A hostile client beside an honest one, on loopback, bounded in time and count.

Starts `innerpeace serve --concurrency 2 --queue 4` (the issue's setting) and runs two phases,
each with an honest client from 127.0.0.3 measuring its requests:

  idle   the hostile client (127.0.0.2) opens IDLE connections (1,030) and holds them, opening
         new ones as the server closes old ones; the honest client probes /healthz on a new
         connection every 0.2 s.
  flood  the hostile client sends costly custom cards (a 4,999-character word of dots on a wide,
         short canvas: seconds of CPU each, a new text every time so nothing is cached) on FLOOD
         connections (16), each sending its next card as soon as the last is answered; the honest
         client asks for small custom cards (new texts, so each is a render) one after another.

It prints, per phase, the honest client's status counts and median and 90th-percentile latency.
`--before` runs the same binary with the per-client limits lifted (main's behaviour: no
per-client share), for comparison.

  python3 scripts/fairness.py                      # release binary if built, else debug
  python3 scripts/fairness.py --before             # the same without per-client limits
  python3 scripts/fairness.py --bin .build/debug/innerpeace --seconds 20 --idle 1030 --flood 16

Linux only: the two clients bind 127.0.0.2 and 127.0.0.3 (all of 127/8 is loopback there).
"""
import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import threading
import time

HOSTILE, HONEST = "127.0.0.2", "127.0.0.3"


def parse():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_bin = ".build/release/innerpeace" if os.path.exists(".build/release/innerpeace") else ".build/debug/innerpeace"
    parser.add_argument("--bin", default=default_bin)
    parser.add_argument("--seconds", type=float, default=20, help="length of each phase (at most 300)")
    parser.add_argument("--idle", type=int, default=1030, help="idle connections of the hostile client (at most 5000)")
    parser.add_argument("--flood", type=int, default=16, help="connections flooding costly cards (at most 256)")
    parser.add_argument("--before", action="store_true", help="lift the per-client limits (main's behaviour)")
    parser.add_argument("--phases", default="idle,flood")
    args = parser.parse_args()
    args.seconds = min(max(args.seconds, 1), 300)
    args.idle = min(max(args.idle, 0), 5000)
    args.flood = min(max(args.flood, 1), 256)
    return args


def start_server(args):
    command = [args.bin, "serve", "--port", "0", "--concurrency", "2", "--queue", "4", "--log-level", "warning"]
    if args.before:
        command += ["--max-connections-per-client", "100000", "--max-renders-per-client", "256",
                    "--max-queued-per-client", "10000"]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = server.stderr.readline()
        match = re.search(r"listening on http://[0-9.]+:(\d+)", line)
        if match:
            # Drained in the background, so the server never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            return server, int(match.group(1))
        if not line and server.poll() is not None:
            break
    server.kill()
    sys.exit("the server did not start")


async def read_response(reader, timeout):
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    status = int(head.split(b" ")[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    await asyncio.wait_for(reader.readexactly(length), timeout)
    return status


async def honest_request(port, path, timeout=60):
    """One request on a new connection from the honest address: (status or error, ms)."""
    started = time.monotonic()
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port, local_addr=(HONEST, 0)), 10)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        status = await read_response(reader, timeout)
        writer.close()
    except Exception as error:
        status = type(error).__name__
    return status, (time.monotonic() - started) * 1000


async def idle_holder(port, count, end, stats):
    """Holds `count` connections from the hostile address, replacing those the server closes."""
    async def hold():
        while time.monotonic() < end:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", port, local_addr=(HOSTILE, 0)), 5)
            except Exception:
                stats["connect_failed"] += 1
                await asyncio.sleep(0.2)
                continue
            stats["opened"] += 1
            try:
                data = await asyncio.wait_for(reader.read(65536), max(0.1, end - time.monotonic()))
                stats["refused_503" if data.startswith(b"HTTP/1.1 503") else "closed"] += 1
            except asyncio.TimeoutError:
                pass
            except Exception:
                stats["reset"] += 1
            writer.close()
            await asyncio.sleep(1)
    await asyncio.gather(*(hold() for _ in range(count)))


async def flooder(port, index, end, stats):
    """Costly custom cards, one after another, each with a new text."""
    word = "." * 4990  # the costly text: one 4,999-character "word" of dots
    round_ = 0
    while time.monotonic() < end:
        round_ += 1
        text = f"{word}{index:03d}{round_:04d}"[:4999]
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port, local_addr=(HOSTILE, 0)), 5)
            writer.write(f"GET /card.jpg?w=4096&h=1000&text={text} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            status = await read_response(reader, max(1, end - time.monotonic() + 5))
            stats[f"flood_{status}"] = stats.get(f"flood_{status}", 0) + 1
            writer.close()
            if status == 503:
                await asyncio.sleep(0.5)
        except Exception:
            stats["flood_error"] = stats.get("flood_error", 0) + 1
            await asyncio.sleep(0.5)


async def phase(name, port, args):
    end = time.monotonic() + args.seconds
    stats = {"opened": 0, "refused_503": 0, "closed": 0, "reset": 0, "connect_failed": 0}
    results = []
    if name == "idle":
        hostile = asyncio.ensure_future(idle_holder(port, args.idle, end, stats))
        await asyncio.sleep(min(3, args.seconds / 4))  # let the hostile client open its connections
        while time.monotonic() < end:
            results.append(await honest_request(port, "/healthz", timeout=10))
            await asyncio.sleep(0.2)
    else:
        hostile = asyncio.ensure_future(asyncio.gather(*(flooder(port, i, end, stats) for i in range(args.flood))))
        await asyncio.sleep(min(2, args.seconds / 4))
        index = 0
        while time.monotonic() < end:
            index += 1
            results.append(await honest_request(port, f"/card.png?w=400&h=400&text=honest-{os.getpid()}-{index}"))
    # The hostile tasks end by themselves once `end` has passed (their reads are bounded too).
    try:
        await asyncio.wait_for(hostile, 90)
    except asyncio.TimeoutError:
        hostile.cancel()
    counts = {}
    for status, _ in results:
        counts[status] = counts.get(status, 0) + 1
    ok_ms = sorted(ms for status, ms in results if status == 200)
    all_ms = sorted(ms for _, ms in results)
    median = statistics.median(all_ms) if all_ms else float("nan")
    p90 = all_ms[min(len(all_ms) - 1, int(len(all_ms) * 0.9))] if all_ms else float("nan")
    shown = {k: v for k, v in stats.items() if v}
    print(f"{name}: honest {len(results)} requests, statuses {counts}, median {median:.0f} ms, p90 {p90:.0f} ms "
          f"(200s: median {statistics.median(ok_ms) if ok_ms else float('nan'):.0f} ms); hostile {shown}",
          flush=True)


async def main(args):
    server, port = start_server(args)
    print(f"{args.bin} on port {port}, pid {server.pid}, --concurrency 2 --queue 4"
          f"{' with the per-client limits lifted (before)' if args.before else ''}", flush=True)
    try:
        for name in args.phases.split(","):
            await phase(name, port, args)
    finally:
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(main(parse()))
