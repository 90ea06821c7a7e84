#!/usr/bin/env python3
"""Merges the shard manifests of a `batch --shard I/N` run into one manifest.json.

    python3 merge-manifests.py DIR N

reads DIR/manifest-1-of-N.json ... DIR/manifest-N-of-N.json (written by `innerpeace batch
--shard I/N`), checks that they are the N shards of one run (each present once, the same seed
and generator, the same total, every shard complete: as many images and failures as it planned)
and that no image is listed twice, then writes DIR/manifest.json in the shape of an unsharded
run's manifest: every image in the run's order, every failure, `shard` "1/1" and `plannedInShard`
equal to `totalInRun`. Exit status 1, with one line, when any check fails; nothing is written
then. Python's standard library only (it runs in the merge Job's python image).
"""

import json
import os
import sys


def fail(message):
    print(f"merge-manifests: {message}", file=sys.stderr)
    sys.exit(1)


def main(argv):
    if len(argv) != 3 or not argv[2].isdigit() or int(argv[2]) < 1:
        fail("usage: merge-manifests.py DIR N (N shards, at least 1)")
    folder, count = argv[1], int(argv[2])
    shards = []
    for index in range(1, count + 1):
        name = f"manifest-{index}-of-{count}.json"
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as file:
                manifest = json.load(file)
        except (OSError, ValueError) as error:
            fail(f"{name}: {error}")
        if manifest.get("shard") != f"{index}/{count}":
            fail(f"{name}: shard {manifest.get('shard')!r}, expected {index}/{count}")
        planned, done = manifest["plannedInShard"], len(manifest["images"]) + len(manifest["failures"])
        if done != planned:
            fail(f"{name}: {done} of {planned} planned cards listed: the shard did not finish")
        shards.append((name, manifest))
    first = shards[0][1]
    for name, manifest in shards[1:]:
        for key in ("seed", "generator", "totalInRun"):
            if manifest[key] != first[key]:
                fail(f"{name}: {key} {manifest[key]!r}, but {shards[0][0]} has {first[key]!r}")
    images, failures, seen = [], [], {}
    for name, manifest in shards:
        for image in manifest["images"]:
            if image["file"] in seen:
                fail(f"{image['file']} is listed by {seen[image['file']]} and {name}")
            seen[image["file"]] = name
            images.append(image)
        failures.extend(manifest["failures"])
    if len(images) + len(failures) != first["totalInRun"]:
        fail(f"{len(images) + len(failures)} cards listed, the run has {first['totalInRun']}")
    # Plan order, as an unsharded run lists them: by quote, then in the run's preset order (from
    # the run's record, .innerpeace-batch-1-of-N; by file name if that is gone).
    presets = []
    try:
        with open(os.path.join(folder, f".innerpeace-batch-1-of-{count}"), encoding="utf-8") as file:
            presets = json.load(file).get("presets", [])
    except (OSError, ValueError):
        pass
    rank = {preset: position for position, preset in enumerate(presets)}
    images.sort(key=lambda image: (image["quoteIndex"], rank.get(image["preset"], len(rank)), image["file"]))
    merged = {
        "failures": failures,
        "generator": first["generator"],
        "images": images,
        "plannedInShard": first["totalInRun"],
        "seed": first["seed"],
        "shard": "1/1",
        "totalInRun": first["totalInRun"],
    }
    target = os.path.join(folder, "manifest.json")
    with open(target + ".tmp", "w", encoding="utf-8") as file:
        json.dump(merged, file, ensure_ascii=False, indent=2, sort_keys=True)
        file.write("\n")
    os.replace(target + ".tmp", target)
    print(f"merge-manifests: {len(images)} images, {len(failures)} failures from {count} shards -> {target}")


if __name__ == "__main__":
    main(sys.argv)
