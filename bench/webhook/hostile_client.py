#!/usr/bin/env python3
"""A hostile caller of the webhook server, for bench/webhook/hostile.sh (RSS under attack, on
this machine) and test/managed/tests/hostile_callers.sh (from an unprivileged Pod, against the
installed operator's Service). Python's standard library only: the store image has python3.

Each attack runs for --seconds, reconnecting whenever the server closes a connection, and the
summary (one JSON line on stdout) counts what the server answered:
  --deep N        N concurrent loops POSTing a review whose object nests 100,000 arrays deep
  --big N         N connections declaring a near-limit body (--big-bytes), sending all of it but
                  the last byte fast, then holding it open (the server's request deadline ends it)
  --parse N       N loops POSTing complete near-limit reviews of the shapes that parse largest
                  within the limits (one long string; 100,000 values), so the handlers work
  --idle N        N connections that connect and send nothing (before the TLS handshake); the
                  server closes them at its handshake deadline or to make room
  --idle-tls N    N connections that finish the handshake and send nothing
  --slow-header N N connections sending a header one byte a second
  --normal N      N loops POSTing a small review (a Pod that does not opt in) ten times a second
                  each, on a new connection every time, as a caller that should still be served
"""
import argparse
import asyncio
import collections
import json
import ssl
import sys
import time

REVIEW_HEAD = ('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":'
               '{"uid":"hostile","kind":{"group":"","version":"v1","kind":"Pod"},'
               '"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE",'
               '"namespace":"hostile","name":"hostile","object":')
PATH = "/mutate-gpustack-worker-kvcache-core-v1-pod"

counts = collections.Counter()


def review(obj_text):
    return (REVIEW_HEAD + obj_text + "}}").encode()


def header(host, length, path=PATH):
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def bodies(size):
    """Complete reviews near `size` bytes, of the shapes that parse largest within the limits."""
    long_string = review('{"kind":"Pod","metadata":{"name":"x","annotations":{"a":"' +
                         "x" * (size - 600) + '"}}}')
    values = review('{"kind":"Pod","metadata":{"name":"x"},"x":[' +
                    ",".join(['""'] * 99_000) + "]}")
    return [long_string, values]


class Target:
    def __init__(self, args):
        self.host, self.port = args.host, args.port
        self.source = (args.source, 0) if args.source else None
        self.tls = None
        if not args.plain:
            self.tls = ssl.create_default_context()
            self.tls.check_hostname = False
            self.tls.verify_mode = ssl.CERT_NONE

    async def connect(self, tls=True):
        return await asyncio.wait_for(asyncio.open_connection(
            self.host, self.port, ssl=self.tls if tls else None, local_addr=self.source,
            server_hostname=self.host if (tls and self.tls) else None), 15)


async def status_of(reader):
    line = await asyncio.wait_for(reader.readline(), 20)
    if not line:
        return "closed"
    return line.split(b" ")[1].decode() if b" " in line else "garbled"


async def read_answer(reader):
    """The status of one answer, its body read (Content-Length)."""
    status = await status_of(reader)
    if status == "closed":
        return status
    length = 0
    while True:
        line = await asyncio.wait_for(reader.readline(), 20)
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    await asyncio.wait_for(reader.readexactly(length), 20)
    return status


async def close(writer):
    try:
        writer.close()
        await asyncio.wait_for(writer.wait_closed(), 2)
    except Exception:
        pass


async def loop_posts(target, name, payloads, deadline, pause=0):
    i = 0
    while time.monotonic() < deadline:
        await asyncio.sleep(pause)
        body = payloads[i % len(payloads)]
        i += 1
        try:
            reader, writer = await target.connect()
            writer.write(header(target.host, len(body)) + body)
            await writer.drain()
            counts[f"{name}:{await read_answer(reader)}"] += 1
            await close(writer)
        except Exception as e:
            counts[f"{name}:error:{type(e).__name__}"] += 1
            await asyncio.sleep(0.05)


