#!/usr/bin/env python3
"""Follows a Rollcall fleet service (rollcall.v1.FleetService) from Python.

    fleet_client.py watch --target HOST:PORT [--token-file F] [--tls-ca F [--tls-cert F --tls-key F]]
                          [--keepalive-seconds S] [--keepalive-timeout-seconds S]
    fleet_client.py query --target HOST:PORT [--seconds N] [same options]
    fleet_client.py get   --target HOST:PORT [same options]

`watch` prints one line per snapshot, `snapshot N of INSTANCE compatible K: URL VERSION, ...`, and
reconnects with backoff when the service goes away: ends the stream, or goes silent (the channel pings
the service while a call is open, and a ping left unanswered fails the call). `query` holds the current snapshot (HoldFleet),
prints its workers, "runs" a query until told to stop (--seconds, a line `end` on standard input, its
end, SIGTERM or SIGINT), then lets go. Progress and trouble go to standard error, snapshots to
standard output, flushed line by line.

Runs on Debian's python3-grpcio and python3-protobuf. The messages are built at run time from
rollcall-v1-fleet.protoset (see README.md): Debian's grpc-tools cannot compile the .proto.
The FleetClient class is the part to reuse in a coordinator of your own.
"""

import argparse
import json
import math
import random
import re
import signal
import sys
import threading
import time
from pathlib import Path

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

SERVICE = "rollcall.v1.FleetService"
HERE = Path(__file__).resolve().parent
#: Reconnecting waits this long first, doubling up to MAX_BACKOFF_S, each wait jittered by +-20 %.
FIRST_BACKOFF_S = 0.1
MAX_BACKOFF_S = 5.0
#: While a call is open the channel pings the service this often, and gives the connection up when a
#: ping goes unanswered this long: a service whose host went silent then fails the call (UNAVAILABLE).
KEEPALIVE_S = 20.0
KEEPALIVE_TIMEOUT_S = 10.0
#: The fleet service lets a client ping this often at most; more often, it ends the connection with
#: GOAWAY too_many_pings (rollcall's FleetGrpcDoor permits 5 s).
MIN_KEEPALIVE_S = 5.0
#: Statuses that another attempt cannot cure: the watch stops and says why.
FATAL = {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT,
         grpc.StatusCode.UNIMPLEMENTED}
_PLAIN = re.compile(r"[^\s,\"]+")


class Protocol:
    """The rollcall.v1 fleet messages, built from a FileDescriptorSet of rollcall/v1/fleet.proto."""

    def __init__(self, protoset: Path):
        files = descriptor_pb2.FileDescriptorSet.FromString(protoset.read_bytes())
        pool = descriptor_pool.DescriptorPool()
        for f in files.file:
            pool.Add(f)
        # protobuf 4.21 has MessageFactory.GetPrototype; newer ones have message_factory.GetMessageClass.
        get = getattr(message_factory, "GetMessageClass", None) or message_factory.MessageFactory(pool).GetPrototype
        msg = lambda name: get(pool.FindMessageTypeByName("rollcall.v1." + name))
        self.GetFleetRequest = msg("GetFleetRequest")
        self.WatchFleetRequest = msg("WatchFleetRequest")
        self.HoldFleetRequest = msg("HoldFleetRequest")
        self.HoldFleetResponse = msg("HoldFleetResponse")
        self.FleetSnapshot = msg("FleetSnapshot")
        self.states = {v.number: v.name.replace("FLEET_WORKER_STATE_", "")
                       for v in pool.FindEnumTypeByName("rollcall.v1.FleetWorkerState").values}
        self.states_by_name = {name: number for number, name in self.states.items()}


