'use strict';
// rollcall.v1.WorkerService for one worker process: what it says about itself, the coordinators'
// WatchWorkerInfo streams and their heartbeats. docs/protocol.md is the rule book; each rule kept
// here names its section there.

const grpc = require('@grpc/grpc-js');
const { unclean } = require('./peer-text');
const { byName, capabilitiesProblem, capabilityText } = require('./capabilities');

/** Heartbeats granted are clamped to this range, as Rollcall's own workers do ("Heartbeats"). */
const MIN_HEARTBEAT_MS = 1000;
const MAX_HEARTBEAT_MS = 60000;
/** A heartbeat goes this much early, so that a late timer never leaves a stream silent past its grant. */
const HEARTBEAT_SLACK_MS = 100;
/**
 * Heartbeats go out on the wall clock's ticks, multiples of this (W10): the heartbeats of many
 * workers then reach a coordinator together, one wake-up of its event loop for many. Half the slack,
 * so that waiting for a tick still leaves half of it for a late timer.
 */
const HEARTBEAT_TICK_MS = HEARTBEAT_SLACK_MS / 2;

/** What coordinators accept ("Field bounds"); a worker that breaks one is left out by all of them. */
const BOUNDS = {
  versionChars: 256, instanceIdChars: 128, labels: 128, labelKeyChars: 317, labelValueChars: 1024,
  services: 256, handlers: 1024, nameChars: 256,
};

/** A holder id ("Exact drain", W18): 1 to 64 printable ASCII characters. */
const MAX_HOLDER_ID_CHARS = 64;

/**
 * What a log line or an error may say of a holder id: its first 6 characters (half of a shorter one)
 * and an ellipsis. A holder id is the coordinator's secret for this worker (who knows it can release
 * it), so none is ever written whole.
 */
function holderTag(id) {
  return `${id.slice(0, Math.min(6, Math.floor(id.length / 2)))}…`;
}

/** Why {@code id} is not a holder id, naming the bound (the id escaped), or null. */
function holderIdProblem(field, id) {
  if (id.length > 0 && id.length <= MAX_HOLDER_ID_CHARS && /^[\x21-\x7e]+$/.test(id)) {
    return null;
  }
  const shown = JSON.stringify(id.slice(0, MAX_HOLDER_ID_CHARS)); // escapes controls: it cannot forge a log line
  return `${field} ${shown} (${id.length} characters) is not 1 to ${MAX_HOLDER_ID_CHARS} printable ASCII characters`
      + ' (U+0021 to U+007E)';
}

/** Revisions come from one counter per process: they grow with every change and never repeat ("Revisions"). */
let lastRevision = 0;

function grantedHeartbeat(askedMs) {
  if (!askedMs) {
    return 0;
  }
  return Math.min(MAX_HEARTBEAT_MS, Math.max(MIN_HEARTBEAT_MS, askedMs));
}

