#!/usr/bin/env python3
"""The Prometheus configuration the Prometheus Operator would generate from the monitoring kit.

The local cluster runs Prometheus itself (built from its Go module) but not the Prometheus
Operator, so test/monitoring/kit.sh hands this script the ServiceMonitors, PodMonitors and
PrometheusRules as the API server stored them (validated against the operator's own CRDs) and
starts Prometheus with what it prints. The translation follows the operator's generator
(pkg/prometheus/promcfg.go of prometheus-operator) for the fields the kit uses — selectors,
namespace selectors, port names, path, scheme, interval, TLS from Secrets, relabelings — and
refuses any other field, so that the kit cannot grow a field this check would silently ignore.

usage: prometheus_config.py config MONITORS.json SECRETS_DIR RULES_DIR > prometheus.yml
       prometheus_config.py rules RULES.json RULES_DIR   (writes one file per PrometheusRule)
SECRETS_DIR is where the Secrets the monitors name are mounted (SECRETS_DIR/<namespace>-<name>/<key>),
as the operator mounts its copies of them.
"""
import json
import os
import re
import sys

import yaml

# The endpoint fields this translation understands; anything else is refused.
ENDPOINT_FIELDS = {"port", "path", "scheme", "interval", "tlsConfig", "relabelings"}
SPEC_FIELDS = {"selector", "namespaceSelector", "endpoints", "podMetricsEndpoints"}
TLS_FIELDS = {"serverName", "ca", "cert", "keySecret"}
RELABEL_FIELDS = {"sourceLabels": "source_labels", "targetLabel": "target_label",
                  "regex": "regex", "replacement": "replacement", "action": "action",
                  "separator": "separator"}


def sanitize(name):
    """A Kubernetes label name as a Prometheus meta label suffix (the SD's rule)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def refuse_unknown(what, fields, allowed):
    unknown = set(fields) - allowed
    if unknown:
        sys.exit(f"prometheus_config.py: {what}: fields {sorted(unknown)} are not translated here "
                 "(teach this script what the Prometheus Operator does with them)")


def selector_relabelings(selector, kind):
    """keep rules for matchLabels, as the operator writes them (value and presence)."""
    refuse_unknown("selector", selector, {"matchLabels"})
    rules = []
    for key, value in sorted(selector.get("matchLabels", {}).items()):
        rules.append({"action": "keep",
                      "source_labels": [f"__meta_kubernetes_{kind}_label_{sanitize(key)}",
                                        f"__meta_kubernetes_{kind}_labelpresent_{sanitize(key)}"],
                      "regex": f"({value});true"})
    return rules


def tls_config(tls, namespace, secrets_dir):
    refuse_unknown("tlsConfig", tls, TLS_FIELDS)
    out = {}
    if "serverName" in tls:
        out["server_name"] = tls["serverName"]

    def path(ref):
        return os.path.join(secrets_dir, f"{namespace}-{ref['name']}", ref["key"])
    if "ca" in tls:
        out["ca_file"] = path(tls["ca"]["secret"])
    if "cert" in tls:
        out["cert_file"] = path(tls["cert"]["secret"])
    if "keySecret" in tls:
        out["key_file"] = path(tls["keySecret"])
    return out


def user_relabelings(relabelings):
    out = []
    for rule in relabelings or []:
        refuse_unknown("relabeling", rule, set(RELABEL_FIELDS))
        out.append({RELABEL_FIELDS[k]: v for k, v in rule.items()})
    return out


def scrape_config(monitor, index, endpoint, secrets_dir):
    kind = monitor["kind"]
    meta, spec = monitor["metadata"], monitor["spec"]
    refuse_unknown(f"{kind} {meta['name']}", spec, SPEC_FIELDS)
    refuse_unknown(f"{kind} {meta['name']} endpoint", endpoint, ENDPOINT_FIELDS)
    pod_monitor = kind == "PodMonitor"
    role = "pod" if pod_monitor else "endpoints"
    sd = {"role": role}
    namespaces = spec.get("namespaceSelector", {})
    refuse_unknown("namespaceSelector", namespaces, {"any", "matchNames"})
    if not namespaces.get("any"):
        sd["namespaces"] = {"names": namespaces.get("matchNames", [meta["namespace"]])}
    job = f"{'podMonitor' if pod_monitor else 'serviceMonitor'}/{meta['namespace']}/{meta['name']}/{index}"
    relabel = [{"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"}]
    relabel += selector_relabelings(spec["selector"], "pod" if pod_monitor else "service")
    port = endpoint["port"]
    if pod_monitor:
        relabel.append({"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"],
                        "regex": port})
        relabel.append({"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"],
                        "regex": "(Failed|Succeeded)"})
    else:
        relabel.append({"action": "keep", "source_labels": ["__meta_kubernetes_endpoint_port_name"],
                        "regex": port})
    relabel.append({"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"})
    if not pod_monitor:
        relabel.append({"source_labels": ["__meta_kubernetes_service_name"], "target_label": "service"})
    relabel.append({"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"})
    relabel.append({"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"})
    if pod_monitor:
        relabel.append({"target_label": "job", "replacement": f"{meta['namespace']}/{meta['name']}"})
    else:
        relabel.append({"source_labels": ["__meta_kubernetes_service_name"], "target_label": "job"})
    relabel.append({"target_label": "endpoint", "replacement": port})
    relabel += user_relabelings(endpoint.get("relabelings"))
    config = {"job_name": job, "honor_labels": False, "kubernetes_sd_configs": [sd],
              "metrics_path": endpoint.get("path", "/metrics"),
              "scheme": endpoint.get("scheme", "http"),
              "relabel_configs": relabel}
    if "interval" in endpoint:
        config["scrape_interval"] = endpoint["interval"]
    if "tlsConfig" in endpoint:
        config["tls_config"] = tls_config(endpoint["tlsConfig"], meta["namespace"], secrets_dir)
    return config


def main_config(monitors_json, secrets_dir, rules_dir):
    items = json.load(open(monitors_json))["items"]
    scrape_configs = []
    for monitor in sorted(items, key=lambda m: (m["kind"], m["metadata"]["namespace"], m["metadata"]["name"])):
        endpoints = monitor["spec"].get("endpoints") or monitor["spec"].get("podMetricsEndpoints")
        for index, endpoint in enumerate(endpoints):
            scrape_configs.append(scrape_config(monitor, index, endpoint, secrets_dir))
    config = {"global": {"scrape_interval": "30s", "evaluation_interval": "30s"},
              "rule_files": [os.path.join(rules_dir, "*.yaml")],
              "scrape_configs": scrape_configs}
    yaml.safe_dump(config, sys.stdout, sort_keys=False)


def main_rules(rules_json, rules_dir):
    # The operator writes each PrometheusRule's spec as a rule file of its own.
    for rule in json.load(open(rules_json))["items"]:
        meta = rule["metadata"]
        name = f"{meta['namespace']}-{meta['name']}-{meta['uid']}.yaml"
        with open(os.path.join(rules_dir, name), "w") as out:
            yaml.safe_dump(rule["spec"], out, sort_keys=False)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "config":
        main_config(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "rules":
        main_rules(*sys.argv[2:])
    else:
        sys.exit(__doc__)
