"""One replica of `kvcache probe`: a store client configured only by what the webhook injected.

It does what the engines' store connectors do with a stream of prompts that share a prefix: chain
the block hashes of each prompt, look the blocks up (batch_is_exist), read the leading run of hits
into registered memory (batch_get_into) and write the misses from it (batch_put_from), under the
engine's own key layout (docs/observability.md cites the engines' files). It counts what the
engines count, under their metric names, and times every batch put and get.

Its one result is a JSON object on the termination log (read by `kvcache probe` from the Pod's
status; 4 KiB at most) and on stdout. The exit code is 0 when the store could be used. The client
runs in a child process under a deadline the parent keeps: a master that does not answer ends the
replica with stage "stalled", never a hang.

With KVC_PROBE_MODE=clean it is the run's last Pod instead: it removes every block the run's
KVC_PROBE_REPLICAS replicas wrote (their keys follow from the seed), so that none stays in the
tenant's quota or holds the Binding's deletion.

Configuration: the store's from the injection only (the vLLM file vehicle, MOONCAKE_CONFIG_PATH,
or the SGLang environment vehicle, MOONCAKE_MASTER and its siblings); the probe's own workload
from KVC_PROBE_* variables that `kvcache probe` sets.
"""

import ctypes
import hashlib
import json
import os
import pickle
import random
import select
import signal
import socket
import sys
import time

# The termination log kvcache probe reads (a test outside a Pod names another file).
RESULT_PATH = os.environ.get("KVC_PROBE_RESULT_PATH", "/dev/termination-log")
SETUP_TIMEOUT_S = 30
CONNECT_TIMEOUT_S = 5
# A refused connection is tried again for this long: a Pod that has just started may be refused by
# a NetworkPolicy implementation that has not yet learnt its address (kube-router: about a second).
CONNECT_REFUSED_RETRY_S = 10
# SGLang's default local buffer when its extra config names none (mooncake_store.py).
SGLANG_LOCAL_BUFFER = 16 * 1024 * 1024
QUOTA_EXCEEDED = -1700
OBJECT_NOT_FOUND = -704


class Failure(Exception):
    def __init__(self, stage, detail, code=None):
        super().__init__(detail)
        self.stage, self.detail, self.code = stage, detail, code


def workload():
    env = os.environ
    return {
        "engine": env.get("KVC_PROBE_ENGINE", "vllm"),
        # "probe" (a replica), or "clean": remove every block the run's replicas wrote.
        "mode": env.get("KVC_PROBE_MODE", "probe"),
        "replicas": int(env.get("KVC_PROBE_REPLICAS", "1")),
        "replica": int(env.get("KVC_PROBE_REPLICA", "1")),
        "seed": env.get("KVC_PROBE_SEED", "kvcache-probe"),
        "model": env.get("KVC_PROBE_MODEL", "kvcache-probe"),
        "prompts": int(env.get("KVC_PROBE_PROMPTS", "8")),
        "prefix_blocks": int(env.get("KVC_PROBE_PREFIX_BLOCKS", "8")),
        "suffix_blocks": int(env.get("KVC_PROBE_SUFFIX_BLOCKS", "2")),
        "block_tokens": int(env.get("KVC_PROBE_BLOCK_TOKENS", "16")),
        "block_bytes": int(env.get("KVC_PROBE_BLOCK_BYTES", str(64 * 1024))),
        "deadline_s": float(env.get("KVC_PROBE_DEADLINE_SECONDS", "90")),
    }


