#!/usr/bin/env node
'use strict';
// Follows a Rollcall fleet service (rollcall.v1.FleetService) from Node.js: prints one line per
// snapshot and reconnects with backoff when the service goes away. See README.md.

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const USAGE = `usage: node fleet-client.js watch --target HOST:PORT [options]
  --target HOST:PORT   the fleet service (rollcall serve's rollcall.serve.port); required
  --token-file FILE    a file holding the bearer token the service asks for (rollcall.serve.token-file)
  --tls-ca FILE        PEM certificates to trust: the service speaks TLS
  --tls-cert FILE      PEM certificate chain to present: the service asks for one (mutual TLS); with --tls-key
  --tls-key FILE       PEM private key of --tls-cert
  --require R          only workers that have R, e.g. udf:geo_distance or plan-protocol>=3 (repeatable, or
                       comma-separated); each other compatible worker is printed as 'left out URL VERSION: why'
  --proto FILE         rollcall/v1/fleet.proto in its rollcall/v1/ tree, beside worker.proto which it imports
                       (default $ROLLCALL_FLEET_PROTO, else the repository's)
  --keepalive-seconds S          while the watch is open, ping the service every S seconds (default 20,
                                 at least 5: the service permits no more)
  --keepalive-timeout-seconds S  give the connection up when a ping is not answered within S (default 10)
Prints 'snapshot N of INSTANCE compatible K: URL VERSION, ...' on standard output for every snapshot,
and what goes wrong (and how reconnecting went) on standard error.`;

/** Reconnecting waits this long first, doubling up to MAX_BACKOFF_MS, each wait jittered by +-20 %. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5000;
/**
 * While the watch is open the channel pings the service this often, and gives the connection up when
 * a ping goes unanswered this long: a service whose host went silent then fails the watch (UNAVAILABLE).
 */
const KEEPALIVE_SECONDS = 20;
const KEEPALIVE_TIMEOUT_SECONDS = 10;
/** The service lets a client ping this often at most; more often, it ends the connection with GOAWAY too_many_pings. */
const MIN_KEEPALIVE_SECONDS = 5;
/** Statuses that another attempt cannot cure: the watch stops and says why. */
const FATAL = new Set([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.INVALID_ARGUMENT,
  grpc.status.UNIMPLEMENTED]);

process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

function say(line) {
  process.stderr.write(`${line}\n`);
}