def keepalive_problem(keepalive_s, keepalive_timeout_s, names=("keepalive_s", "keepalive_timeout_s")):
    """Why these keepalive settings cannot be used, naming them by `names`; None when they can."""
    if not math.isfinite(keepalive_s):
        return f"{names[0]} {keepalive_s:g}: not a number of seconds"
    if keepalive_s < MIN_KEEPALIVE_S:
        return (f"{names[0]} {keepalive_s:g}: below {MIN_KEEPALIVE_S:g} s, the most often the fleet service lets a"
                f" client ping (more often and it ends the connection with GOAWAY too_many_pings)")
    if not (math.isfinite(keepalive_timeout_s) and keepalive_timeout_s > 0):
        return f"{names[1]} {keepalive_timeout_s:g}: must be a number of seconds above 0"
    return None


class FleetClient:
    """One channel to a fleet service and its three calls. Thread-safe, as a grpc channel is.
    Raises ValueError for keepalive settings the service would refuse (see keepalive_problem).
    requirements: what a query needs (e.g. ["udf:geo_distance"]); every call's answer is the snapshot
    narrowed to them. A malformed one is refused by the service (INVALID_ARGUMENT, naming it)."""

    def __init__(self, target, protocol, token=None, tls_ca=None, tls_cert=None, tls_key=None,
                 keepalive_s=KEEPALIVE_S, keepalive_timeout_s=KEEPALIVE_TIMEOUT_S, requirements=()):
        problem = keepalive_problem(keepalive_s, keepalive_timeout_s)
        if problem is not None:
            raise ValueError(problem)
        self.target = target
        self.protocol = protocol
        self.requirements = list(requirements)
        self.metadata = (("authorization", "Bearer " + token),) if token else ()
        # The channel's own reconnection follows our pace, not gRPC core's default (up to 120 s apart).
        options = [("grpc.initial_reconnect_backoff_ms", int(FIRST_BACKOFF_S * 1000)),
                   ("grpc.min_reconnect_backoff_ms", int(FIRST_BACKOFF_S * 1000)),
                   ("grpc.max_reconnect_backoff_ms", int(MAX_BACKOFF_S * 1000)),
                   # Pings only while a call is open: a watch or a hold is what a silent service strands.
                   ("grpc.keepalive_time_ms", int(keepalive_s * 1000)),
                   ("grpc.keepalive_timeout_ms", int(keepalive_timeout_s * 1000)),
                   ("grpc.keepalive_permit_without_calls", 0),
                   # gRPC core otherwise stops pinging after two pings with no data sent in between (and
                   # spaces such pings minutes apart): an idle watch sends no data at all.
                   ("grpc.http2.max_pings_without_data", 0),
                   ("grpc.http2.min_time_between_pings_ms", int(keepalive_s * 1000))]
        if tls_ca is not None:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=Path(tls_ca).read_bytes(),
                private_key=Path(tls_key).read_bytes() if tls_key else None,
                certificate_chain=Path(tls_cert).read_bytes() if tls_cert else None)
            self.channel = grpc.secure_channel(target, credentials, options=options)
        else:
            self.channel = grpc.insecure_channel(target, options=options)
        p = protocol
        self._get = self.channel.unary_unary(f"/{SERVICE}/GetFleet", p.GetFleetRequest.SerializeToString,
                                             p.FleetSnapshot.FromString)
        self._watch = self.channel.unary_stream(f"/{SERVICE}/WatchFleet", p.WatchFleetRequest.SerializeToString,
                                                p.FleetSnapshot.FromString)
        self._hold = self.channel.unary_stream(f"/{SERVICE}/HoldFleet", p.HoldFleetRequest.SerializeToString,
                                               p.HoldFleetResponse.FromString)

    def get(self, timeout=10.0):
        """The current snapshot (narrowed to self.requirements). Raises grpc.RpcError."""
        return self._get(self.protocol.GetFleetRequest(requirements=self.requirements), timeout=timeout,
                         metadata=self.metadata)

    def watch(self, on_trouble=lambda line: None, stop=None):
        """Yields every snapshot the service sends, forever: when the stream ends or fails it waits
        (backoff with jitter) and calls again; the first message of a new stream is the current
        snapshot, whole, so nothing has to be resynchronised. on_trouble(line) hears why and when.
        Raises grpc.RpcError for a status no retry can cure (FATAL). stop: a threading.Event."""
        backoff = FIRST_BACKOFF_S
        lost_at = None
        while stop is None or not stop.is_set():
            # After a loss, the call waits for the channel to connect again rather than failing at
            # once while the channel is between its own attempts.
            call = self._watch(self.protocol.WatchFleetRequest(requirements=self.requirements), metadata=self.metadata,
                               wait_for_ready=lost_at is not None)
            try:
                for snapshot in call:
                    if lost_at is not None:
                        on_trouble(f"watch: reconnected to {self.target} after {time.monotonic() - lost_at:.3f} s,"
                                   f" service instance {snapshot.service_instance_id}")
                        lost_at = None
                    backoff = FIRST_BACKOFF_S
                    yield snapshot
                why = "the service ended the stream"
            except grpc.RpcError as e:
                if e.code() in FATAL:
                    raise
                why = f"{e.code().name}: {e.details()}"
            if lost_at is None:
                lost_at = time.monotonic()
                on_trouble(f"watch: lost the service at {self.target} ({why}); reconnecting")
            wait = backoff * random.uniform(0.8, 1.2)
            backoff = min(MAX_BACKOFF_S, backoff * 2)
            if stop is not None:
                stop.wait(wait)
            else:
                time.sleep(wait)

    def hold(self, number=0, service_instance_id=""):
        """Opens a hold: returns (snapshot, call). The snapshot stays held until call.cancel() (or the
        process ends, taking its connection with it). Raises grpc.RpcError when refused."""
        call = self._hold(self.protocol.HoldFleetRequest(number=number, service_instance_id=service_instance_id,
                                                         requirements=self.requirements),
                          metadata=self.metadata)
        try:
            answer = next(call)
        except StopIteration:
            raise RuntimeError(f"HoldFleet at {self.target} ended without an answer") from None
        except grpc.RpcError:
            call.cancel()
            raise
        return answer.snapshot, call

    def close(self):
        self.channel.close()


