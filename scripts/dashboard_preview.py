#!/usr/bin/env python3
"""Evaluates every panel and alert of the deployment files through a running Prometheus, and draws
each panel's series (scripts/dashboard-preview.sh runs it).

    dashboard_preview.py PROMETHEUS_URL START END OUT_DIR

PROMETHEUS_URL: e.g. http://127.0.0.1:9091; START and END: Unix times of the load. Writes
OUT_DIR/dashboard.png (every panel, in the dashboard's order) and prints one line per panel query
and alert: how many series it returned. Exits 1 if a query has no data and is not expected empty.
"""

import json
import math
import os
import re
import sys
import urllib.parse
import urllib.request

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import yaml  # noqa: E402

# Series the base binary cannot give yet (the metric comes with issue 20's "http" item).
EXPECTED_EMPTY = {"process_start_time_seconds": "not exported by this binary yet (issue 20, item 8)"}
# The grafana variables, as the preview sets them: every instance; rate windows of 10 s over a
# 1-second scrape.
VARIABLES = {"$__rate_interval": "10s", "$instance": ".*"}


def query(base, path, parameters):
    url = f"{base}{path}?{urllib.parse.urlencode(parameters)}"
    with urllib.request.urlopen(url, timeout=30) as response:
        answer = json.load(response)
    if answer.get("status") != "success":
        raise RuntimeError(f"{url}: {answer}")
    return answer["data"]["result"]


def expand(expression):
    for name, value in VARIABLES.items():
        expression = expression.replace(name, value)
    return expression


def legend(template, labels, title):
    text = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda match: labels.get(match.group(1), ""), template)
    return text or ", ".join(f"{key}={value}" for key, value in labels.items()) or title


def main(argv):
    base, start, end, out = argv[1], float(argv[2]), float(argv[3]), argv[4]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with open(os.path.join(root, "deploy/grafana/innerpeace-dashboard.json"), encoding="utf-8") as file:
        dashboard = json.load(file)
    with open(os.path.join(root, "deploy/prometheus/alerts.yaml"), encoding="utf-8") as file:
        alerts = [rule for group in yaml.safe_load(file)["groups"] for rule in group["rules"]]
    missing = 0
    step = max(1.0, (end - start) / 200)
    panels = dashboard["panels"]
    columns = 3
    rows = math.ceil(len(panels) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(columns * 6.4, rows * 3.4), squeeze=False)
    for index, panel in enumerate(panels):
        axis = axes[index // columns][index % columns]
        axis.set_title(panel["title"], fontsize=10)
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "")
        drawn = 0
        for target in panel["targets"]:
            expression = expand(target["expr"])
            result = query(base, "/api/v1/query_range", {"query": expression, "start": start, "end": end, "step": step})
            expected = next((reason for name, reason in EXPECTED_EMPTY.items() if name in expression), None)
            status = "ok" if result else ("empty, expected: " + expected if expected else "NO DATA")
            if not result and not expected:
                missing += 1
            print(f"panel '{panel['title']}' {target['refId']}: {len(result)} series ({status})")
            for series in result:
                times = [float(point[0]) - start for point in series["values"]]
                values = [float(point[1]) for point in series["values"]]
                axis.plot(times, values, linewidth=1, label=legend(target.get("legendFormat", ""), series["metric"], panel["title"]))
                drawn += 1
        if drawn == 0:
            axis.text(0.5, 0.5, "no data", ha="center", va="center", transform=axis.transAxes, color="grey")
        elif drawn <= 8:
            axis.legend(fontsize=6, loc="upper left")
        else:
            axis.legend(fontsize=5, loc="upper left", ncol=2)
        axis.set_xlabel("seconds into the load", fontsize=7)
        axis.set_ylabel(unit, fontsize=7)
        axis.tick_params(labelsize=7)
        axis.grid(alpha=0.3)
    for index in range(len(panels), rows * columns):
        axes[index // columns][index % columns].axis("off")
    figure.suptitle(f"{dashboard['title']}: every panel over the preview's load (Prometheus, 1 s scrape)")
    figure.tight_layout(rect=(0, 0, 1, 0.98))
    figure.savefig(os.path.join(out, "dashboard.png"), dpi=80)
    firing = {alert["labels"]["alertname"]: alert["state"] for alert in
              json.load(urllib.request.urlopen(f"{base}/api/v1/alerts", timeout=30))["data"]["alerts"]}
    for rule in alerts:
        # The alert's expression less its threshold: the series it compares must exist.
        measured = re.sub(r"\s*(==|!=|>=|<=|>|<)\s*[0-9.e+-]+\s*$", "", rule["expr"].strip())
        result = query(base, "/api/v1/query", {"query": measured, "time": end})
        if not result:
            missing += 1
        values = ", ".join(f"{float(series['value'][1]):.4g}" for series in result[:4])
        print(f"alert {rule['alert']}: {len(result)} series ({'ok' if result else 'NO DATA'}) value {values or '-'}; "
              f"{firing.get(rule['alert'], 'inactive')}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