function fail(message) {
  process.stderr.write(`fleet-client: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function options() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        target: { type: 'string' },
        'token-file': { type: 'string' },
        'tls-ca': { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        proto: { type: 'string' },
        require: { type: 'string', multiple: true, default: [] },
        'keepalive-seconds': { type: 'string' },
        'keepalive-timeout-seconds': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    fail(e.message);
  }
  const o = parsed.values;
  if (o.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (parsed.positionals.length !== 1 || parsed.positionals[0] !== 'watch') {
    fail(`the command is 'watch' (given: ${JSON.stringify(parsed.positionals)})`);
  }
  if (o.target === undefined) {
    fail('--target is required');
  }
  if ((o['tls-cert'] === undefined) !== (o['tls-key'] === undefined)
    || (o['tls-cert'] !== undefined && o['tls-ca'] === undefined)) {
    fail('--tls-cert and --tls-key go together, and with --tls-ca');
  }
  const keepalive = seconds(o, 'keepalive-seconds', KEEPALIVE_SECONDS);
  if (keepalive < MIN_KEEPALIVE_SECONDS) {
    fail(`--keepalive-seconds ${keepalive}: below ${MIN_KEEPALIVE_SECONDS} s, the most often the fleet service lets a`
      + ' client ping (more often and it ends the connection with GOAWAY too_many_pings)');
  }
  const keepaliveTimeout = seconds(o, 'keepalive-timeout-seconds', KEEPALIVE_TIMEOUT_SECONDS);
  if (keepaliveTimeout <= 0) {
    fail(`--keepalive-timeout-seconds ${keepaliveTimeout}: must be a number of seconds above 0`);
  }
  const read = (name) => (o[name] === undefined ? null : fs.readFileSync(o[name]));
  return {
    target: o.target,
    token: o['token-file'] === undefined ? null : fs.readFileSync(o['token-file'], 'utf8').trim(),
    tlsCa: read('tls-ca'),
    tlsCert: read('tls-cert'),
    tlsKey: read('tls-key'),
    proto: protoFile(o.proto),
    requirements: o.require.flatMap((given) => given.split(',')).map((r) => r.trim()).filter((r) => r !== ''),
    keepaliveMs: Math.round(keepalive * 1000),
    keepaliveTimeoutMs: Math.round(keepaliveTimeout * 1000),
  };
}

/** The option --name as a finite number of seconds, or byDefault when not given. */
function seconds(o, name, byDefault) {
  if (o[name] === undefined) {
    return byDefault;
  }
  const value = o[name].trim() === '' ? NaN : Number(o[name]);
  if (!Number.isFinite(value)) {
    fail(`--${name} ${JSON.stringify(o[name].slice(0, 40))}: not a number of seconds`);
  }
  return value;
}

/** --proto, else $ROLLCALL_FLEET_PROTO, else the repository's .proto (in the protocol module). */
function protoFile(given) {
  const chosen = given ?? process.env.ROLLCALL_FLEET_PROTO
    ?? path.resolve(__dirname, '../../..', 'protocol/src/main/protobuf/rollcall/v1/fleet.proto');
  if (!fs.existsSync(chosen)) {
    fail(`no rollcall/v1/fleet.proto at ${chosen}; give --proto FILE or set ROLLCALL_FLEET_PROTO`);
  }
  return chosen;
}

/** A version as one token: plain as it is, else JSON-quoted, so that a space or a comma cannot split the line. */
function shown(text) {
  return /^[^\s,"]+$/.test(text) ? text : JSON.stringify(text);
}

function snapshotLine(s) {
  const pairs = s.workers.map((w) => `${w.url} ${shown(w.version)}`).join(', ');
  return `snapshot ${s.number} of ${s.service_instance_id} compatible ${s.workers.length}: ${pairs}`;
}

/**
 * Follows WatchFleet for as long as the process runs: each snapshot goes to onSnapshot; when the
 * stream ends or fails, a new one is opened after a backoff. Its first message is the current
 * snapshot, whole, so nothing has to be resynchronised. onFatal gets a status no retry can cure.
 */
function follow(client, metadata, target, onSnapshot, onFatal, requirements = []) {
  let backoff = FIRST_BACKOFF_MS;
  let lostAt = null;
  const open = () => {
    // After a loss, the call waits for the channel to connect again rather than failing at once
    // while the channel is between its own attempts.
    const call = client.WatchFleet({ requirements }, metadata, { waitForReady: lostAt !== null });
    let ended = false;
    const again = (why) => {
      if (ended) {
        return;
      }
      ended = true;
      if (lostAt === null) {
        lostAt = process.hrtime.bigint();
        say(`watch: lost the service at ${target} (${why}); reconnecting`);
      }
      const wait = backoff * (0.8 + Math.random() * 0.4);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      setTimeout(open, wait);
    };
    call.on('data', (snapshot) => {
      if (lostAt !== null) {
        const took = Number(process.hrtime.bigint() - lostAt) / 1e9;
        say(`watch: reconnected to ${target} after ${took.toFixed(3)} s, service instance ${snapshot.service_instance_id}`);
        lostAt = null;
      }
      backoff = FIRST_BACKOFF_MS;
      onSnapshot(snapshot);
    });
    call.on('error', (e) => {
      if (FATAL.has(e.code)) {
        ended = true;
        onFatal(e);
      } else {
        again(`${grpc.status[e.code]}: ${e.details}`);
      }
    });
    call.on('end', () => again('the service ended the stream'));
  };
  open();
}

function main() {
  const o = options();
  // fleet.proto imports rollcall/v1/worker.proto: resolved from the root of the tree fleet.proto is in.
  const definition = protoLoader.loadSync(o.proto, { keepCase: true, longs: String, enums: String, defaults: true,
    includeDirs: [path.resolve(path.dirname(o.proto), '../..')] });
  const protocol = grpc.loadPackageDefinition(definition).rollcall.v1;
  const credentials = o.tlsCa ? grpc.credentials.createSsl(o.tlsCa, o.tlsKey, o.tlsCert) : grpc.credentials.createInsecure();
  const client = new protocol.FleetService(o.target, credentials, {
    // The channel's own reconnection follows our pace, not the default (up to 120 s apart).
    'grpc.initial_reconnect_backoff_ms': FIRST_BACKOFF_MS,
    'grpc.max_reconnect_backoff_ms': MAX_BACKOFF_MS,
    // Pings only while the watch is open: without them a silent service strands it on a dead connection.
    'grpc.keepalive_time_ms': o.keepaliveMs,
    'grpc.keepalive_timeout_ms': o.keepaliveTimeoutMs,
    'grpc.keepalive_permit_without_calls': 0,
  });
  const metadata = new grpc.Metadata();
  if (o.token) {
    metadata.set('authorization', `Bearer ${o.token}`);
  }
  let last = null; // { instance, number (BigInt) }
  follow(client, metadata, o.target, (s) => {
    const number = BigInt(s.number);
    if (last !== null && last.instance === s.service_instance_id && number !== last.number + 1n) {
      say(number <= last.number
        ? `watch: snapshot ${number} after ${last.number}: the numbers went back within one service instance`
        : `watch: skipped ${number - last.number - 1n} snapshots (latest wins)`);
    } else if (last !== null && last.instance !== s.service_instance_id) {
      say(`watch: a new service instance ${s.service_instance_id} (was ${last.instance}): numbers start again`);
    }
    last = { instance: s.service_instance_id, number };
    process.stdout.write(`${snapshotLine(s)}\n`);
    for (const w of s.excluded) {
      if (w.state === 'FLEET_WORKER_STATE_LACKS_REQUIREMENT') {
        process.stdout.write(`left out ${w.url} ${shown(w.version)}: ${w.reason}\n`);
      }
    }
  }, (e) => {
    say(`watch: ${o.target} refused: ${grpc.status[e.code]}: ${e.details}`);
    process.exit(2);
  }, o.requirements);
}

if (require.main === module) {
  main();
}

module.exports = { follow, snapshotLine };
