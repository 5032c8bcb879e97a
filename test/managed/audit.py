#!/usr/bin/env python3
"""The invariant audit of the fault tests: record the cluster and the master, then check the
record against a model (etcd's robustness tests are the pattern: sample during the fault, judge
after it).

  audit.py record --backend B --out FILE (--tls-dir DIR | --admin HOST:PORT) [--interval S]
      Samples until SIGTERM/SIGINT, one JSON line a sample: first the API's view (Bindings,
      pools, the backend's policy ConfigMap, opted-in Pods, through one `kubectl proxy`), then
      the master's ledger: a managed backend's through its leader Service (mutual TLS with the
      client of DIR, as the operator reads it), an external one's at its plain-HTTP admin
      address. Each read may fail (an outage is recorded, not fatal).

  audit.py check FILE [--converge-within S] [--final]
      Replays the record against the model and prints every violation; exit 1 when any.

The model, for the pools on backend B:
  - desired: {domain -> ceiling bytes} of the live (not deleting) Bindings whose DomainExclusive
    is not False;
  - the ledger holds exactly the desired domains with requested_quota_bytes == ceiling, and
    effective_quota_bytes == the Binding's status.effectiveQuota once that is written;
  - the policy ConfigMap parses to the same {domain -> quota};
  - every live Binding and pool keeps its finalizer once it has had it;
  - every opted-in Pod that exists carries its injection record (the client-config annotation).

What is judged when:
  - always (every sample): finalizers, injection records, and "granted => in the ledger and in
    the ConfigMap": a Binding whose QuotaGranted is True/Granted in the API read was in the
    ledger before that read, and the ledger is read after it, so a reachable ledger without it
    has lost it (a failover that seeds the new master from a stale ConfigMap, a wrong DELETE);
    its quota there is judged by the convergence rule;
  - released domains stay released: once a Binding is gone from the API (its finalizer was
    removed after its ledger entry), a later ledger or ConfigMap holding its domain resurrects
    it, unless a live Binding claims that domain again;
  - convergence: after the last change of the desired set, the ledger must equal the model
    within --converge-within seconds (of that change or of the master's return, whichever is
    later), and must not diverge again afterwards (a regression);
  - --final: the last sample's ledger, ConfigMap and Binding statuses equal the model exactly.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

SYSTEM_NAMESPACE = os.environ.get("KVC_SYSTEM_NAMESPACE", "gpustack-system")
GROUP = "worker.gpustack.ai"
BINDING_FINALIZER = "worker.gpustack.ai/kvcache-pool-binding"
POOL_FINALIZER = "worker.gpustack.ai/kvcache-pool"
INJECT_LABEL = "kvcache.gpustack.ai/inject"
CLIENT_CONFIG = "kvcache.gpustack.ai/client-config"

_SUFFIXES = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "": 1}


def quantity_bytes(text):
    """A Kubernetes quantity (8Gi, 512Mi, 1G, 1024) as bytes; None when absent or unreadable."""
    if text is None:
        return None
    match = re.fullmatch(r"([0-9]+)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P|)", str(text))
    return int(match.group(1)) * _SUFFIXES[match.group(2)] if match else None


def condition(obj, kind):
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == kind:
            return f"{c.get('status')}/{c.get('reason')}"
    return ""


# --- record ---------------------------------------------------------------------------------

class Proxy:
    """One `kubectl proxy` on a free local port: four reads a sample without four kubectl starts."""

    def __init__(self):
        self.process = subprocess.Popen(["kubectl", "proxy", "--port=0"], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r":(\d+)", line)
        if not match:
            raise SystemExit(f"audit: kubectl proxy did not start: {line!r}")
        self.base = f"http://127.0.0.1:{match.group(1)}"

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=3) as response:
            return json.load(response)

    def close(self):
        self.process.terminate()


def api_view(proxy, backend):
    pools = proxy.get(f"/apis/{GROUP}/v1/kvcachepools")["items"]
    bindings = proxy.get(f"/apis/{GROUP}/v1/kvcachepoolbindings")["items"]
    pods = proxy.get(f"/api/v1/pods?labelSelector={INJECT_LABEL}%3Dtrue")["items"]
    try:
        config_map = proxy.get(f"/api/v1/namespaces/{SYSTEM_NAMESPACE}/configmaps/"
                               f"{backend}-tenant-quota-policy")
        policy_text = config_map.get("data", {}).get("tenant-quota-policy.yaml")
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise
        policy_text = None
    ours = {p["metadata"]["name"] for p in pools if backend in (p.get("spec", {}).get("backends") or [])}
    return {
        "pools": [{"name": p["metadata"]["name"], "uid": p["metadata"]["uid"],
                   "deleting": "deletionTimestamp" in p["metadata"],
                   "finalized": POOL_FINALIZER in (p["metadata"].get("finalizers") or [])}
                  for p in pools if p["metadata"]["name"] in ours],
        "bindings": [{"key": f"{b['metadata']['namespace']}/{b['metadata']['name']}",
                      "uid": b["metadata"]["uid"],
                      "domain": b.get("spec", {}).get("domain", {}).get("name", "default"),
                      "ceiling": quantity_bytes(b.get("spec", {}).get("quota", {}).get("ceiling")),
                      "deleting": "deletionTimestamp" in b["metadata"],
                      "finalized": BINDING_FINALIZER in (b["metadata"].get("finalizers") or []),
                      "exclusive": condition(b, "DomainExclusive"),
                      "granted": condition(b, "QuotaGranted"),
                      "effective": quantity_bytes(b.get("status", {}).get("effectiveQuota"))}
                     for b in bindings if b.get("spec", {}).get("poolRef", {}).get("name") in ours],
        "policy": parse_policy(policy_text),
        "pods": [{"key": f"{p['metadata']['namespace']}/{p['metadata']['name']}",
                  "uid": p["metadata"]["uid"],
                  "injected": CLIENT_CONFIG in (p["metadata"].get("annotations") or {})}
                 for p in pods],
    }


def parse_policy(text):
    """The policy document as {tenant: quota bytes}; None when the ConfigMap is absent."""
    if text is None:
        return None
    tenants, name = {}, None
    for line in text.splitlines():
        if m := re.match(r'\s*-\s*name:\s*"?(.*?)"?\s*$', line):
            name = m.group(1)
        elif (m := re.match(r"\s*quota:\s*(\d+)\s*$", line)) and name is not None:
            tenants[name] = int(m.group(1))
            name = None
    return tenants


def ledger_view(backend, tls_dir, admin=None):
    """{tenant: [requested, effective]} from the leader Service (or the external admin address),
    or raises with the error."""
    if admin:
        result = subprocess.run(["curl", "-sS", "--fail-with-body", "--max-time", "1.5",
                                 f"http://{admin}/api/v1/tenant_quotas"],
                                capture_output=True, text=True, timeout=5)
        return ledger_rows(result)
    ip = subprocess.run(["kubectl", "-n", SYSTEM_NAMESPACE, "get", "service", f"{backend}-leader",
                         "-o", "jsonpath={.spec.clusterIP}"], capture_output=True, text=True,
                        timeout=5).stdout.strip() if not ledger_view.ip else ledger_view.ip
    ledger_view.ip = ip
    host = f"{backend}-leader.{SYSTEM_NAMESPACE}.svc"
    result = subprocess.run(
        ["curl", "-sS", "--fail-with-body", "--max-time", "1.5", "--cacert", f"{tls_dir}/ca.crt",
         "--cert", f"{tls_dir}/tls.crt", "--key", f"{tls_dir}/tls.key",
         "--connect-to", f"{host}:9003:{ip}:9003", f"https://{host}:9003/api/v1/tenant_quotas"],
        capture_output=True, text=True, timeout=5)
    return ledger_rows(result)


def ledger_rows(result):
    if result.returncode != 0:
        raise RuntimeError((result.stderr or result.stdout).strip()[:200])
    body = json.loads(result.stdout)
    rows = body.get("data", body.get("tenants", []))
    return {row["tenant_id"]: [row.get("requested_quota_bytes"), row.get("effective_quota_bytes")]
            for row in rows}


ledger_view.ip = None


def record(args):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    proxy = Proxy()
    with open(args.out, "a", buffering=1) as out:
        while not stop:
            started = time.time()
            sample = {"t": round(started, 3)}
            try:
                sample["api"] = api_view(proxy, args.backend)
            except Exception as error:  # an outage of the API server is a sample too
                sample["api_error"] = str(error)[:200]
            try:
                sample["ledger"] = ledger_view(args.backend, args.tls_dir, args.admin)
            except Exception as error:
                sample["ledger_error"] = str(error)[:200]
            sample["t_end"] = round(time.time(), 3)
            out.write(json.dumps(sample, sort_keys=True) + "\n")
            time.sleep(max(0.0, args.interval - (time.time() - started)))
    proxy.close()


# --- check ----------------------------------------------------------------------------------

def desired(api):
    """The model: {domain: ceiling} of the live, exclusive Bindings."""
    return {b["domain"]: b["ceiling"] for b in api["bindings"]
            if not b["deleting"] and not b["exclusive"].startswith("False")}


def ledger_requested(ledger):
    return {tenant: figures[0] for tenant, figures in ledger.items()}


def check(args):
    samples = [json.loads(line) for line in open(args.file) if line.strip()]
    violations = []
    finalized = {}          # uid -> the object's key, once seen with its finalizer
    released = {}           # domain -> time its last Binding was seen gone
    last_change = None      # time of the last change of the desired set
    last_outage_end = None  # time of the first reachable ledger after an unreachable one
    converged_at = None
    previous_desired = None
    live_keys = {}          # domain -> Binding keys seen

    def fail(sample, what):
        violations.append(f"t={sample['t']:.3f}: {what}")

    ledger_was_down = False
    outages = []  # [down since, back at, equal to the model at]
    # A sample reads the API, then the ledger: a write the controllers make between the two
    # (a Binding created and registered) is in the ledger before the API snapshot has it. Such a
    # ledger is ahead, not diverged: it equals the model of the next sample that read the API.
    next_models = [None] * len(samples)
    upcoming = None
    for i in range(len(samples) - 1, -1, -1):
        next_models[i] = upcoming
        if samples[i].get("api") is not None:
            upcoming = desired(samples[i]["api"])
    for i, s in enumerate(samples):
        api, ledger = s.get("api"), s.get("ledger")
        if ledger is None:
            if not ledger_was_down:
                outages.append([s["t"], None, None])
            ledger_was_down = True
        elif ledger_was_down:
            ledger_was_down = False
            last_outage_end = s["t"]
            outages[-1][1] = s["t"]
            converged_at = None  # a new master: convergence is judged again
        if api is None:
            continue
        # Finalizers: an object once finalized and not deleting keeps its finalizer.
        for kind, objects in (("Binding", api["bindings"]), ("pool", api["pools"])):
            for o in objects:
                key = o.get("key", o.get("name"))
                if o["finalized"]:
                    finalized[o["uid"]] = key
                elif o["uid"] in finalized and not o["deleting"]:
                    fail(s, f"{kind} {key} lost its finalizer while live")
        # Injection records.
        for pod in api["pods"]:
            if not pod["injected"]:
                fail(s, f"opted-in Pod {pod['key']} exists without its injection record")
        model = desired(api)
        present = {b["domain"] for b in api["bindings"]}
        for b in api["bindings"]:
            live_keys.setdefault(b["domain"], set()).add(b["key"])
        for domain in live_keys:
            if domain not in present and domain not in released:
                released[domain] = s["t"]
            elif domain in present:
                released.pop(domain, None)
        if model != previous_desired:
            last_change = s["t"]
            previous_desired = model
            converged_at = None
        policy = api["policy"]
        # Granted => in the ConfigMap (written before the ledger) and in the ledger. Present, at
        # whatever quota: a ceiling just changed is still granted at the old one until a pass
        # writes the new (or while the master cannot be written), and the grant says so; the
        # quotas themselves are judged by the convergence below.
        for b in api["bindings"]:
            if b["deleting"] or b["granted"] != "True/Granted":
                continue
            if policy is not None and policy.get(b["domain"]) is None:
                fail(s, f"granted domain {b['domain']} ({b['key']}) is not in the policy ConfigMap")
            if ledger is not None:
                entry = ledger.get(b["domain"])
                if entry is None:
                    fail(s, f"granted domain {b['domain']} ({b['key']}) is missing from the ledger")
        # Released domains stay released.
        for domain, since in released.items():
            if ledger is not None and domain in ledger and s["t"] > since:
                fail(s, f"released domain {domain} is back in the ledger")
            if policy is not None and domain in policy and s["t"] > since + args.converge_within:
                fail(s, f"released domain {domain} is still in the policy ConfigMap")
        # Convergence and no regression after it.
        if ledger is None:
            continue
        equal = ledger_requested(ledger) == model
        ahead = not equal and ledger_requested(ledger) == next_models[i]
        if equal and converged_at is None:
            converged_at = s["t"]
            if outages and outages[-1][1] is not None and outages[-1][2] is None:
                outages[-1][2] = s["t"]
        elif not equal and not ahead and converged_at is not None:
            fail(s, f"the ledger diverged after converging: ledger {ledger_requested(ledger)}, "
                    f"model {model}")
            converged_at = None
        since = max(t for t in (last_change, last_outage_end, samples[0]["t"]) if t is not None)
        if not equal and not ahead and s["t"] - since > args.converge_within:
            fail(s, f"the ledger has not converged {s['t'] - since:.1f}s after the last change: "
                    f"ledger {ledger_requested(ledger)}, model {model}")
    if args.final:
        check_final(samples, violations)
    reachable = sum(1 for s in samples if "ledger" in s)
    print(f"audit: {len(samples)} samples ({reachable} with the ledger reachable, "
          f"{sum(1 for s in samples if 'api' in s)} with the API), "
          f"{len(violations)} violation(s)")
    for down, back, equal in outages:
        print(f"  ledger unreachable for {(back or samples[-1]['t']) - down:.1f}s"
              + (f", equal to the model {equal - back:.1f}s after it answered again"
                 if back and equal else ", never equal to the model again" if back else ""))
    seen = set()
    for v in violations:
        what = v.split(": ", 1)[1]
        if what not in seen:  # one line per distinct violation, at its first sample
            seen.add(what)
            print("  " + v)
    return 1 if violations else 0


def check_final(samples, violations):
    last = next((s for s in reversed(samples) if "api" in s and "ledger" in s), None)
    if last is None:
        violations.append("final: no sample read both the API and the ledger")
        return
    model = desired(last["api"])
    if ledger_requested(last["ledger"]) != model:
        violations.append(f"t={last['t']:.3f}: final: ledger {ledger_requested(last['ledger'])} "
                          f"!= model {model}")
    if last["api"]["policy"] is not None and last["api"]["policy"] != model:
        violations.append(f"t={last['t']:.3f}: final: policy ConfigMap {last['api']['policy']} "
                          f"!= model {model}")
    for b in last["api"]["bindings"]:
        entry = last["ledger"].get(b["domain"])
        if not b["deleting"] and entry is not None and b["effective"] != entry[1]:
            violations.append(f"t={last['t']:.3f}: final: {b['key']} effectiveQuota {b['effective']} "
                              f"!= the master's grant {entry[1]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--backend", required=True)
    rec.add_argument("--out", required=True)
    how = rec.add_mutually_exclusive_group(required=True)
    how.add_argument("--tls-dir", help="tls.crt, tls.key, ca.crt of an admin client (managed)")
    how.add_argument("--admin", help="HOST:PORT of an external master's plain-HTTP admin API")
    rec.add_argument("--interval", type=float, default=0.25)
    chk = sub.add_parser("check")
    chk.add_argument("file")
    chk.add_argument("--converge-within", type=float, default=40.0)
    chk.add_argument("--final", action="store_true")
    args = parser.parse_args()
    return record(args) if args.command == "record" else check(args)


if __name__ == "__main__":
    sys.exit(main())