async def hold_big(target, size, deadline):
    body = b'"' + b"x" * (size - 2) + b'"'
    while time.monotonic() < deadline:
        try:
            reader, writer = await target.connect()
            writer.write(header(target.host, len(body)))
            for at in range(0, len(body) - 1, 256 * 1024):
                writer.write(body[at:min(at + 256 * 1024, len(body) - 1)])
                await writer.drain()
            started = time.monotonic()
            counts[f"big:{await status_of(reader)}"] += 1  # 503, or closed at the deadline
            counts["big:held_seconds"] += round(time.monotonic() - started)
            await close(writer)
        except Exception as e:
            counts[f"big:error:{type(e).__name__}"] += 1
            await asyncio.sleep(0.05)


async def hold_idle(target, tls, deadline):
    name = "idle_tls" if tls else "idle"
    while time.monotonic() < deadline:
        try:
            reader, writer = await target.connect(tls=tls)
            counts[f"{name}:connected"] += 1
            left = deadline - time.monotonic()
            data = await asyncio.wait_for(reader.read(1), max(left, 0.1))
            counts[f"{name}:{'closed' if not data else 'data'}"] += 1
            await close(writer)
        except asyncio.TimeoutError:
            counts[f"{name}:held_to_the_end"] += 1
        except Exception as e:
            counts[f"{name}:error:{type(e).__name__}"] += 1
            await asyncio.sleep(0.05)


async def slow_header(target, deadline):
    text = f"POST {PATH} HTTP/1.1\r\nHost: {target.host}\r\nX-Slow: " + "a" * 1000
    while time.monotonic() < deadline:
        try:
            reader, writer = await target.connect()
            for ch in text:
                writer.write(ch.encode())
                await writer.drain()
                await asyncio.sleep(1)
                if reader.at_eof() or time.monotonic() > deadline:
                    break
            counts["slow_header:closed"] += 1
            await close(writer)
        except Exception as e:
            counts[f"slow_header:closed:{type(e).__name__}"] += 1
            await asyncio.sleep(0.05)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=443)
    parser.add_argument("--plain", action="store_true", help="HTTP, not HTTPS")
    parser.add_argument("--source", help="the local address to connect from (another peer)")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--deep", type=int, default=0)
    parser.add_argument("--big", type=int, default=0)
    parser.add_argument("--big-bytes", type=int, default=8 * 1024 * 1024 - 4096)
    parser.add_argument("--parse", type=int, default=0)
    parser.add_argument("--idle", type=int, default=0)
    parser.add_argument("--idle-tls", type=int, default=0)
    parser.add_argument("--slow-header", type=int, default=0)
    parser.add_argument("--normal", type=int, default=0)
    args = parser.parse_args()
    target = Target(args)
    deadline = time.monotonic() + args.seconds
    deep = review("[" * 100_000 + "]" * 100_000)
    tasks = [loop_posts(target, "deep", [deep], deadline) for _ in range(args.deep)]
    tasks += [hold_big(target, args.big_bytes, deadline) for _ in range(args.big)]
    big_bodies = bodies(args.big_bytes) if args.parse else []
    tasks += [loop_posts(target, "parse", big_bodies, deadline) for _ in range(args.parse)]
    tasks += [hold_idle(target, False, deadline) for _ in range(args.idle)]
    tasks += [hold_idle(target, True, deadline) for _ in range(args.idle_tls)]
    tasks += [slow_header(target, deadline) for _ in range(args.slow_header)]
    normal = review('{"kind":"Pod","metadata":{"name":"x","namespace":"hostile"},'
                    '"spec":{"containers":[{"name":"c","image":"busybox"}]}}')
    tasks += [loop_posts(target, "normal", [normal], deadline, 0.1) for _ in range(args.normal)]
    await asyncio.gather(*tasks)
    print(json.dumps(dict(sorted(counts.items()))), flush=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
