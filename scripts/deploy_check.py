#!/usr/bin/env python3
"""The checks of scripts/deploy-check.sh that read the deployment files themselves.

    deploy_check.py kube ROOT            the manifests hold what the deployment relies on
    deploy_check.py compose ROOT         compose.yaml: the keys that matter
    deploy_check.py dashboard ROOT       the Grafana dashboard's shape (panels, queries, data source)
    deploy_check.py names ROOT SCRAPE    every metric and label name in the dashboard's and the
                                         alerts' PromQL is one a running server exported (SCRAPE:
                                         its /metrics text)
    deploy_check.py env ROOT SOURCE      prints the service's settings in deploy file SOURCE
                                         (kubernetes, compose or systemd) as NAME=VALUE lines,
                                         less those of the listening addresses; pod: the
                                         Deployment container's, all of them
    deploy_check.py pod-args ROOT        the Deployment container's args, one a line
    deploy_check.py job-command ROOT BINARY DIR N
                                         prints the Indexed Job's shell command for a local run
    deploy_check.py batch DIR N [WHOLE]  after a merge: every planned image listed once, present,
                                         and with the SHA-256 its manifest records; and the same
                                         manifest as WHOLE's, the run made unsharded

ROOT is the repository (or a copy of its deploy files). Each prints one line per problem and exits
1 if there is any. Needs PyYAML (in .build/pytools, with kubernetes-validate).
"""

import hashlib
import json
import os
import re
import sys

import yaml

# Names a PromQL expression may use that a scrape of the base binary does not show:
# Prometheus makes `up` itself for every target; process_start_time_seconds comes with the
# `--metrics-address` work of issue 20 (helper "http") and is allowed until the server exports it.
NOT_FROM_THE_SERVER = {"up": "made by Prometheus for each target", "process_start_time_seconds": "issue 20, item 8"}
# Labels Prometheus adds to every series, and the histogram bucket label.
ADDED_LABELS = {"instance", "job", "le"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset",
            "inf", "nan", "Inf", "NaN"}

problems = []


def problem(message):
    problems.append(message)


def load_all(path):
    with open(path, encoding="utf-8") as file:
        return [document for document in yaml.safe_load_all(file) if document]


def manifests(root):
    found = {}
    for folder in ("deploy/kubernetes", "deploy/kubernetes/batch"):
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if name.endswith(".yaml") and name != "kustomization.yaml":
                for document in load_all(os.path.join(root, folder, name)):
                    found[(document["kind"], document["metadata"]["name"])] = document
    return found


def check_security(where, pod):
    context = pod.get("securityContext", {})
    if context.get("runAsNonRoot") is not True or context.get("runAsUser") != 10001:
        problem(f"{where}: the pod must run as non-root user 10001")
    if context.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        problem(f"{where}: seccompProfile RuntimeDefault missing")
    for container in pod["containers"]:
        own = container.get("securityContext", {})
        if own.get("readOnlyRootFilesystem") is not True:
            problem(f"{where}/{container['name']}: readOnlyRootFilesystem must be true")
        if own.get("allowPrivilegeEscalation") is not False:
            problem(f"{where}/{container['name']}: allowPrivilegeEscalation must be false")
        if own.get("capabilities", {}).get("drop") != ["ALL"]:
            problem(f"{where}/{container['name']}: capabilities must drop ALL")
        settings = {entry["name"]: entry.get("value") for entry in container.get("env", [])}
        mounts = {mount["mountPath"] for mount in container.get("volumeMounts", [])}
        cache = settings.get("XDG_CACHE_HOME", "")
        if not any(cache == path or cache.startswith(path + "/") for path in mounts):
            problem(f"{where}/{container['name']}: XDG_CACHE_HOME ({cache or 'unset'}) is on no volume: "
                    "fontconfig has no writable cache on the read-only root")
        limits = container.get("resources", {}).get("limits", {})
        if "memory" not in limits:
            problem(f"{where}/{container['name']}: no memory limit")


