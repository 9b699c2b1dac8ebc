"""rollcall.v1.WorkerService for one worker process, on grpc.aio.

What it says about itself, the coordinators' WatchWorkerInfo streams and their heartbeats.
docs/protocol.md is the rule book; each rule kept here names its section there. The messages are
built at run time from a FileDescriptorSet (rollcall-v1.protoset): Debian's grpc-tools (1.14) cannot
compile the .proto (it predates proto3 `optional`), and Debian ships no newer one.
"""

import asyncio
import itertools
import time
from pathlib import Path

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from capabilities import by_name, capabilities_problem
from peer_text import unclean

SERVICE = "rollcall.v1.WorkerService"
#: Heartbeats granted are clamped to this range, as Rollcall's own workers do ("Heartbeats").
MIN_HEARTBEAT_MS = 1000
MAX_HEARTBEAT_MS = 60000
#: A heartbeat goes this much early, so that a late timer never leaves a stream silent past its grant.
HEARTBEAT_SLACK_S = 0.1
#: Heartbeats go out on the wall clock's ticks, multiples of this (W10): the heartbeats of many workers then
#: reach a coordinator together, one wake-up of its event loop for many. Half the slack, so that waiting for
#: a tick still leaves half of it for a late timer.
HEARTBEAT_TICK_S = HEARTBEAT_SLACK_S / 2
#: What coordinators accept ("Field bounds"); a worker that breaks one is left out by all of them.
BOUNDS = dict(version=256, instance_id=128, labels=128, label_key=317, label_value=1024,
              services=256, handlers=1024, name=256)

#: A holder id ("Exact drain", W18): 1 to 64 printable ASCII characters.
MAX_HOLDER_ID_CHARS = 64

#: Revisions come from one counter per process: they grow with every change, never repeat ("Revisions").
_revisions = itertools.count(1)


class Protocol:
    """The rollcall.v1 message classes and enum numbers, built from a FileDescriptorSet."""

    def __init__(self, protoset: Path):
        files = descriptor_pb2.FileDescriptorSet.FromString(protoset.read_bytes())
        pool = descriptor_pool.DescriptorPool()
        for f in files.file:
            pool.Add(f)
        # protobuf 4.21 has MessageFactory.GetPrototype; newer ones have message_factory.GetMessageClass.
        get = getattr(message_factory, "GetMessageClass", None) or message_factory.MessageFactory(pool).GetPrototype
        self.Request = get(pool.FindMessageTypeByName("rollcall.v1.WorkerInfoRequest"))
        self.Response = get(pool.FindMessageTypeByName("rollcall.v1.WorkerInfoResponse"))
        self.ServiceInfo = get(pool.FindMessageTypeByName("rollcall.v1.ServiceInfo"))
        self.states = {v.name: v.number for v in pool.FindEnumTypeByName("rollcall.v1.ServingState").values}
        self.visibilities = {v.name: v.number for v in pool.FindEnumTypeByName("rollcall.v1.Visibility").values}
        self.methods = {m.name for m in pool.FindServiceByName(SERVICE).methods}
        # Exact drain (W18-W22): in a protoset from before it there is no ReleaseWorker, and the worker drains as W13 says.
        self.exact_drain = "ReleaseWorker" in self.methods
        if self.exact_drain:
            self.ReleaseRequest = get(pool.FindMessageTypeByName("rollcall.v1.ReleaseWorkerRequest"))
            self.ReleaseResponse = get(pool.FindMessageTypeByName("rollcall.v1.ReleaseWorkerResponse"))
        # Capabilities (field 9): a protoset from before them cannot send any.
        self.Capability = (get(pool.FindMessageTypeByName("rollcall.v1.Capability"))
                           if "capabilities" in self.Response.DESCRIPTOR.fields_by_name else None)
        self.protoset = protoset
        missing = {"WorkerInfo", "WatchWorkerInfo"} - self.methods
        if missing:
            raise ValueError(f"{protoset} has no {', '.join(sorted(missing))} in {SERVICE}")