def injected_config():
    """The store client's configuration, read only from what the webhook wrote."""
    env = os.environ
    path = env.get("MOONCAKE_CONFIG_PATH")
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                cfg = json.load(f)
        except (OSError, ValueError) as e:
            raise Failure("config", f"the injected file {path} could not be read: {e}")
        return {
            "vehicle": "file",
            "master": cfg.get("master_server_address", ""),
            "metadata_server": cfg.get("metadata_server", "P2PHANDSHAKE"),
            "protocol": cfg.get("protocol", "tcp"),
            "device": cfg.get("device_name", ""),
            "segment": int(cfg.get("global_segment_size", 0)),
            "buffer": int(cfg.get("local_buffer_size", 128 * 1024 * 1024)),
            "tenant": cfg.get("tenant_id"),
            # vLLM takes its local address from the host it runs on; a Pod's is its IP.
            "hostname": env.get("POD_IP") or socket.gethostbyname(socket.gethostname()),
        }
    if "MOONCAKE_MASTER" in env:
        return {
            "vehicle": "environment",
            "master": env["MOONCAKE_MASTER"],
            "metadata_server": env.get("MOONCAKE_TE_META_DATA_SERVER", "P2PHANDSHAKE"),
            "protocol": env.get("MOONCAKE_PROTOCOL", "tcp"),
            "device": env.get("MOONCAKE_DEVICE", ""),
            "segment": int(env.get("MOONCAKE_GLOBAL_SEGMENT_SIZE", "0")),
            "buffer": SGLANG_LOCAL_BUFFER,
            "tenant": env.get("MOONCAKE_TENANT_ID"),
            "hostname": env.get("MOONCAKE_LOCAL_HOSTNAME") or env.get("POD_IP", ""),
        }
    raise Failure("config", "nothing was injected: neither MOONCAKE_CONFIG_PATH (vLLM's file) "
                  "nor MOONCAKE_MASTER (SGLang's environment) is set")


# --- the engines' block hashes and key layouts -------------------------------------------------

# vLLM 0.29's prefix-cache chain (vllm/v1/core/kv_cache_utils.py hash_block_tokens,
# init_none_hash; vllm/utils/hashing.py sha256): sha256 over the pickle of (parent hash, block
# token ids, extra keys), the root the hash of the fixed seed "vllm-none-hash". The key joins the
# model directory's basename, the parallel layout and the hash in hex; one object a block holds
# every layer (vllm/distributed/kv_transfer/kv_connector/v1/mooncake/store/data.py, worker.py).
def vllm_sha256(value):
    return hashlib.sha256(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)).digest()


VLLM_NONE_HASH = vllm_sha256("vllm-none-hash")


def vllm_block_hash(parent, tokens):
    return vllm_sha256((parent, tuple(tokens), None))


def vllm_keys(model, block_hash):
    name = model.rstrip("/").split("/")[-1]
    return [f"{name}@tp_rank:0@pcp0@dcp0@pp_rank:0@group:0@{block_hash.hex()}"]


# SGLang 0.5.18's page hash (python/sglang/srt/mem_cache/utils.py get_hash_str): sha256 of the
# parent page's 32-byte digest, then the token ids as little-endian uint32, in hex; no root seed.
# An MHA page is two objects, K and V, keyed by the served model name ("/" -> "-"), the hash and
# the TP rank (srt/mem_cache/storage/mooncake_store/mooncake_store.py).
def sglang_block_hash(parent, tokens):
    h = hashlib.sha256()
    if parent is not None:
        h.update(bytes.fromhex(parent))
    for t in tokens:
        h.update(t.to_bytes(4, byteorder="little", signed=False))
    return h.hexdigest()


def sglang_keys(model, page_hash):
    base = f"{model.replace('/', '-')}_{page_hash}_0"
    return [base + "_k", base + "_v"]


# What each engine exports for the external tier, in tokens: vLLM's query and hit counters
# (vllm/v1/metrics/loggers.py); SGLang's prompt tokens and the tokens its storage backend served
# (srt/observability/metrics_collector.py, cache_source "storage_<backend class>").
ENGINES = {
    # engine: (root, block hash, keys, query counter, hit counter)
    "vllm": (VLLM_NONE_HASH, vllm_block_hash, vllm_keys,
             "vllm:external_prefix_cache_queries_total", "vllm:external_prefix_cache_hits_total"),
    "sglang": (None, sglang_block_hash, sglang_keys, "sglang:prompt_tokens_total",
               'sglang:cached_tokens_total{cache_source="storage_MooncakeStore"}'),
}


def prompt_tokens(w, prompt, replica=None):
    """Token ids: one prefix every replica shares, then a suffix of the replica's own."""
    per = w["block_tokens"]
    shared = random.Random(f"{w['seed']}/prefix")
    own = random.Random(f"{w['seed']}/replica-{replica or w['replica']}/prompt-{prompt}")
    return ([shared.randrange(1, 150000) for _ in range(w["prefix_blocks"] * per)]
            + [own.randrange(1, 150000) for _ in range(w["suffix_blocks"] * per)])


