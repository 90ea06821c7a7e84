#!/usr/bin/env python3
"""Peak resident memory of `innerpeace batch` and its render worker processes.

Runs `batch --count COUNT --preset SIZE --format png --quiet` once per --jobs value in a fresh
temporary folder, samples the resident memory of the batch process and all its descendants every
50 ms (VmRSS summed, and Pss summed: shared pages split between sharers), and prints the peaks.

    python3 scripts/batch-memory.py --binary .build/release/innerpeace [--size 4096x4096] [--count 8] [--jobs 1 2 4 8]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def tree_kib(pid, field):
    """VmRSS (from status) or Pss (from smaps_rollup) of a process and its descendants, in KiB."""
    total = 0
    pending = [pid]
    seen = 0
    while pending and seen < 10_000:
        seen += 1
        current = pending.pop()
        try:
            source = f"/proc/{current}/status" if field == "VmRSS" else f"/proc/{current}/smaps_rollup"
            with open(source) as handle:
                match = re.search(rf"^{field}:\s+(\d+)", handle.read(), re.M)
                total += int(match.group(1)) if match else 0
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending.extend(int(child) for child in children.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def run(binary, size, count, jobs, extra):
    folder = tempfile.mkdtemp(prefix="innerpeace-batch-memory-")
    try:
        command = [binary, "batch", "--out-dir", folder, "--count", str(count), "--preset", size, "--format", "png",
                   "--quiet", "--jobs", str(jobs)] + extra
        started = time.monotonic()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        peak_rss = peak_pss = 0
        deadline = started + 1800
        while process.poll() is None and time.monotonic() < deadline:
            peak_rss = max(peak_rss, tree_kib(process.pid, "VmRSS"))
            peak_pss = max(peak_pss, tree_kib(process.pid, "Pss"))
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()
        _, stderr = process.communicate()
        elapsed = time.monotonic() - started
        return process.returncode, peak_rss, peak_pss, elapsed, stderr.decode(errors="replace").strip()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=".build/release/innerpeace")
    parser.add_argument("--size", default="4096x4096")
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("extra", nargs="*", help="more batch flags, after --")
    arguments = parser.parse_args()
    print(f"batch --count {arguments.count} --preset {arguments.size} {' '.join(arguments.extra)}".strip())
    print("jobs  status  peak VmRSS MB  peak Pss MB  seconds")
    for jobs in arguments.jobs:
        status, rss, pss, elapsed, stderr = run(arguments.binary, arguments.size, arguments.count, jobs,
                                                arguments.extra)
        print(f"{jobs:4}  {status:6}  {rss / 1024:13.0f}  {pss / 1024:11.0f}  {elapsed:7.1f}")
        if status != 0:
            print(f"      stderr: {stderr[-400:]}", file=sys.stderr)


if __name__ == "__main__":
    main()