def holder_tag(holder_id):
    """What a log line or an error may say of a holder id: its first 6 characters (half of a shorter
    one) and an ellipsis. A holder id is the coordinator's secret for this worker (who knows it can
    release it), so none is ever written whole."""
    return holder_id[:min(6, len(holder_id) // 2)] + "…"


def holder_id_problem(field, holder_id):
    """Why holder_id is not a holder id, naming the bound (the id escaped), or None."""
    if 0 < len(holder_id) <= MAX_HOLDER_ID_CHARS and all(0x21 <= ord(c) <= 0x7E for c in holder_id):
        return None
    shown = ascii(holder_id[:MAX_HOLDER_ID_CHARS])  # escapes controls: it cannot forge a log line
    return (f"{field} {shown} ({len(holder_id)} characters) is not 1 to {MAX_HOLDER_ID_CHARS} printable ASCII"
            " characters (U+0021 to U+007E)")


def granted_heartbeat(asked_ms: int) -> int:
    if asked_ms <= 0:
        return 0
    return min(MAX_HEARTBEAT_MS, max(MIN_HEARTBEAT_MS, asked_ms))


def _utf16_len(s: str) -> int:
    """Coordinators count UTF-16 code units, as Java does: a character outside the BMP counts two."""
    return len(s.encode("utf-16-le")) // 2


def bounds_problem(version, instance_id, labels, services, capabilities=()):
    """Why an answer would be refused by a coordinator, or None."""
    def text(what, s, limit):
        if _utf16_len(s) > limit:
            return f"{what} is {_utf16_len(s)} characters long (at most {limit})"
        i = unclean(s)
        return None if i < 0 else f"{what} contains a control character at index {i}"

    def name(what, s):
        if not s:
            return f"{what} is empty"
        if any(ch.isspace() for ch in s):
            return f"{what} '{s}' contains white space"
        return text(what, s, BOUNDS["name"])

    bad = text("version", version, BOUNDS["version"]) or text("instance id", instance_id, BOUNDS["instance_id"])
    if bad:
        return bad
    if len(labels) > BOUNDS["labels"]:
        return f"{len(labels)} labels (at most {BOUNDS['labels']})"
    for key, value in labels.items():
        bad = ("a label has an empty key" if not key else
               text(f"label key '{key}'", key, BOUNDS["label_key"]) or
               text(f"label '{key}'", value, BOUNDS["label_value"]))
        if bad:
            return bad
    if len(services) > BOUNDS["services"]:
        return f"{len(services)} services (at most {BOUNDS['services']})"
    for s in services:
        bad = name("service name", s.name)
        if not bad and len(s.handlers) > BOUNDS["handlers"]:
            bad = f"service '{s.name}' has {len(s.handlers)} handlers (at most {BOUNDS['handlers']})"
        for h in s.handlers:
            bad = bad or name(f"service '{s.name}': handler name", h.name)
        if bad:
            return bad
    return capabilities_problem(capabilities)


class Answer:
    """One distinct answer, stamped with its revision: the unary form and, per heartbeat granted, a stream's."""

    def __init__(self, response):
        self.unary = response
        self.revision = response.revision
        self._streamed = {}

    def for_stream(self, heartbeat_ms: int):
        """What a stream granted heartbeat_ms sends: every message says what was granted."""
        if heartbeat_ms == 0:
            return self.unary
        form = self._streamed.get(heartbeat_ms)
        if form is None:
            form = type(self.unary)()
            form.CopyFrom(self.unary)
            form.heartbeat_millis = heartbeat_ms
            self._streamed[heartbeat_ms] = form
        return form


class _Watch:
    """One coordinator's stream: woken on every change; sends only the newest answer, never an older one."""

    def __init__(self, heartbeat_ms: int):
        self.heartbeat_ms = heartbeat_ms
        self.woken = asyncio.Event()
        self.ending = False


class WorkerInfoService:
    """The current answer, its changes, and the streams that watch it. Runs on one asyncio loop.

    Exact drain (W18-W22): a stream opened with a holder_id holds the worker while it drains, until
    its coordinator sends ReleaseWorker with that id or the stream ends; a release holds for every
    stream of the id until the drain ends. While DRAINING every answer says how many streams still
    hold it (holders), and a change of that count is a new revision, pushed. A release whose id holds
    nothing here (no stream of it open, not released in this drain) is refused with NOT_FOUND and
    leaves no trace: only who watches as a holder can release as one. Holder ids are logged by their
    tag only (holder_tag).
    """

    def __init__(self, protocol: Protocol, version, instance_id, labels, services, state,
                 max_watches, max_watches_per_connection, log, capabilities=()):
        self._p = protocol
        self._version = version
        self._instance_id = instance_id
        self._max_watches = max_watches
        self._max_per_connection = max_watches_per_connection
        self._log = log
        self._watches = set()
        self._per_connection = {}
        self._holder_streams = {}  # _Watch -> (holder id, peer)
        self._released = set()  # holder ids released in this drain, at most max_watches
        self._holders_changed = asyncio.Event()
        self._labels, self._services, self._capabilities, self._state = {}, [], [], "SERVING"
        self.current = None
        self.change(labels=labels, services=services, capabilities=capabilities, state=state, why="started")

    @property
    def state(self):
        return self._state

    @property
    def labels(self):
        return dict(self._labels)

    @property
    def capabilities(self):
        """What it says it can do: capabilities.Capability tuples, in name order."""
        return list(self._capabilities)

    def watchers(self) -> int:
        return len(self._watches)

    def plain_watchers(self) -> int:
        """Streams without a holder id: coordinators that keep W13's quiet period."""
        return len(self._watches) - len(self._holder_streams)

    def holding(self) -> int:
        """Holder streams that hold the worker now: open, their id not released in this drain."""
        return sum(1 for holder, _ in self._holder_streams.values() if holder not in self._released)

    def still_holding(self):
        return [f"'{holder_tag(holder)}' from {peer}" for holder, peer in self._holder_streams.values()
                if holder not in self._released]

    async def until_released(self, timeout_s: float) -> bool:
        """Waits until no holder stream holds the worker, at most timeout_s; returns whether none does."""
        deadline = time.monotonic() + timeout_s
        while self.holding() > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._holders_changed.clear()
            try:
                await asyncio.wait_for(self._holders_changed.wait(), left)
            except asyncio.TimeoutError:
                pass
        return True

    def _count_changed(self, why):
        """The count of holders changed: while draining that is a new answer (W21)."""
        if self._state == "DRAINING" and self.current.unary.holders != self.holding():
            self.change(why=why)
        self._holders_changed.set()

    def change(self, labels=None, services=None, state=None, capabilities=None, why=""):
        """A new answer with a higher revision, sent to every stream; raises, changing nothing, past a bound."""
        labels = dict(self._labels if labels is None else labels)
        services = list(self._services if services is None else services)
        capabilities = by_name(self._capabilities if capabilities is None else capabilities)
        state = self._state if state is None else state
        problem = bounds_problem(self._version, self._instance_id, labels, services, capabilities)
        if problem:
            raise ValueError(f"refused: {problem}; coordinators would leave this worker out")
        if capabilities and self._p.Capability is None:
            raise ValueError(f"refused: {self._p.protoset} predates capabilities (WorkerInfoResponse.capabilities):"
                             " run regenerate-protoset")
        if state != self._state and "DRAINING" in (state, self._state):
            self._released.clear()  # a drain starts with every holder holding; leaving it forgets the releases
        holders = self.holding() if state == "DRAINING" else 0
        extra = {"holders": holders} if self._p.exact_drain else {}
        if capabilities:
            extra["capabilities"] = [self._p.Capability(name=c.name, version=c.version) for c in capabilities]
        response = self._p.Response(version=self._version, instance_id=self._instance_id, labels=labels,
                                    services=services, state=self._p.states[state], revision=next(_revisions), **extra)
        self._labels, self._services, self._capabilities, self._state = labels, services, capabilities, state
        self.current = Answer(response)
        listed = f", capabilities [{', '.join(map(str, capabilities))}]" if capabilities else ""
        self._log(f"revision {response.revision}: state {state}, labels {labels}, {len(services)} services{listed}"
                  f"{f', {holders} holders' if state == 'DRAINING' else ''} ({why})")
        self._holders_changed.set()
        for w in self._watches:
            w.woken.set()

    def set_state(self, state, why):
        if state != self._state:
            self.change(state=state, why=why)

    def end_watches(self):
        """Ends every stream after the newest answer, e.g. before the server stops."""
        for w in self._watches:
            w.ending = True
            w.woken.set()

    def handler(self) -> grpc.GenericRpcHandler:
        p = self._p
        methods = {}
        if p.exact_drain:
            methods["ReleaseWorker"] = grpc.unary_unary_rpc_method_handler(
                self._release_worker, request_deserializer=p.ReleaseRequest.FromString,
                response_serializer=p.ReleaseResponse.SerializeToString)
        return grpc.method_handlers_generic_handler(SERVICE, {
            **methods,
            "WorkerInfo": grpc.unary_unary_rpc_method_handler(
                self._worker_info, request_deserializer=p.Request.FromString,
                response_serializer=p.Response.SerializeToString),
            "WatchWorkerInfo": grpc.unary_stream_rpc_method_handler(
                self._watch_worker_info, request_deserializer=p.Request.FromString,
                response_serializer=p.Response.SerializeToString),
        })

    async def _worker_info(self, request, context):
        return self.current.unary

    def _has_holder_stream(self, holder_id) -> bool:
        return any(holder == holder_id for holder, _ in self._holder_streams.values())

    async def _release_worker(self, request, context):
        """ReleaseWorker (W20): only for this process, only from an id that holds something here (an
        open stream, or released in this drain); outside a drain it changes nothing."""
        bad = holder_id_problem("holder_id", request.holder_id)
        if bad:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bad)
        if request.instance_id != self._instance_id:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"instance_id {ascii(request.instance_id[:128])} is not this worker process's"
                                f" ('{self._instance_id}'): released nothing")
        holder_id = request.holder_id
        if holder_id not in self._released and not self._has_holder_stream(holder_id):
            await context.abort(grpc.StatusCode.NOT_FOUND,
                                f"holder_id '{holder_tag(holder_id)}' holds nothing on this worker (no"
                                " WatchWorkerInfo stream of it is open, and this drain did not release it):"
                                " released nothing")
        draining = self._state == "DRAINING"
        if draining and holder_id not in self._released:
            if len(self._released) >= self._max_watches:
                # Ids whose streams all ended hold nothing now: forgetting them costs a coordinator that
                # watches anew one more release, never the worker's stop (open streams are fewer than the bound).
                self._released = {r for r in self._released if self._has_holder_stream(r)}
            self._released.add(holder_id)
            self._log(f"released by '{holder_tag(holder_id)}' ({context.peer()}): {self.holding()} holders left")
            self._count_changed(f"released by '{holder_tag(holder_id)}'")
        return self._p.ReleaseResponse(holders=self.holding() if draining else 0)

    def _refusal(self, peer):
        if len(self._watches) >= self._max_watches:
            return ("this worker already serves as many WatchWorkerInfo streams as it may"
                    f" (--max-watches={self._max_watches})")
        if self._per_connection.get(peer, 0) >= self._max_per_connection:
            return ("this connection already holds as many WatchWorkerInfo streams as one connection may"
                    f" (--max-watches-per-connection={self._max_per_connection})")
        return None

    async def _watch_worker_info(self, request, context):
        peer = context.peer()
        holder = request.holder_id if self._p.exact_drain else ""
        bad = holder_id_problem("holder_id", holder) if holder else None
        if bad:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bad)
        refusal = self._refusal(peer)
        if refusal:
            self._log(f"refused a WatchWorkerInfo stream from {peer}: {refusal}")
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal)
        w = _Watch(granted_heartbeat(request.heartbeat_millis))
        self._watches.add(w)
        self._per_connection[peer] = self._per_connection.get(peer, 0) + 1
        if holder:
            self._holder_streams[w] = (holder, peer)
        self._log(f"watch from {peer} opened{f' by holder {holder_tag(holder)!r}' if holder else ''}, heartbeat {w.heartbeat_ms}"
                  f" ms granted (asked {request.heartbeat_millis}), {len(self._watches)} open")
        if holder and self._state == "DRAINING" and holder not in self._released:
            self._count_changed(f"holder '{holder_tag(holder)}' watches")  # its first answer already counts it
        try:
            await self._serve(w, context)
        finally:
            self._watches.discard(w)
            if self._holder_streams.pop(w, None) is not None:
                self._count_changed(f"the holder stream of '{holder_tag(holder)}' ended")
            n = self._per_connection.pop(peer) - 1
            if n > 0:
                self._per_connection[peer] = n
            self._log(f"watch from {peer} ended ({len(self._watches)} open)")

    async def _serve(self, w: _Watch, context):
        # While a write waits (a coordinator that does not read), changes only replace self.current:
        # the next write sends the newest, so latest wins and nothing older follows anything newer.
        sent = None
        last_send = 0.0
        while True:
            w.woken.clear()
            current = self.current
            if sent is None or current.revision > sent.revision:
                sent = current
            elif w.ending:
                return
            elif w.heartbeat_ms and time.monotonic() - last_send >= w.heartbeat_ms / 1000 - HEARTBEAT_SLACK_S:
                pass  # a heartbeat: the same answer, the same revision
            else:
                timeout = None
                if w.heartbeat_ms:
                    timeout = max(0.0, last_send + w.heartbeat_ms / 1000 - HEARTBEAT_SLACK_S - time.monotonic())
                    timeout += -(time.time() + timeout) % HEARTBEAT_TICK_S  # on the next tick of the wall clock
                try:
                    await asyncio.wait_for(w.woken.wait(), timeout)
                except asyncio.TimeoutError:
                    pass
                continue
            await context.write(sent.for_stream(w.heartbeat_ms))
            last_send = time.monotonic()