def kube(root):
    found = manifests(root)
    for kind in ("Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Job",
                 "PersistentVolumeClaim"):
        if not any(key[0] == kind for key in found):
            problem(f"deploy/kubernetes: no {kind}")
    deployment = found.get(("Deployment", "innerpeace"))
    if deployment:
        pod = deployment["spec"]["template"]["spec"]
        check_security("Deployment", pod)
        server = pod["containers"][0]
        probes = {name: server.get(name, {}).get("httpGet", {}).get("path")
                  for name in ("livenessProbe", "readinessProbe", "startupProbe")}
        if probes["livenessProbe"] != "/healthz" or probes["readinessProbe"] != "/readyz":
            problem(f"Deployment: liveness must GET /healthz and readiness /readyz, not {probes}")
        ports = {port["name"]: port["containerPort"] for port in server.get("ports", [])}
        if ports.get("http") != 8080 or ports.get("metrics") != 9090:
            problem(f"Deployment: ports must be http 8080 and metrics 9090, not {ports}")
        environment = {entry["name"]: entry.get("value") for entry in server.get("env", [])}
        if environment.get("PORT") != "8080":
            problem("Deployment: PORT must be 8080, the http port")
        if "--metrics-address" not in server.get("args", []) or "0.0.0.0:9090" not in server.get("args", []):
            problem("Deployment: serve must get --metrics-address 0.0.0.0:9090")
        annotations = deployment["spec"]["template"]["metadata"].get("annotations", {})
        if annotations.get("prometheus.io/scrape") != "true" or annotations.get("prometheus.io/port") != "9090":
            problem("Deployment: the pod's prometheus.io annotations must point at port 9090")
        if deployment["spec"]["template"]["spec"].get("terminationGracePeriodSeconds", 30) <= 30:
            problem("Deployment: terminationGracePeriodSeconds must exceed --drain-timeout (30 s)")
    hpa = found.get(("HorizontalPodAutoscaler", "innerpeace"))
    if hpa and hpa["spec"]["scaleTargetRef"]["name"] != "innerpeace":
        problem("HorizontalPodAutoscaler: must scale Deployment innerpeace")
    job = found.get(("Job", "innerpeace-batch"))
    merge = found.get(("Job", "innerpeace-batch-merge"))
    if job:
        spec = job["spec"]
        if spec.get("completionMode") != "Indexed":
            problem("Job innerpeace-batch: completionMode must be Indexed")
        check_security("Job innerpeace-batch", spec["template"]["spec"])
        command = " ".join(spec["template"]["spec"]["containers"][0].get("args", []))
        shards = f"$((JOB_COMPLETION_INDEX + 1))/{spec.get('completions')}"
        if shards not in command or "--out-dir /cards" not in command:
            problem(f"Job innerpeace-batch: its command must write --shard {shards} into --out-dir /cards")
        if merge:
            merge_command = merge["spec"]["template"]["spec"]["containers"][0]["command"]
            if merge_command[-2:] != ["/cards", str(spec.get("completions"))]:
                problem(f"Job innerpeace-batch-merge: merges {merge_command[-2:]}, not /cards and "
                        f"{spec.get('completions')} shards")
    elif "Job" in {key[0] for key in found}:
        problem("deploy/kubernetes/batch: no Job innerpeace-batch")


def compose(root):
    document = load_all(os.path.join(root, "compose.yaml"))[0]
    service = document.get("services", {}).get("innerpeace")
    if not service:
        problem("compose.yaml: no service innerpeace")
        return
    if service.get("build", {}).get("dockerfile") != "Dockerfile":
        problem("compose.yaml: innerpeace must be built from the Dockerfile")
    if service.get("read_only") is not True:
        problem("compose.yaml: read_only must be true")
    if str(service.get("user", "")).split(":")[0] != "10001":
        problem("compose.yaml: user must be 10001")
    if not any(str(entry).startswith("/tmp") for entry in service.get("tmpfs", [])):
        problem("compose.yaml: no tmpfs on /tmp")
    if not (str(service.get("environment", {}).get("XDG_CACHE_HOME", "")) + "/").startswith("/tmp/"):
        problem("compose.yaml: XDG_CACHE_HOME must be on the /tmp tmpfs (fontconfig's cache)")
    test = service.get("healthcheck", {}).get("test", [])
    if test[:3] != ["CMD", "/app/innerpeace", "health"]:
        problem(f"compose.yaml: the healthcheck must run innerpeace health, not {test}")
    if not any(str(port).endswith(":8080") for port in service.get("ports", [])):
        problem("compose.yaml: port 8080 not published")
    if service.get("environment", {}).get("PORT") != "8080":
        problem("compose.yaml: PORT must be 8080")
    if "ALL" not in service.get("cap_drop", []):
        problem("compose.yaml: cap_drop ALL missing")