def shown(text):
    """A version (or label) as one token: plain as it is, else JSON-quoted (the service already
    escaped control characters; this keeps a space or comma from splitting the line)."""
    return text if _PLAIN.fullmatch(text) else json.dumps(text)


def snapshot_line(s):
    pairs = ", ".join(f"{w.url} {shown(w.version)}" for w in s.workers)
    return f"snapshot {s.number} of {s.service_instance_id} compatible {len(s.workers)}: {pairs}"


def left_out_lines(s, protocol):
    """With requirements: one line per compatible worker the query would not get, and what it lacks."""
    lacks = protocol.states_by_name["LACKS_REQUIREMENT"]
    return [f"left out {w.url} {shown(w.version)}: {w.reason}" for w in s.excluded if w.state == lacks]


def say(line):
    print(line, file=sys.stderr, flush=True)


def run_watch(client):
    last = None  # (service instance, number)
    for s in client.watch(on_trouble=say):
        if last is not None and last[0] == s.service_instance_id and s.number != last[1] + 1:
            if s.number <= last[1]:
                say(f"watch: snapshot {s.number} after {last[1]}: the numbers went back within one service instance")
            else:
                say(f"watch: skipped {s.number - last[1] - 1} snapshots (latest wins)")
        elif last is not None and last[0] != s.service_instance_id:
            say(f"watch: a new service instance {s.service_instance_id} (was {last[0]}): numbers start again")
        last = (s.service_instance_id, s.number)
        print(snapshot_line(s), flush=True)
        for line in left_out_lines(s, client.protocol):
            print(line, flush=True)


def run_get(client):
    s = client.get()
    print(snapshot_line(s), flush=True)
    for w in s.excluded:
        print(f"excluded {w.url} {shown(w.version)} {client.protocol.states.get(w.state, w.state)}: {w.reason}",
              flush=True)


