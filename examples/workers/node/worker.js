#!/usr/bin/env node
'use strict';
// A Rollcall worker in Node.js: serves rollcall.v1.WorkerService from the repository's .proto,
// prints the address it bound, logs one line per change, drains on SIGTERM. See README.md.

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { parseArgs } = require('node:util');
const readline = require('node:readline');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { WorkerInfoService } = require('./worker-service');
const { parseCapability, capabilitiesProblem, capabilityText } = require('./capabilities');
const { escaped } = require('./peer-text');

const USAGE = `usage: node worker.js --version VERSION [options]
  --version VERSION              what coordinators see (their policies judge it); required
  --host HOST                    address to bind (default 127.0.0.1)
  --port PORT                    port to bind (default 0: any free port)
  --label KEY=VALUE              a label (repeatable)
  --service NAME[=VISIBILITY]    a service it serves: public (default), internal or external (repeatable)
  --capability NAME[=VERSION]    something it can do, e.g. udf:geo_distance or plan-protocol=3 (repeatable)
  --instance-id ID               overrides the random id of this process start
  --not-serving                  start NOT_SERVING (say 'serving' on standard input when ready)
  --proto FILE                   rollcall/v1/worker.proto (default $ROLLCALL_PROTO, else the repository's)
  --drain-quiet-ms MS            after SIGTERM, keep serving this long when a watcher without a holder id
                                 watched at the drain (default 500); holders end the drain by releasing
  --shutdown-grace-ms MS         the longest the stop waits for holders to let go, then for calls (default 5000)
  --max-watches N                WatchWorkerInfo streams at once (default 1024)
  --max-watches-per-connection N per connection (default 16)
  --max-request-bytes N          largest request message (default 4096)
  --max-calls-per-connection N   HTTP/2 concurrent streams per connection (default 250)
Standard input takes one command a line: drain, resume, serving, not-serving, label KEY=VALUE, unlabel KEY,
  capability NAME[=VERSION] (adds it, or changes its version), drop-capability NAME.`;

// Whoever read our output may have gone (EPIPE): the worker goes on, and drains, without its log.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

function log(line) {
  process.stdout.write(`${new Date().toISOString()} rollcall-worker-node: ${line}\n`);
}

