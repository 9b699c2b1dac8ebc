#!/usr/bin/python3
"""A Rollcall worker in Python: serves rollcall.v1.WorkerService on grpc.aio, prints the address it
bound, logs one line per change, drains on SIGTERM. See README.md.

Runs on Debian's python3-grpcio (1.51) and python3-protobuf (3.21): use /usr/bin/python3.
"""

import argparse
import asyncio
import os
import signal
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import grpc

from capabilities import capabilities_problem, parse_capability
from peer_text import escaped
from rollcall_worker import Protocol, WorkerInfoService

HERE = Path(__file__).resolve().parent
COMMANDS = ("drain, resume, serving, not-serving, label KEY=VALUE, unlabel KEY, capability NAME[=VERSION]"
            " (adds it, or changes its version), drop-capability NAME")


def log(line: str) -> None:
    stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    try:
        print(f"{stamp} rollcall-worker-python: {line}", flush=True)
    except BrokenPipeError:
        # Whoever read our output has gone: the worker goes on (and drains) without its log, and
        # Python's own flush at exit must not fail either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def key_value(text: str):
    key, eq, value = text.partition("=")
    if not key or not eq:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def service_arg(text: str):
    name, _, visibility = text.partition("=")
    visibility = visibility or "public"
    if visibility not in ("public", "internal", "external"):
        raise argparse.ArgumentTypeError(f"visibility {visibility!r} is not public, internal or external")
    return name, "VISIBILITY_" + visibility.upper()