def run_query(client, seconds):
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    if seconds is None:
        # Standard input decides: a line "end", or its end.
        def read_stdin():
            for line in sys.stdin:
                if line.strip() == "end":
                    break
            done.set()
        threading.Thread(target=read_stdin, daemon=True).start()
    snapshot, call = client.hold(0)
    lost = threading.Event()

    def watch_hold():
        # The service sends nothing after the answer: the iterator returns only when the hold ends.
        try:
            for _ in call:
                pass
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.CANCELLED:
                say(f"query: the hold on snapshot {snapshot.number} ended early ({e.code().name}: {e.details()})")
                lost.set()
                done.set()
            return
        say(f"query: the service ended the hold on snapshot {snapshot.number}")
        lost.set()
        done.set()
    threading.Thread(target=watch_hold, daemon=True).start()

    print(f"held snapshot {snapshot.number} of {snapshot.service_instance_id} with {len(snapshot.workers)} workers",
          flush=True)
    for w in snapshot.workers:
        zone = f" zone={shown(w.zone)}" if w.zone else ""
        print(f"worker {w.url} {shown(w.version)}{zone}", flush=True)
    until = f"{seconds} s" if seconds is not None else "a line 'end' or the end of standard input"
    print(f"query running on snapshot {snapshot.number} (until {until}, SIGTERM or SIGINT)", flush=True)
    done.wait(seconds)
    call.cancel()
    if lost.is_set():
        return 1
    print(f"released snapshot {snapshot.number}", flush=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description="Follows a Rollcall fleet service (rollcall.v1.FleetService).")
    parser.add_argument("command", choices=["watch", "query", "get"])
    parser.add_argument("--target", required=True, help="HOST:PORT of the service")
    parser.add_argument("--token-file", help="a file holding the bearer token (rollcall.serve.token-file)")
    parser.add_argument("--tls-ca", help="PEM certificates to trust: the service speaks TLS")
    parser.add_argument("--tls-cert", help="PEM certificate chain to present: the service asks for one (mutual TLS)")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")
    parser.add_argument("--seconds", type=float, help="query: how long the query runs")
    parser.add_argument("--require", action="append", default=[], metavar="REQUIREMENT",
                        help="only workers that have it, e.g. udf:geo_distance or plan-protocol>=3 (repeatable,"
                             " or comma-separated); the service says what each other compatible worker lacks")
    parser.add_argument("--keepalive-seconds", type=float, default=KEEPALIVE_S,
                        help=f"while a call is open, ping the service this often (default {KEEPALIVE_S:g},"
                             f" at least {MIN_KEEPALIVE_S:g}: the service permits no more)")
    parser.add_argument("--keepalive-timeout-seconds", type=float, default=KEEPALIVE_TIMEOUT_S,
                        help=f"give the connection up when a ping is not answered within this"
                             f" (default {KEEPALIVE_TIMEOUT_S:g})")
    parser.add_argument("--protoset", default=str(HERE / "rollcall-v1-fleet.protoset"),
                        help="the FileDescriptorSet of rollcall/v1/fleet.proto")
    o = parser.parse_args(argv)
    if (o.tls_cert is None) != (o.tls_key is None) or (o.tls_cert is not None and o.tls_ca is None):
        parser.error("--tls-cert and --tls-key go together, and with --tls-ca")
    problem = keepalive_problem(o.keepalive_seconds, o.keepalive_timeout_seconds,
                                ("--keepalive-seconds", "--keepalive-timeout-seconds"))
    if problem is not None:
        parser.error(problem)
    token = Path(o.token_file).read_text().strip() if o.token_file else None
    client = FleetClient(o.target, Protocol(Path(o.protoset)), token=token, tls_ca=o.tls_ca, tls_cert=o.tls_cert,
                         tls_key=o.tls_key, keepalive_s=o.keepalive_seconds,
                         keepalive_timeout_s=o.keepalive_timeout_seconds,
                         requirements=[r.strip() for given in o.require for r in given.split(",") if r.strip()])
    try:
        if o.command == "watch":
            run_watch(client)
            return 0
        if o.command == "get":
            run_get(client)
            return 0
        return run_query(client, o.seconds)
    except grpc.RpcError as e:
        say(f"{o.command}: {o.target} refused: {e.code().name}: {e.details()}")
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