function fail(message) {
  process.stderr.write(`rollcall-worker-node: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function options() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        version: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '0' },
        label: { type: 'string', multiple: true, default: [] },
        service: { type: 'string', multiple: true, default: [] },
        capability: { type: 'string', multiple: true, default: [] },
        'instance-id': { type: 'string' },
        'not-serving': { type: 'boolean', default: false },
        proto: { type: 'string' },
        'drain-quiet-ms': { type: 'string', default: '500' },
        'shutdown-grace-ms': { type: 'string', default: '5000' },
        'max-watches': { type: 'string', default: '1024' },
        'max-watches-per-connection': { type: 'string', default: '16' },
        'max-request-bytes': { type: 'string', default: '4096' },
        'max-calls-per-connection': { type: 'string', default: '250' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (e) {
    fail(e.message);
  }
  if (parsed.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (parsed.version === undefined) {
    fail('--version is required');
  }
  const int = (name, min, max) => {
    const v = Number(parsed[name]);
    if (!Number.isInteger(v) || v < min || v > max) {
      fail(`--${name} ${parsed[name]} is not a whole number in ${min}..${max}`);
    }
    return v;
  };
  return {
    version: parsed.version,
    host: parsed.host,
    port: int('port', 0, 65535),
    labels: Object.fromEntries(parsed.label.map((l) => keyValue(l, '--label') ?? fail(`--label ${l} is not KEY=VALUE`))),
    services: parsed.service.map(service),
    capabilities: capabilities(parsed.capability),
    instanceId: parsed['instance-id'] ?? crypto.randomUUID(),
    state: parsed['not-serving'] ? 'NOT_SERVING' : 'SERVING',
    proto: protoFile(parsed.proto),
    drainQuietMs: int('drain-quiet-ms', 0, 600000),
    shutdownGraceMs: int('shutdown-grace-ms', 0, 600000),
    maxWatches: int('max-watches', 1, 1000000),
    maxWatchesPerConnection: int('max-watches-per-connection', 1, 1000000),
    maxRequestBytes: int('max-request-bytes', 64, 64 << 20),
    maxCallsPerConnection: int('max-calls-per-connection', 1, 1000000),
  };
}

function keyValue(text) {
  const eq = text.indexOf('=');
  return eq <= 0 ? null : [text.slice(0, eq), text.slice(eq + 1)];
}

function service(text) {
  const [name, visibility = 'public'] = text.split('=');
  const wire = { public: 'VISIBILITY_PUBLIC', internal: 'VISIBILITY_INTERNAL', external: 'VISIBILITY_EXTERNAL' }[visibility];
  if (!wire) {
    fail(`--service ${text}: visibility '${visibility}' is not public, internal or external`);
  }
  return { name, visibility: wire, handlers: [] };
}

/** The --capability options, each checked as coordinators check it; the first bad one fails the start naming it. */
function capabilities(given) {
  const list = given.map((text) => {
    try {
      return parseCapability(text);
    } catch (e) {
      return fail(`--capability: ${e.message}`);
    }
  });
  const problem = capabilitiesProblem(list);
  if (problem) {
    fail(`--capability: ${problem}`);
  }
  return list;
}

/** --proto, else $ROLLCALL_PROTO, else the repository's .proto (in the protocol module, or in core before the split). */
function protoFile(given) {
  const chosen = given ?? process.env.ROLLCALL_PROTO;
  const candidates = chosen ? [chosen] : ['protocol', 'core'].map(
    (module) => path.resolve(__dirname, '../../..', module, 'src/main/protobuf/rollcall/v1/worker.proto'));
  const found = candidates.find((f) => fs.existsSync(f));
  if (!found) {
    fail(`no rollcall/v1/worker.proto at ${candidates.join(' or ')}; give --proto FILE or set ROLLCALL_PROTO`);
  }
  return found;
}

function main() {
  const o = options();
  const definition = protoLoader.loadSync(o.proto, { keepCase: true, longs: String, enums: String, defaults: true });
  const protocol = grpc.loadPackageDefinition(definition).rollcall.v1;
  let info;
  try {
    info = new WorkerInfoService({ ...o, log });
  } catch (e) {
    fail(e.message);
  }
  const server = new grpc.Server({
    // Rollcall's requests are a few bytes; this server serves nothing else.
    'grpc.max_receive_message_length': o.maxRequestBytes,
    'grpc.max_concurrent_streams': o.maxCallsPerConnection,
  });
  server.addService(protocol.WorkerService.service, info.implementation());
  server.bindAsync(`${o.host}:${o.port}`, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      process.stderr.write(`rollcall-worker-node: cannot bind ${o.host}:${o.port}: ${err.message}\n`);
      process.exit(1);
    }
    const host = o.host.includes(':') ? `[${o.host}]` : o.host;
    log(`serving grpc://${host}:${port} instance=${o.instanceId} version=${o.version} (proto ${o.proto})`);
  });

  let drainedAt = null;
  let plainAtDrain = false; // a watcher without a holder id watched at the drain: it keeps W13's quiet period
  let heldAtDrain = 0; // holder streams that held it when it drained, for the stop's log line
  const drain = (why) => {
    plainAtDrain = info.plainWatchers() > 0;
    info.state('DRAINING', why);
    heldAtDrain = info.holding();
    drainedAt = Date.now();
  };
  const commands = {
    drain: () => { if (info.current.state !== 'DRAINING') { drain('drain on standard input'); } },
    resume: () => info.state('SERVING', 'resume on standard input'),
    serving: () => info.state('SERVING', 'serving on standard input'),
    'not-serving': () => info.state('NOT_SERVING', 'not-serving on standard input'),
    label: (arg) => {
      const kv = keyValue(arg ?? '');
      if (!kv) {
        throw new Error('label needs KEY=VALUE');
      }
      info.change({ labels: { ...info.current.labels, [kv[0]]: kv[1] } }, `label ${kv[0]} on standard input`);
    },
    unlabel: (key) => {
      const { [key]: _gone, ...rest } = info.current.labels;
      info.change({ labels: rest }, `unlabel ${key} on standard input`);
    },
    capability: (arg) => {
      const c = parseCapability(arg ?? '');
      if (info.current.capabilities.some((had) => had.name === c.name && had.version === c.version)) {
        throw new Error(`it has capability '${capabilityText(c)}' already: nothing changes`);
      }
      const others = info.current.capabilities.filter((had) => had.name !== c.name);
      info.change({ capabilities: [...others, c] }, `capability ${c.name} on standard input`);
    },
    'drop-capability': (name) => {
      const kept = info.current.capabilities.filter((had) => had.name !== name);
      if (kept.length === info.current.capabilities.length) {
        throw new Error(`no capability '${escaped(name ?? '')}' to drop`);
      }
      info.change({ capabilities: kept }, `drop-capability ${name} on standard input`);
    },
  };
  // Standard input is optional: at its end (e.g. </dev/null) the worker simply goes on.
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    const [command, ...rest] = line.trim().split(/\s+/);
    if (!command) {
      return;
    }
    try {
      if (!commands[command]) {
        throw new Error(`unknown command; known: ${Object.keys(commands).join(', ')}`);
      }
      commands[command](rest.join(' ') || undefined);
    } catch (e) {
      log(`'${escaped(line.trim(), 256)}' ignored: ${e.message}`);
    }
  });

  let stopping = false;
  const stop = (signal) => {
    if (stopping) {
      log(`${signal} again: stopping now`);
      server.forceShutdown();
      process.exit(0);
    }
    stopping = true;
    const stopAt = Date.now();
    if (info.current.state !== 'DRAINING') {
      drain(`${signal}: draining, then stopping`);
    }
    // A coordinator without a holder id may have planned on this worker just before it heard: keep
    // serving a moment. Holders say when they let go (exact drain, W22): no quiet period for them.
    const quiet = plainAtDrain ? Math.max(0, drainedAt + o.drainQuietMs - Date.now()) : 0;
    const stopNow = () => {
      info.endWatches();
      const grace = setTimeout(() => {
        log(`calls still running after the ${o.shutdownGraceMs} ms grace: cancelling them`);
        server.forceShutdown();
        process.exit(0);
      }, o.shutdownGraceMs);
      server.tryShutdown(() => {
        clearTimeout(grace);
        log('stopped');
        process.exit(0);
      });
    };
    setTimeout(() => {
      // Then every holder must let go, at most until the grace is up (a silent holder cannot hold the stop).
      let done = false;
      const holdersGone = () => {
        if (!done) {
          done = true;
          clearTimeout(graceUp);
          if (heldAtDrain > 0) {
            log(`every holder let go ${Date.now() - drainedAt} ms after the drain (${heldAtDrain} held it then)`);
          }
          stopNow();
        }
      };
      const graceUp = setTimeout(() => {
        if (!done) {
          done = true;
          log(`after the ${o.shutdownGraceMs} ms grace, ${info.holding()} holders still hold it`
              + ` (${info.stillHolding().join('; ')}): stopping anyway`);
          stopNow();
        }
      }, Math.max(0, stopAt + o.shutdownGraceMs - Date.now()));
      info.whenReleased(holdersGone);
    }, quiet);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