def expressions(root):
    """Every PromQL expression of the dashboard and the alert rules, with where it is."""
    found = []
    with open(os.path.join(root, "deploy/grafana/innerpeace-dashboard.json"), encoding="utf-8") as file:
        dashboard = json.load(file)
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            found.append((f"panel '{panel['title']}' {target['refId']}", target["expr"]))
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query", {})
        match = re.fullmatch(r"label_values\((\w+), *(\w+)\)", query.get("query", "") if isinstance(query, dict) else query)
        if match:
            found.append((f"variable {variable['name']}", f"{match.group(1)}{{{match.group(2)}!=\"\"}}"))
    for document in load_all(os.path.join(root, "deploy/prometheus/alerts.yaml")):
        for group in document["groups"]:
            for rule in group["rules"]:
                found.append((f"alert {rule.get('alert', rule.get('record'))}", rule["expr"]))
    return found


def names_in(expression):
    """The metric names and label names an expression uses."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expression)
    labels = set(re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)\s*\"\"", text))
    for clause in re.findall(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", text):
        labels.update(label.strip() for label in clause.split(",") if label.strip())
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    metrics = {name for name in re.findall(r"(?<![\w.$])([a-zA-Z_:][\w:]*)\b(?!\s*\()", text) if name not in KEYWORDS}
    return metrics, labels


def scraped(path):
    metrics, labels = set(), set()
    with open(path, encoding="utf-8") as file:
        for line in file:
            if line.startswith("#") or not line.strip():
                continue
            match = re.match(r"([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s", line)
            if not match:
                continue
            metrics.add(match.group(1))
            labels.update(re.findall(r"(\w+)=\"", match.group(3) or ""))
    return metrics, labels


def names(root, scrape):
    exported, exported_labels = scraped(scrape)
    if not exported:
        problem(f"{scrape}: no metric in the scrape")
    pending = set()
    for where, expression in expressions(root):
        metrics, labels = names_in(expression)
        if not metrics:
            problem(f"{where}: no metric name found in {expression!r}")
        for metric in sorted(metrics - exported):
            if metric in NOT_FROM_THE_SERVER:
                pending.add(metric)
            else:
                problem(f"{where}: {metric} is not exported by the server")
        for label in sorted(labels - exported_labels - ADDED_LABELS):
            problem(f"{where}: label {label} is on no exported series")
    for metric in sorted(pending):
        print(f"deploy-check: {metric} allowed though not in this scrape ({NOT_FROM_THE_SERVER[metric]})")


def dashboard(root):
    with open(os.path.join(root, "deploy/grafana/innerpeace-dashboard.json"), encoding="utf-8") as file:
        document = json.load(file)
    if not document.get("panels"):
        problem("dashboard: no panels")
    ids = [panel.get("id") for panel in document.get("panels", [])]
    if len(set(ids)) != len(ids):
        problem("dashboard: panel ids repeat")
    for variable in document.get("templating", {}).get("list", []):
        if variable.get("type") == "query" and variable.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            problem(f"dashboard: variable {variable.get('name')} does not use the imported data source")
    for panel in document.get("panels", []):
        if not panel.get("targets"):
            problem(f"dashboard: panel '{panel.get('title')}' has no query")
        if panel.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            problem(f"dashboard: panel '{panel.get('title')}' does not use the imported data source")
        position = panel.get("gridPos", {})
        if not all(key in position for key in ("x", "y", "w", "h")) or position["x"] + position["w"] > 24:
            problem(f"dashboard: panel '{panel.get('title')}' has no place on the 24-column grid")


# Settings a local check must not take from the files: the addresses (the command line gives a free
# loopback port instead, and a metrics listener would take 9090 on the machine).
ADDRESS_SETTINGS = {"PORT", "INNERPEACE_PORT", "INNERPEACE_HOST", "INNERPEACE_METRICS_ADDRESS"}


def settings_of(root, source):
    settings = {}
    if source == "kubernetes":
        with open(os.path.join(root, "deploy/kubernetes/kustomization.yaml"), encoding="utf-8") as file:
            generators = yaml.safe_load(file)["configMapGenerator"]
        for literal in next(generator for generator in generators if generator["name"] == "innerpeace")["literals"]:
            name, _, value = literal.partition("=")
            settings[name] = value
    elif source == "pod":
        # The Deployment's container: the ConfigMap's settings, then its own env, which wins.
        settings = settings_of(root, "kubernetes")
        for entry in server_container(root).get("env", []):
            settings[entry["name"]] = entry["value"]
    elif source == "compose":
        service = load_all(os.path.join(root, "compose.yaml"))[0]["services"]["innerpeace"]
        for name, value in service["environment"].items():
            # ${NAME:-default} as compose reads it with NAME unset.
            settings[name] = re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", str(value))
    elif source == "systemd":
        with open(os.path.join(root, "deploy/systemd/innerpeace.env"), encoding="utf-8") as file:
            for line in file:
                if line.strip() and not line.lstrip().startswith("#"):
                    name, _, value = line.strip().partition("=")
                    settings[name] = value
    else:
        problem(f"no settings source {source}")
    return settings


def server_container(root):
    return manifests(root)[("Deployment", "innerpeace")]["spec"]["template"]["spec"]["containers"][0]


def env(root, source):
    # In a container of its own (pod) the addresses are the container's; on this machine the command
    # line gives a free loopback port instead.
    for name, value in sorted(settings_of(root, source).items()):
        if source == "pod" or name not in ADDRESS_SETTINGS:
            print(f"{name}={value}")


def pod_args(root):
    for argument in server_container(root).get("args", []):
        print(argument)


def job_command(root, binary, folder, count):
    job = manifests(root)[("Job", "innerpeace-batch")]["spec"]
    command = job["template"]["spec"]["containers"][0]["args"][0]
    completions = str(job["completions"])
    local = command.replace("/app/innerpeace", binary).replace("/cards", folder)
    local = local.replace(f"/{completions}\"", f"/{count}\"").replace("--jobs 2", "--jobs 1") + " --count 6"
    print(local)


def batch(folder, count, whole=None):
    with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as file:
        merged = json.load(file)
    if whole:
        with open(os.path.join(whole, "manifest.json"), encoding="utf-8") as file:
            if json.load(file) != merged:
                problem(f"manifest.json: not the manifest of the same run unsharded ({whole})")
    files = [image["file"] for image in merged["images"]]
    if len(files) != len(set(files)):
        problem("manifest.json: an image is listed twice")
    if len(files) != merged["totalInRun"] or merged["failures"]:
        problem(f"manifest.json: {len(files)} images and {len(merged['failures'])} failures, "
                f"{merged['totalInRun']} planned")
    shard_files = []
    for index in range(1, int(count) + 1):
        with open(os.path.join(folder, f"manifest-{index}-of-{count}.json"), encoding="utf-8") as file:
            shard_files += [image["file"] for image in json.load(file)["images"]]
    if sorted(shard_files) != sorted(files):
        problem("manifest.json: its images are not the shards' images")
    for image in merged["images"]:
        with open(os.path.join(folder, image["file"]), "rb") as file:
            if hashlib.sha256(file.read()).hexdigest() != image["sha256"]:
                problem(f"{image['file']}: its bytes do not match the manifest's SHA-256")
    if not problems:
        same = ", the manifest an unsharded run writes" if whole else ""
        print(f"deploy-check: {len(files)} images from {count} shards, each listed once and matching its SHA-256{same}")


def main(argv):
    commands = {"kube": kube, "compose": compose, "dashboard": dashboard, "names": names, "env": env, "pod-args": pod_args,
                "job-command": job_command, "batch": batch}
    if len(argv) < 2 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    commands[argv[1]](*argv[2:])
    for message in problems:
        print(f"deploy-check: {message}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
