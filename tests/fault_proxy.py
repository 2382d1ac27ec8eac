#!/usr/bin/env python3
"""A fault and latency proxy for HTTP on loopback (asyncio), for the remote
dataset tests: it forwards each request to the upstream server and injects,
as asked: first-byte latency (mean +- jitter), a bandwidth cap per
connection, connection resets mid-body, slow trickles (stalls), and 503
SlowDown bursts, or 503 for every request whose request line holds a text
(--fail-matching, e.g. "partNumber=2": an upload that fails for good
midway). It counts requests, bytes and the faults it injected, and
writes them as JSON to --stats after every request.

Answers are streamed from the upstream as they arrive (capped); an answer
to be cut (reset, trickle) is read whole first.

Usage: fault_proxy.py --upstream 127.0.0.1:8333 --port-file F --stats S
         [--latency-ms 30 --jitter-ms 10] [--bandwidth BYTES_PER_S]
         [--total-bandwidth BYTES_PER_S]
         [--reset-every N] [--trickle-every N] [--slowdown-every N]
         [--slowdown-burst K] [--always-503] [--fail-matching TEXT]
Binds 127.0.0.1 only, on a free port written to --port-file.
"""
import argparse
import asyncio
import json
import os
import random
import socket
import struct
import time

STATS = {"requests": 0, "bytes_out": 0, "resets": 0, "trickles": 0, "slowdowns": 0}
SLOWDOWN = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\n"
            b"Content-Length: %d\r\nConnection: keep-alive\r\n\r\n%s")
SLOWDOWN_BODY = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"


def save_stats(path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(STATS, f)
    os.replace(tmp, path)


async def read_request(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b""
    return head, body


def with_close(head):
    lines = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
    # lines ends with two empty strings (the blank line)
    return b"\r\n".join(lines[:-2] + [b"Connection: close", b"", b""])


async def fetch_upstream(upstream, head, body):
    host, port = upstream.rsplit(":", 1)
    r, w = await asyncio.open_connection(host, int(port))
    w.write(with_close(head) + body)
    await w.drain()
    data = await r.read()
    w.close()
    return data


def abort(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None:  # RST, not FIN
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class Pacer:
    """A bandwidth cap: take(n) returns when n more bytes fit in `rate`
    bytes/s (bursts of at most 20 ms). One per connection, one shared by all
    (--total-bandwidth)."""

    def __init__(self, rate):
        self.rate = rate
        self.next = time.monotonic()

    async def take(self, n):
        if not self.rate:
            return
        now = time.monotonic()
        self.next = max(self.next, now - 0.02) + n / self.rate
        if self.next > now:
            await asyncio.sleep(self.next - now)


TOTAL = Pacer(0)


def chunk_size(args):
    rates = [r for r in (args.bandwidth, args.total_bandwidth) if r]
    return max(4096, min([256 * 1024] + [r // 50 for r in rates]))


async def send_capped(writer, data, args):
    pacer = Pacer(args.bandwidth)
    chunk = chunk_size(args)
    for i in range(0, len(data), chunk):
        part = data[i:i + chunk]
        await pacer.take(len(part))
        await TOTAL.take(len(part))
        writer.write(part)
        await writer.drain()


async def stream_upstream(args, head, body, writer):
    """Forwards one request and streams its answer back under the caps;
    returns (body bytes sent, whether the client connection may be kept)."""
    host, port = args.upstream.rsplit(":", 1)
    r, w = await asyncio.open_connection(host, int(port))
    try:
        w.write(with_close(head) + body)
        await w.drain()
        resp_head = await r.readuntil(b"\r\n\r\n")
        keep = b"content-length:" in resp_head.lower() or b"chunked" in resp_head.lower()
        writer.write(resp_head)
        pacer, chunk, sent = Pacer(args.bandwidth), chunk_size(args), 0
        while True:
            part = await r.read(chunk)
            if not part:
                return sent, keep
            await pacer.take(len(part))
            await TOTAL.take(len(part))
            writer.write(part)
            await writer.drain()
            sent += len(part)
    finally:
        w.close()


async def handle(reader, writer, args):
    try:
        while True:
            try:
                head, body = await read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            STATS["requests"] += 1
            n = STATS["requests"]
            if args.latency_ms:
                delay = random.uniform(args.latency_ms - args.jitter_ms,
                                       args.latency_ms + args.jitter_ms)
                await asyncio.sleep(max(0.0, delay) / 1000)
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            slowdown = args.always_503 or (
                args.fail_matching and args.fail_matching in request_line) or (
                args.slowdown_every and n % args.slowdown_every < args.slowdown_burst)
            if slowdown:
                STATS["slowdowns"] += 1
                save_stats(args.stats)
                writer.write(SLOWDOWN % (len(SLOWDOWN_BODY), SLOWDOWN_BODY))
                await writer.drain()
                continue
            cut = (args.reset_every and n % args.reset_every == 0) or (
                args.trickle_every and n % args.trickle_every == 0)
            if not cut:
                sent, keep = await stream_upstream(args, head, body, writer)
                STATS["bytes_out"] += sent
                save_stats(args.stats)
                if not keep:
                    writer.close()
                    return
                continue
            data = await fetch_upstream(args.upstream, head, body)
            split = data.find(b"\r\n\r\n") + 4
            resp_head, resp_body = data[:split], data[split:]
            if args.reset_every and n % args.reset_every == 0 and len(resp_body) > 1:
                STATS["resets"] += 1
                save_stats(args.stats)
                writer.write(resp_head + resp_body[:len(resp_body) // 2])
                await writer.drain()
                abort(writer)
                return
            if args.trickle_every and n % args.trickle_every == 0 and len(resp_body) > 1:
                STATS["trickles"] += 1
                save_stats(args.stats)
                writer.write(resp_head + resp_body[:1])
                await writer.drain()
                await asyncio.sleep(args.trickle_seconds)  # the client gives up first
                abort(writer)
                return
            STATS["bytes_out"] += len(resp_body)
            save_stats(args.stats)
            keep = b"content-length:" in resp_head.lower() or b"chunked" in resp_head.lower()
            await send_capped(writer, resp_head + resp_body, args)
            if not keep:
                writer.close()
                return
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
        return
    finally:
        if not writer.is_closing():
            writer.close()


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--stats", required=True)
    p.add_argument("--latency-ms", type=float, default=0)
    p.add_argument("--jitter-ms", type=float, default=0)
    p.add_argument("--bandwidth", type=int, default=0, help="bytes/s per connection")
    p.add_argument("--total-bandwidth", type=int, default=0, help="bytes/s, all connections")
    p.add_argument("--reset-every", type=int, default=0)
    p.add_argument("--trickle-every", type=int, default=0)
    p.add_argument("--trickle-seconds", type=float, default=30)
    p.add_argument("--slowdown-every", type=int, default=0)
    p.add_argument("--slowdown-burst", type=int, default=1)
    p.add_argument("--always-503", action="store_true")
    p.add_argument("--fail-matching", default="")
    args = p.parse_args()
    TOTAL.rate = args.total_bandwidth
    save_stats(args.stats)
    server = await asyncio.start_server(lambda r, w: handle(r, w, args), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(args.port_file + ".tmp", args.port_file)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
