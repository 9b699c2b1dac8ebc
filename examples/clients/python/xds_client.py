#!/usr/bin/env python3
"""A gRPC channel on xds:///fleet whose endpoints come from Rollcall's xDS control plane (rollcall serve).

    GRPC_XDS_BOOTSTRAP=bootstrap.json xds_client.py [--target xds:///fleet] [--interval-ms N] [--count N]
                                                    [--deadline-ms N] [--protoset F]

Calls rollcall.v1.WorkerService/WorkerInfo in a loop and prints one JSON line per call on standard
output, flushed: {"call": N, "version": "1.4.0", "instance_id": "..."} when a worker answered,
{"call": N, "error": "UNAVAILABLE", "details": "..."} when the call failed. Nothing of Rollcall runs
here: gRPC core does the xDS part, reading the bootstrap file GRPC_XDS_BOOTSTRAP names (docs/xds.md).

Runs on Debian's python3-grpcio (1.51) and python3-protobuf. The messages are built at run time from
the Python worker's rollcall-v1.protoset, as fleet_client.py builds its own (see README.md).
"""

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

METHOD = "/rollcall.v1.WorkerService/WorkerInfo"
HERE = Path(__file__).resolve().parent


def worker_info_messages(protoset: Path):
    """(WorkerInfoRequest, WorkerInfoResponse) built from a FileDescriptorSet of rollcall/v1/worker.proto."""
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(protoset.read_bytes()).file:
        pool.Add(f)
    # protobuf 4.21 has MessageFactory.GetPrototype; newer ones have message_factory.GetMessageClass.
    get = getattr(message_factory, "GetMessageClass", None) or message_factory.MessageFactory(pool).GetPrototype
    return (get(pool.FindMessageTypeByName("rollcall.v1.WorkerInfoRequest")),
            get(pool.FindMessageTypeByName("rollcall.v1.WorkerInfoResponse")))


def whole(text, name, least):
    try:
        n = int(text)
    except ValueError:
        n = None
    if n is None or n < least:
        raise argparse.ArgumentTypeError(f"{name} {json.dumps(text[:40])}: not a whole number of at least {least}")
    return n


def main(argv=None):
    parser = argparse.ArgumentParser(description="Calls WorkerInfo on the workers Rollcall's xDS control plane names.")
    parser.add_argument("--target", default="xds:///fleet", help="the channel's target (rollcall.serve.xds.fleet)")
    parser.add_argument("--interval-ms", type=lambda t: whole(t, "--interval-ms", 0), default=500,
                        help="wait this long between the end of a call and the next (default 500)")
    parser.add_argument("--count", type=lambda t: whole(t, "--count", 0), default=0,
                        help="stop after this many calls (default 0: until SIGTERM or SIGINT)")
    parser.add_argument("--deadline-ms", type=lambda t: whole(t, "--deadline-ms", 1), default=5000,
                        help="each call's deadline; a call waits for a worker that long (default 5000)")
    parser.add_argument("--protoset", type=Path,
                        default=Path(os.environ.get("ROLLCALL_PROTOSET",
                                                    HERE.parent.parent / "workers/python/rollcall-v1.protoset")),
                        help="the FileDescriptorSet of rollcall/v1/worker.proto")
    o = parser.parse_args(argv)
    # gRPC core reads the bootstrap when the channel resolves, and a missing one would only show as
    # failing calls: say it at once.
    if o.target.startswith("xds:") and not (os.environ.get("GRPC_XDS_BOOTSTRAP")
                                             or os.environ.get("GRPC_XDS_BOOTSTRAP_CONFIG")):
        parser.error("GRPC_XDS_BOOTSTRAP is not set: point it at a bootstrap file naming rollcall serve (docs/xds.md)")
    request, response = worker_info_messages(o.protoset)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with grpc.insecure_channel(o.target) as channel:
        worker_info = channel.unary_unary(METHOD, request.SerializeToString, response.FromString)
        n = 0
        while not stop.is_set() and (o.count == 0 or n < o.count):
            n += 1
            try:
                # wait_for_ready: while no worker is ready (at start, or when the fleet is empty) the
                # call waits for one, up to its deadline, rather than failing at once.
                answer = worker_info(request(), timeout=o.deadline_ms / 1000, wait_for_ready=True)
                line = {"call": n, "version": answer.version, "instance_id": answer.instance_id}
            except grpc.RpcError as e:
                line = {"call": n, "error": e.code().name, "details": e.details()}
            print(json.dumps(line), flush=True)
            stop.wait(o.interval_ms / 1000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