/** Why {@code answer} would be refused by a coordinator, or null. JavaScript lengths are UTF-16 units, as the bounds are. */
function boundsProblem(answer) {
  const text = (what, s, max) => {
    if (s.length > max) {
      return `${what} is ${s.length} characters long (at most ${max})`;
    }
    const i = unclean(s);
    return i < 0 ? null : `${what} contains a control character at index ${i}`;
  };
  const name = (what, s) => {
    if (s.length === 0) {
      return `${what} is empty`;
    }
    if (/[\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u.test(s)) {
      return `${what} '${s}' contains white space`;
    }
    return text(what, s, BOUNDS.nameChars);
  };
  let bad = text('version', answer.version, BOUNDS.versionChars)
      || text('instance id', answer.instance_id, BOUNDS.instanceIdChars);
  if (bad) {
    return bad;
  }
  const labels = Object.entries(answer.labels);
  if (labels.length > BOUNDS.labels) {
    return `${labels.length} labels (at most ${BOUNDS.labels})`;
  }
  for (const [key, value] of labels) {
    bad = key.length === 0 ? 'a label has an empty key'
        : text(`label key '${key}'`, key, BOUNDS.labelKeyChars) || text(`label '${key}'`, value, BOUNDS.labelValueChars);
    if (bad) {
      return bad;
    }
  }
  if (answer.services.length > BOUNDS.services) {
    return `${answer.services.length} services (at most ${BOUNDS.services})`;
  }
  for (const s of answer.services) {
    bad = name('service name', s.name);
    if (!bad && s.handlers.length > BOUNDS.handlers) {
      bad = `service '${s.name}' has ${s.handlers.length} handlers (at most ${BOUNDS.handlers})`;
    }
    for (const h of s.handlers) {
      bad = bad || name(`service '${s.name}': handler name`, h.name);
    }
    if (bad) {
      return bad;
    }
  }
  return capabilitiesProblem(answer.capabilities);
}

/** The capabilities as the change's log line lists them; nothing when there are none. */
function capabilitiesLogged(capabilities) {
  return capabilities.length === 0 ? '' : `, capabilities [${capabilities.map(capabilityText).join(', ')}]`;
}

/**
 * One coordinator's stream. At most one message is in flight: a change that comes meanwhile waits
 * as "the newest", so a coordinator that reads slowly gets the latest answer when it is ready and
 * never an older one after a newer one; a heartbeat due meanwhile is sent after it.
 */
class Watch {
  constructor(call, heartbeatMs, service) {
    this.call = call;
    this.heartbeatMs = heartbeatMs;
    this.service = service;
    this.sent = null;         // the last answer written (unary form)
    this.inFlight = false;    // a write not yet taken by the transport
    this.heartbeatOwed = false;
    this.timer = null;
    this.done = false;
  }

  /** The service's answer changed (or the stream just opened): send the newest. */
  offer() {
    if (this.done || this.inFlight) {
      return; // sent when the write in flight completes
    }
    const current = this.service.current;
    if (this.sent === null || current.revision > this.sent.revision) {
      this.write(current);
    }
  }

  write(answer) {
    this.inFlight = true;
    this.heartbeatOwed = false;
    this.sent = answer;
    this.armHeartbeat();
    this.call.write(this.form(answer), () => {
      this.inFlight = false;
      if (this.done) {
        return;
      }
      if (this.service.current.revision > this.sent.revision) {
        this.write(this.service.current);
      } else if (this.heartbeatOwed) {
        this.write(this.sent);
      }
    });
  }

  /** What this stream sends for {@code answer}: it says the heartbeat granted in every message. */
  form(answer) {
    return this.heartbeatMs ? { ...answer, heartbeat_millis: this.heartbeatMs } : answer;
  }

  /** The next heartbeat, counted from now (a write is the stream's sign of life), on the next tick after it. */
  armHeartbeat() {
    if (!this.heartbeatMs) {
      return;
    }
    clearTimeout(this.timer);
    const due = Date.now() + this.heartbeatMs - HEARTBEAT_SLACK_MS;
    const onTick = due + (HEARTBEAT_TICK_MS - (due % HEARTBEAT_TICK_MS)) % HEARTBEAT_TICK_MS;
    this.timer = setTimeout(() => {
      if (this.done) {
        return;
      }
      if (this.inFlight) {
        this.heartbeatOwed = true; // the coordinator is not reading: sent once it does
        this.armHeartbeat();
      } else {
        this.write(this.sent); // the same answer, the same revision
      }
    }, onTick - Date.now());
  }

  /**
   * Ends the stream with OK after the newest answer: written even while a write is in flight (one
   * small message more, queued behind it), so that no stream ends on an older answer than the last.
   */
  end() {
    if (this.done) {
      return;
    }
    this.close();
    const current = this.service.current;
    if (this.sent === null || current.revision > this.sent.revision) {
      this.sent = current;
      this.call.write(this.form(current));
    }
    this.call.end();
  }

  close() {
    this.done = true;
    clearTimeout(this.timer);
  }
}

/**
 * The service: the current answer, its changes, and the streams that watch it.
 *
 * Exact drain (W18-W22): a stream opened with a holder_id holds the worker while it drains, until
 * its coordinator sends ReleaseWorker with that id or the stream ends; a release holds for every
 * stream of the id until the drain ends. While DRAINING every answer says how many streams still
 * hold it (holders), and a change of that count is a new revision, pushed. A release whose id holds
 * nothing here (no stream of it open, not released in this drain) is refused with NOT_FOUND and
 * leaves no trace: only who watches as a holder can release as one. Holder ids are logged by their
 * tag only (holderTag).
 */
class WorkerInfoService {
  /**
   * @param {object} o version, instanceId, labels (object), services ([{name, visibility}]), capabilities
   *     ([{name, version}], in name order), state ('SERVING' or 'NOT_SERVING'), maxWatches,
   *     maxWatchesPerConnection, log (one line per call)
   */
  constructor(o) {
    this.version = o.version;
    this.instanceId = o.instanceId;
    this.maxWatches = o.maxWatches;
    this.maxWatchesPerConnection = o.maxWatchesPerConnection;
    this.log = o.log;
    this.watches = new Set();
    this.perConnection = new Map();
    this.holderStreams = new Map(); // Watch -> { id, peer }
    this.released = new Set();      // holder ids released in this drain, at most maxWatches
    this.onReleased = [];           // callbacks waiting for holding() to reach 0
    this.current = null;
    this.change({ labels: o.labels, services: o.services, capabilities: o.capabilities ?? [], state: o.state }, 'started');
  }

  /**
   * A new answer: the fields in {@code fields} replace the current ones, the revision grows, and every
   * stream is sent it. Throws, changing nothing, when the new answer breaks a coordinator's bound.
   */
  change(fields, why) {
    const was = this.current;
    const state = fields.state ?? was.state;
    if (was && state !== was.state && (state === 'DRAINING' || was.state === 'DRAINING')) {
      this.released.clear(); // a drain starts with every holder holding; leaving it forgets the releases
    }
    const answer = {
      version: this.version,
      instance_id: this.instanceId,
      labels: fields.labels ?? was.labels,
      services: fields.services ?? was.services,
      capabilities: fields.capabilities ? byName(fields.capabilities) : was.capabilities,
      state,
      revision: lastRevision + 1,
      heartbeat_millis: 0,
      holders: state === 'DRAINING' ? this.holding() : 0,
    };
    const problem = boundsProblem(answer);
    if (problem) {
      throw new Error(`refused: ${problem}; coordinators would leave this worker out`);
    }
    lastRevision = answer.revision;
    this.current = answer;
    this.log(`revision ${answer.revision}: state ${answer.state}, labels ${JSON.stringify(answer.labels)}, `
        + `${answer.services.length} services${capabilitiesLogged(answer.capabilities)}`
        + `${state === 'DRAINING' ? `, ${answer.holders} holders` : ''} (${why})`);
    for (const w of this.watches) {
      w.offer();
    }
    this.checkReleased();
  }

  /** Holder streams that hold the worker now: open, their id not released in this drain. */
  holding() {
    let n = 0;
    for (const h of this.holderStreams.values()) {
      if (!this.released.has(h.id)) {
        n++;
      }
    }
    return n;
  }

  /** Who still holds the worker, for the stop's log line. */
  stillHolding() {
    return [...this.holderStreams.values()].filter((h) => !this.released.has(h.id))
      .map((h) => `'${holderTag(h.id)}' from ${h.peer}`);
  }

  /** Streams without a holder id: coordinators that keep W13's quiet period. */
  plainWatchers() {
    return this.watches.size - this.holderStreams.size;
  }

  /** Calls {@code callback} once no holder stream holds the worker (at once if none does). */
  whenReleased(callback) {
    this.onReleased.push(callback);
    this.checkReleased();
  }

  checkReleased() {
    if (this.onReleased.length > 0 && this.holding() === 0) {
      const waiting = this.onReleased;
      this.onReleased = [];
      waiting.forEach((callback) => callback());
    }
  }

  /** The count of holders changed: while draining that is a new answer (W21). */
  holdersChanged(why) {
    if (this.current.state === 'DRAINING' && this.current.holders !== this.holding()) {
      this.change({}, why);
    }
    this.checkReleased();
  }

  state(state, why) {
    if (this.current.state !== state) {
      this.change({ state }, why);
    }
  }

  watchers() {
    return this.watches.size;
  }

  /** Ends every stream (after the newest answer), e.g. before the server stops. */
  endWatches() {
    for (const w of [...this.watches]) {
      w.end();
    }
  }

  /** The implementation to add to a grpc-js server for rollcall.v1.WorkerService. */
  implementation() {
    return {
      WorkerInfo: (call, callback) => callback(null, this.current),
      WatchWorkerInfo: (call) => this.watch(call),
      ReleaseWorker: (call, callback) => this.release(call, callback),
    };
  }

  /** Whether a holder stream of {@code id} is open now. */
  hasHolderStream(id) {
    for (const h of this.holderStreams.values()) {
      if (h.id === id) {
        return true;
      }
    }
    return false;
  }

  /**
   * ReleaseWorker (W20): only for this process, only from an id that holds something here (an open
   * stream, or released in this drain); outside a drain it changes nothing.
   */
  release(call, callback) {
    const { holder_id: id, instance_id: instance } = call.request;
    const bad = holderIdProblem('holder_id', id);
    if (bad) {
      callback({ code: grpc.status.INVALID_ARGUMENT, details: bad });
      return;
    }
    if (instance !== this.instanceId) {
      callback({ code: grpc.status.FAILED_PRECONDITION, details: `instance_id ${JSON.stringify(instance.slice(0, 128))}`
          + ` is not this worker process's ('${this.instanceId}'): released nothing` });
      return;
    }
    if (!this.released.has(id) && !this.hasHolderStream(id)) {
      callback({ code: grpc.status.NOT_FOUND, details: `holder_id '${holderTag(id)}' holds nothing on this worker`
          + ' (no WatchWorkerInfo stream of it is open, and this drain did not release it): released nothing' });
      return;
    }
    const draining = this.current.state === 'DRAINING';
    if (draining && !this.released.has(id)) {
      if (this.released.size >= this.maxWatches) {
        // Ids whose streams all ended hold nothing now: forgetting them costs a coordinator that
        // watches anew one more release, never the worker's stop (open streams are fewer than the bound).
        for (const r of [...this.released]) {
          if (!this.hasHolderStream(r)) {
            this.released.delete(r);
          }
        }
      }
      this.released.add(id);
      this.log(`released by '${holderTag(id)}' (${call.getPeer()}): ${this.holding()} holders left`);
      this.holdersChanged(`released by '${holderTag(id)}'`);
    }
    callback(null, { holders: draining ? this.holding() : 0 });
  }

  watch(call) {
    const peer = call.getPeer();
    const holderId = call.request.holder_id;
    const bad = holderId === '' ? null : holderIdProblem('holder_id', holderId);
    if (bad) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: bad });
      return;
    }
    const refusal = this.watches.size >= this.maxWatches
      ? `this worker already serves as many WatchWorkerInfo streams as it may (--max-watches=${this.maxWatches})`
      : (this.perConnection.get(peer) ?? 0) >= this.maxWatchesPerConnection
        ? 'this connection already holds as many WatchWorkerInfo streams as one connection may'
          + ` (--max-watches-per-connection=${this.maxWatchesPerConnection})`
        : null;
    if (refusal) {
      this.log(`refused a WatchWorkerInfo stream from ${peer}: ${refusal}`);
      call.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: refusal });
      return;
    }
    const asked = call.request.heartbeat_millis;
    const w = new Watch(call, grantedHeartbeat(asked), this);
    this.watches.add(w);
    this.perConnection.set(peer, (this.perConnection.get(peer) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) {
        return;
      }
      released = true;
      w.close();
      this.watches.delete(w);
      const n = this.perConnection.get(peer) - 1;
      if (n > 0) {
        this.perConnection.set(peer, n);
      } else {
        this.perConnection.delete(peer);
      }
      this.log(`watch from ${peer} ended (${this.watches.size} open)`);
      if (this.holderStreams.delete(w)) {
        this.holdersChanged(`the holder stream of '${holderTag(holderId)}' ended`);
      }
    };
    call.on('cancelled', release);
    call.on('finish', release);
    call.on('close', release);
    call.on('error', release);
    if (holderId !== '') {
      this.holderStreams.set(w, { id: holderId, peer });
    }
    this.log(`watch from ${peer} opened${holderId ? ` by holder '${holderTag(holderId)}'` : ''}, heartbeat ${w.heartbeatMs} ms`
        + ` granted (asked ${asked}), ${this.watches.size} open`);
    if (holderId !== '' && this.current.state === 'DRAINING' && !this.released.has(holderId)) {
      this.holdersChanged(`holder '${holderTag(holderId)}' watches`); // its first answer already counts it
    }
    w.offer(); // the first answer at once: the same as the unary answer
  }
}

module.exports = {
  WorkerInfoService, grantedHeartbeat, boundsProblem, holderIdProblem, holderTag, MIN_HEARTBEAT_MS, MAX_HEARTBEAT_MS,
};