def capability_arg(text: str):
    try:
        return parse_capability(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def bounded(low, high):
    def parse(text):
        try:
            n = int(text)
        except ValueError:
            n = None
        if n is None or not low <= n <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number in {low}..{high}")
        return n
    return parse


def arguments(argv):
    a = argparse.ArgumentParser(prog="worker.py", description=__doc__.split("\n\n")[0],
                                epilog=f"Standard input takes one command a line: {COMMANDS}.")
    a.add_argument("--version", required=True, help="what coordinators see (their policies judge it)")
    a.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    a.add_argument("--port", type=bounded(0, 65535), default=0, help="port to bind (default 0: any free port)")
    a.add_argument("--label", type=key_value, action="append", default=[], metavar="KEY=VALUE")
    a.add_argument("--service", type=service_arg, action="append", default=[], metavar="NAME[=VISIBILITY]",
                   help="a service it serves: public (default), internal or external")
    a.add_argument("--capability", type=capability_arg, action="append", default=[], metavar="NAME[=VERSION]",
                   help="something it can do, e.g. udf:geo_distance or plan-protocol=3 (repeatable)")
    a.add_argument("--instance-id", help="overrides the random id of this process start")
    a.add_argument("--not-serving", action="store_true", help="start NOT_SERVING ('serving' on stdin when ready)")
    a.add_argument("--protoset", type=Path,
                   default=Path(os.environ.get("ROLLCALL_PROTOSET", HERE / "rollcall-v1.protoset")),
                   help="FileDescriptorSet of rollcall/v1/worker.proto (default $ROLLCALL_PROTOSET, else the one here)")
    a.add_argument("--drain-quiet-ms", type=bounded(0, 600000), default=500,
                   help="after SIGTERM, keep serving this long when a watcher without a holder id watched at"
                        " the drain (default 500); holders end the drain by releasing")
    a.add_argument("--shutdown-grace-ms", type=bounded(0, 600000), default=5000,
                   help="the longest the stop waits for holders to let go, then for calls (default 5000)")
    a.add_argument("--max-watches", type=bounded(1, 1000000), default=1024)
    a.add_argument("--max-watches-per-connection", type=bounded(1, 1000000), default=16)
    a.add_argument("--max-request-bytes", type=bounded(64, 64 << 20), default=4096)
    a.add_argument("--max-calls-per-connection", type=bounded(1, 1000000), default=250)
    o = a.parse_args(argv)
    problem = capabilities_problem(o.capability)
    if problem:
        a.error(f"argument --capability: {problem}")
    return o


class Worker:
    def __init__(self, o):
        self.o = o
        self.p = Protocol(o.protoset)
        services = [self.p.ServiceInfo(name=n, visibility=self.p.visibilities[v]) for n, v in o.service]
        self.info = WorkerInfoService(
            self.p, o.version, o.instance_id or str(uuid.uuid4()), dict(o.label), services,
            "NOT_SERVING" if o.not_serving else "SERVING", o.max_watches, o.max_watches_per_connection, log,
            o.capability)
        self.server = grpc.aio.server(options=[
            # Rollcall's requests are a few bytes; this server serves nothing else.
            ("grpc.max_receive_message_length", o.max_request_bytes),
            ("grpc.max_concurrent_streams", o.max_calls_per_connection),
            # Two processes must never share a port: a restart in place binds after its predecessor left.
            ("grpc.so_reuseport", 0),
            # Coordinators ping kept connections (every 10 s at the soonest), with or without calls.
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_recv_ping_interval_without_data_ms", 5000),
        ])
        self.server.add_generic_rpc_handlers((self.info.handler(),))
        self.drained_at = None
        self.plain_at_drain = False  # a watcher without a holder id watched at the drain: W13's quiet period
        self.held_at_drain = 0  # holder streams that held it when it drained, for the stop's log line
        self.stopping = False
        self.stopped = asyncio.Event()

    async def run(self):
        o = self.o
        address = f"[{o.host}]:{o.port}" if ":" in o.host else f"{o.host}:{o.port}"
        try:
            port = self.server.add_insecure_port(address)
        except RuntimeError as e:  # grpcio raises where older ones returned 0
            port, reason = 0, f": {e}"
        else:
            reason = ""
        if not port:
            print(f"rollcall-worker-python: cannot bind {address}{reason}", file=sys.stderr, flush=True)
            return 1
        await self.server.start()
        host = f"[{o.host}]" if ":" in o.host else o.host
        log(f"serving grpc://{host}:{port} instance={self.info.current.unary.instance_id} version={o.version}"
            f" (protoset {o.protoset})")
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, lambda s=sig: self.stop(signal.Signals(s).name))
        threading.Thread(target=self.read_commands, args=(loop,), name="stdin-commands", daemon=True).start()
        await self.stopped.wait()
        return 0

    def read_commands(self, loop):
        # Standard input is optional: at its end (e.g. </dev/null) the worker simply goes on.
        for line in sys.stdin:
            loop.call_soon_threadsafe(self.command, line.strip())

    def command(self, line):
        if not line:
            return
        command, _, arg = line.partition(" ")
        arg = arg.strip()
        try:
            if command == "drain":
                if self.info.state != "DRAINING":
                    self.drain("drain on standard input")
            elif command in ("resume", "serving"):
                self.info.set_state("SERVING", f"{command} on standard input")
            elif command == "not-serving":
                self.info.set_state("NOT_SERVING", "not-serving on standard input")
            elif command == "label":
                key, value = key_value(arg)
                self.info.change(labels={**self.info.labels, key: value}, why=f"label {key} on standard input")
            elif command == "unlabel":
                labels = self.info.labels
                labels.pop(arg, None)
                self.info.change(labels=labels, why=f"unlabel {arg} on standard input")
            elif command == "capability":
                c = parse_capability(arg)
                if c in self.info.capabilities:
                    raise ValueError(f"it has capability '{c}' already: nothing changes")
                kept = [had for had in self.info.capabilities if had.name != c.name]
                self.info.change(capabilities=kept + [c], why=f"capability {c.name} on standard input")
            elif command == "drop-capability":
                kept = [had for had in self.info.capabilities if had.name != arg]
                if len(kept) == len(self.info.capabilities):
                    raise ValueError(f"no capability '{escaped(arg)}' to drop")
                self.info.change(capabilities=kept, why=f"drop-capability {arg} on standard input")
            else:
                raise ValueError(f"unknown command; known: {COMMANDS}")
        except (ValueError, argparse.ArgumentTypeError) as e:
            log(f"{line!r} ignored: {e}")

    def drain(self, why):
        self.plain_at_drain = self.info.plain_watchers() > 0
        self.info.set_state("DRAINING", why)
        self.held_at_drain = self.info.holding()
        self.drained_at = time.monotonic()

    def stop(self, signal_name):
        if self.stopping:
            log(f"{signal_name} again: stopping now")
            os._exit(0)
        self.stopping = True
        asyncio.get_running_loop().create_task(self.drain_and_stop(signal_name))

    async def drain_and_stop(self, signal_name):
        stop_at = time.monotonic()
        if self.info.state != "DRAINING":
            self.drain(f"{signal_name}: draining, then stopping")
        # A coordinator without a holder id may have planned on this worker just before it heard: keep
        # serving a moment. Holders say when they let go (exact drain, W22): no quiet period for them.
        if self.plain_at_drain:
            quiet = self.drained_at + self.o.drain_quiet_ms / 1000 - time.monotonic()
            if quiet > 0:
                await asyncio.sleep(quiet)
        # Then every holder must let go, at most until the grace is up (a silent holder cannot hold the stop).
        grace_left = stop_at + self.o.shutdown_grace_ms / 1000 - time.monotonic()
        if await self.info.until_released(grace_left):
            if self.held_at_drain:
                log(f"every holder let go {(time.monotonic() - self.drained_at) * 1000:.0f} ms after the drain"
                    f" ({self.held_at_drain} held it then)")
        else:
            log(f"after the {self.o.shutdown_grace_ms} ms grace, {self.info.holding()} holders still hold it"
                f" ({'; '.join(self.info.still_holding())}): stopping anyway")
        self.info.end_watches()
        await self.server.stop(self.o.shutdown_grace_ms / 1000)
        log("stopped")
        self.stopped.set()


async def serve(o):
    try:
        worker = Worker(o)  # on the loop: grpc.aio binds its server to the running one
    except (OSError, ValueError) as e:
        print(f"rollcall-worker-python: {e}", file=sys.stderr, flush=True)
        return 2
    return await worker.run()


def main(argv):
    return asyncio.run(serve(arguments(argv)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