def payload(key, size):
    """A block's bytes, derived from its key, so that a read can be checked."""
    seed = hashlib.sha256(key.encode("utf-8")).digest()
    return (seed * (size // len(seed) + 1))[:size]


# --- the probe -----------------------------------------------------------------------------------

class Timings:
    def __init__(self):
        self.samples, self.bytes, self.objects = [], 0, 0

    def add(self, seconds, size, objects):
        self.samples.append(seconds)
        self.bytes += size
        self.objects += objects

    def summary(self):
        s = sorted(self.samples)
        total = sum(s)

        def pct(p):
            return round(s[min(len(s) - 1, int(p * len(s)))] * 1000, 3) if s else None
        return {"ops": len(s), "objects": self.objects, "bytes": self.bytes, "p50Ms": pct(0.5), "p99Ms": pct(0.99),
                "mibPerSecond": round(self.bytes / total / 1048576, 2) if total > 0 else None}


class Probe:
    def __init__(self, w, cfg, report_phase):
        self.w, self.cfg, self.phase = w, cfg, report_phase
        self.root, self.block_hash, self.keys, self.query_name, self.hit_name = ENGINES[w["engine"]]
        self.store = None
        self.objects_per_block = 1 if w["engine"] == "vllm" else 2
        self.buffer = None
        self.removed = 0
        self.lookups = self.written = self.read_blocks = self.corrupt = self.quota_refused = 0
        self.prefix_read = 0
        self.queries = self.hits = 0
        self.put, self.get = Timings(), Timings()

    def connect(self):
        host, _, port = self.cfg["master"].rpartition(":")
        if not host or not port.isdigit():
            raise Failure("config", f"the injected master address '{self.cfg['master']}' is not "
                          "host:port")
        give_up = time.monotonic() + CONNECT_REFUSED_RETRY_S
        while True:
            try:
                socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
                return
            except ConnectionRefusedError as e:
                if time.monotonic() >= give_up:
                    raise Failure("connect", f"{type(e).__name__}: {e} "
                                  f"(for {CONNECT_REFUSED_RETRY_S} s)")
                time.sleep(0.5)
            except OSError as e:
                raise Failure("connect", f"{type(e).__name__}: {e}")

    def setup(self):
        from mooncake.store import MooncakeDistributedStore
        self.store = MooncakeDistributedStore()
        kwargs = dict(local_hostname=self.cfg["hostname"],
                      metadata_server=self.cfg["metadata_server"],
                      global_segment_size=self.cfg["segment"],
                      local_buffer_size=self.cfg["buffer"], protocol=self.cfg["protocol"],
                      rdma_devices=self.cfg["device"], master_server_addr=self.cfg["master"])
        if self.cfg["tenant"]:
            kwargs["tenant_id"] = self.cfg["tenant"]
        rc = self.store.setup(**kwargs)
        if rc != 0:
            raise Failure("setup", f"setup() returned {rc}", rc)

    def buffer_for(self, objects):
        """The registered memory the batch calls move blocks through (the engines' KV buffers)."""
        size = objects * self.object_bytes()
        if self.buffer is None or len(self.buffer) < size:
            if self.buffer is not None:
                self.store.unregister_buffer(ctypes.addressof(self.buffer))
            self.buffer = ctypes.create_string_buffer(size)
            rc = self.store.register_buffer(ctypes.addressof(self.buffer), size)
            if rc != 0:
                raise Failure("setup", f"register_buffer() returned {rc}", rc)
        return ctypes.addressof(self.buffer)

    def slots(self, count):
        base, size = self.buffer_for(count), self.object_bytes()
        return [base + i * size for i in range(count)], [size] * count

    def write(self, keys):
        """Writes `keys` in one batch; each key's code (0, or TENANT_QUOTA_EXCEEDED: a full quota
        is the contract's behaviour, not a failure)."""
        addrs, sizes = self.slots(len(keys))
        for key, addr, size in zip(keys, addrs, sizes):
            ctypes.memmove(addr, payload(key, size), size)
        start = time.monotonic()
        codes = list(self.store.batch_put_from(keys, addrs, sizes))
        self.put.add(time.monotonic() - start, sum(sizes), len(keys))
        for rc in codes:
            if rc not in (0, QUOTA_EXCEEDED):
                raise Failure("write", f"batch_put_from() returned {rc} for a block", rc)
        return codes

    def read(self, keys):
        """Reads `keys` in one batch; the number whose bytes differ from what was written."""
        addrs, sizes = self.slots(len(keys))
        start = time.monotonic()
        got = list(self.store.batch_get_into(keys, addrs, sizes))
        self.get.add(time.monotonic() - start, sum(max(0, n) for n in got), len(keys))
        corrupt = 0
        for key, addr, size, n in zip(keys, addrs, sizes, got):
            if n <= 0:
                raise Failure("read", f"batch_get_into() of a block the store listed returned "
                              f"{n}: {key}", n if n < 0 else None)
            corrupt += ctypes.string_at(addr, size) != payload(key, size)
        return corrupt

    def object_bytes(self):
        # One object a block (vLLM); SGLang's MHA page is two, K and V, of half the block each.
        return max(1, self.w["block_bytes"] // self.objects_per_block)

    def prompt_blocks(self, index, replica=None):
        """The store keys of each block of a prompt, chained as the engine chains them."""
        tokens = prompt_tokens(self.w, index, replica)
        per, parent, blocks = self.w["block_tokens"], self.root, []
        for start in range(0, len(tokens), per):
            parent = self.block_hash(parent, tokens[start:start + per])
            blocks.append(self.keys(self.w["model"], parent))
        return tokens, blocks

    def clean(self):
        """Removes every block the run's replicas wrote (forced: a block read a moment ago is
        still leased), so that they hold none of the tenant's quota and the Binding can go."""
        keys = set()
        for replica in range(1, self.w["replicas"] + 1):
            for index in range(self.w["prompts"]):
                keys.update(k for block in self.prompt_blocks(index, replica)[1] for k in block)
        keys = sorted(keys)
        codes = list(self.store.batch_remove(keys, True))
        self.removed = codes.count(0)
        # A key no replica wrote (a replica that failed early) is not found: not an error.
        failed = [c for c in codes if c not in (0, OBJECT_NOT_FOUND)]
        if failed:
            raise Failure("clean", f"batch_remove() returned {failed[0]} for {len(failed)} of "
                          f"{len(keys)} blocks", failed[0])

    def run_prompt(self, index):
        w = self.w
        tokens, blocks = self.prompt_blocks(index)
        per = w["block_tokens"]
        found = list(self.store.batch_is_exist([k for keys in blocks for k in keys]))
        self.lookups += len(blocks)
        # A block is present when all its objects are (SGLang's K and V); the leading run of
        # present blocks is the hit, and the engine recomputes the rest.
        width = len(blocks[0]) if blocks else 1
        present = [all(f == 1 for f in found[i * width:(i + 1) * width])
                   for i in range(len(blocks))]
        hit_blocks = present.index(False) if False in present else len(blocks)
        self.queries += len(tokens)
        self.hits += hit_blocks * per
        if index == 0:
            self.prefix_read = min(hit_blocks, w["prefix_blocks"])
        # Blocks are counted whole: SGLang's K and V objects are one block.
        if hit_blocks:
            self.corrupt += self.read([k for keys in blocks[:hit_blocks] for k in keys])
            self.read_blocks += hit_blocks
        # The engines skip what the store holds already (a lookup before the write).
        missing = [keys for keys, here in zip(blocks[hit_blocks:], present[hit_blocks:])
                   if not here]
        if missing:
            codes = self.write([k for keys in missing for k in keys])
            self.quota_refused += codes.count(QUOTA_EXCEEDED)
            # A block is written when every object of it was.
            self.written += sum(all(c == 0 for c in codes[i * width:(i + 1) * width])
                                for i in range(len(missing)))

    def run(self):
        self.phase(f"connecting to the master at {self.cfg['master']}")
        self.connect()
        self.phase(f"setting up the store client against the master at {self.cfg['master']}")
        self.setup()
        if self.w["mode"] == "clean":
            self.phase("removing the run's blocks")
            self.clean()
            return
        for index in range(self.w["prompts"]):
            self.phase(f"at prompt {index + 1} of {self.w['prompts']}")
            self.run_prompt(index)

    def result(self):
        if self.w["mode"] == "clean":
            return {"removed": self.removed}
        return {
            "lookups": self.lookups, "written": self.written, "read": self.read_blocks,
            "corrupt": self.corrupt, "quotaRefused": self.quota_refused,
            "prefixBlocks": self.w["prefix_blocks"], "prefixRead": self.prefix_read,
            "queryTokens": self.queries, "hitTokens": self.hits,
            "counters": {self.query_name: self.queries, self.hit_name: self.hits},
            "put": self.put.summary(), "get": self.get.summary(),
        }


def emit(result):
    text = json.dumps(result, separators=(",", ":"), sort_keys=True)
    print(text, flush=True)
    try:
        with open(RESULT_PATH, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        pass


def serve_counters(w, result):
    """With KVC_PROBE_SERVE_SECONDS, stands after a run that used the store as an engine does:
    its counters in the Prometheus text format on the engine's metrics port (vLLM 8000, SGLang
    30000), under the engines' names, for the operator's counter reader (a Binding's
    status.hitRate)."""
    seconds = float(os.environ.get("KVC_PROBE_SERVE_SECONDS", "0"))
    if seconds <= 0 or result.get("stage") != "done":
        return
    from http.server import BaseHTTPRequestHandler, HTTPServer
    lines = []
    for name, value in sorted(result.get("counters", {}).items()):
        family, _, labels = name.partition("{")
        model = f'model_name="{w["model"]}"'
        labels = "{" + model + ("," + labels if labels else "}")
        lines += [f"# TYPE {family} counter", f"{family}{labels} {float(value)}"]
    body = ("\n".join(lines) + "\n").encode()

    class Metrics(BaseHTTPRequestHandler):
        def do_GET(self):
            found = self.path.split("?")[0] == "/metrics"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            if found:
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("", 30000 if w["engine"] == "sglang" else 8000), Metrics)
    server.timeout = 1
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        server.handle_request()


def run_replica(w, report_phase):
    """The whole replica, in the child process: its result, success or failure."""
    result = {"v": 1, "replica": w["replica"], "engine": w["engine"], "stage": "done"}
    probe = None
    try:
        cfg = injected_config()
        result.update(vehicle=cfg["vehicle"], master=cfg["master"], tenant=cfg["tenant"] or "")
        probe = Probe(w, cfg, report_phase)
        probe.run()
    except Failure as f:
        result.update(stage=f.stage, detail=f.detail[:1000])
        if f.code is not None:
            result["code"] = f.code
    except Exception as e:  # the client raised: report it rather than a traceback alone
        result.update(stage="client", detail=f"{type(e).__name__}: {e}"[:1000])
    if probe is not None:
        result.update(probe.result())
    return result


def supervise(w, pid, pipe, start):
    """The child's result, or one saying where it stalled or how it ended.

    The store client holds the interpreter while it waits on the master, so the deadline is kept
    by this parent process, which never loads the client."""
    deadline, buffer, phase = start + w["deadline_s"], b"", "starting"
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([pipe], [], [], remaining)[0]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"stage": "stalled",
                    "detail": f"no answer within {w['deadline_s']:g} s (while {phase})"}
        chunk = os.read(pipe, 65536)
        if not chunk:
            _, status = os.waitpid(pid, 0)
            return {"stage": "client", "detail": f"the store client's process ended without a "
                    f"result (wait status {status}, while {phase}); its log is above"}
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            if "result" in message:
                os.waitpid(pid, 0)
                return message["result"]
            phase = message["phase"]


def main():
    w = workload()
    read_end, write_end = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        out = os.fdopen(write_end, "w")

        def report_phase(phase):
            out.write(json.dumps({"phase": phase}) + "\n")
            out.flush()
        out.write(json.dumps({"result": run_replica(w, report_phase)}) + "\n")
        out.flush()
        os._exit(0)
    os.close(write_end)
    outcome = supervise(w, pid, read_end, start)
    result = {"v": 1, "replica": w["replica"], "engine": w["engine"]}
    try:  # where a stalled child was sending to
        cfg = injected_config()
        result.update(vehicle=cfg["vehicle"], master=cfg["master"], tenant=cfg["tenant"] or "")
    except Failure:
        pass
    result.update(outcome)
    result["seconds"] = round(time.monotonic() - start, 3)
    emit(result)
    serve_counters(w, result)
    sys.exit(0 if result["stage"] == "done" else 1)


if __name__ == "__main__":
    main()
