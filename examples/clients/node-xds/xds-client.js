#!/usr/bin/env node
'use strict';
// A gRPC channel on xds:///fleet whose endpoints come from Rollcall's xDS control plane (rollcall
// serve): it calls rollcall.v1.WorkerService/WorkerInfo in a loop and prints one JSON line per call,
// saying which worker answered. Nothing of Rollcall runs here: @grpc/grpc-js-xds does the xDS part.
// See README.md.

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const grpcXds = require('@grpc/grpc-js-xds');

const USAGE = `usage: GRPC_XDS_BOOTSTRAP=bootstrap.json node xds-client.js [options]
  --target URI        the channel's target (default xds:///fleet: rollcall.serve.xds.fleet)
  --interval-ms N     wait N ms between the end of a call and the next (default 500)
  --count N           stop after N calls (default 0: run until SIGTERM or SIGINT)
  --deadline-ms N     each call's deadline (default 5000); a call waits for a worker that long
  --proto FILE        rollcall/v1/worker.proto (default $ROLLCALL_WORKER_PROTO, else the repository's)
Prints one JSON line per call on standard output:
  {"call":N,"version":"1.4.0","instance_id":"..."}          a worker answered
  {"call":N,"error":"UNAVAILABLE","details":"..."}          the call failed`;

process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

function fail(message) {
  process.stderr.write(`xds-client: ${message}\n${USAGE}\n`);
  process.exit(2);
}

/** The option --name as a whole number of at least min, or byDefault when not given. */
function count(values, name, byDefault, min) {
  if (values[name] === undefined) {
    return byDefault;
  }
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min) {
    fail(`--${name} ${JSON.stringify(values[name].slice(0, 40))}: not a whole number of at least ${min}`);
  }
  return n;
}

function options() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        target: { type: 'string', default: 'xds:///fleet' },
        'interval-ms': { type: 'string' },
        count: { type: 'string' },
        'deadline-ms': { type: 'string' },
        proto: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
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
  // grpc-js-xds reads the bootstrap when the first channel resolves, and a missing one would only
  // show as failing calls: say it at once.
  if (!process.env.GRPC_XDS_BOOTSTRAP && !process.env.GRPC_XDS_BOOTSTRAP_CONFIG) {
    fail('GRPC_XDS_BOOTSTRAP is not set: point it at a bootstrap file naming rollcall serve (docs/xds.md)');
  }
  const proto = o.proto ?? process.env.ROLLCALL_WORKER_PROTO
    ?? path.resolve(__dirname, '../../..', 'protocol/src/main/protobuf/rollcall/v1/worker.proto');
  if (!fs.existsSync(proto)) {
    fail(`no rollcall/v1/worker.proto at ${proto}; give --proto FILE or set ROLLCALL_WORKER_PROTO`);
  }
  return {
    target: o.target,
    intervalMs: count(o, 'interval-ms', 500, 0),
    count: count(o, 'count', 0, 0),
    deadlineMs: count(o, 'deadline-ms', 5000, 1),
    proto,
  };
}

function main() {
  const o = options();
  // Teaches grpc-js the xds: scheme and the xDS load-balancing policies.
  grpcXds.register();
  const definition = protoLoader.loadSync(o.proto, { keepCase: true, longs: String, enums: String, defaults: true });
  const { WorkerService } = grpc.loadPackageDefinition(definition).rollcall.v1;
  const client = new WorkerService(o.target, grpc.credentials.createInsecure());

  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.on(signal, () => {
      stopping = true;
    });
  }
  let n = 0;
  const next = () => {
    if (stopping || (o.count > 0 && n >= o.count)) {
      client.close();
      return;
    }
    n += 1;
    const call = n;
    // waitForReady: while no worker is ready (at start, or when the fleet is empty) the call waits
    // for one, up to its deadline, rather than failing at once.
    client.WorkerInfo({}, { deadline: Date.now() + o.deadlineMs, waitForReady: true }, (e, answer) => {
      const line = e
        ? { call, error: grpc.status[e.code] ?? String(e.code), details: e.details }
        : { call, version: answer.version, instance_id: answer.instance_id };
      process.stdout.write(`${JSON.stringify(line)}\n`);
      setTimeout(next, o.intervalMs);
    });
  };
  next();
}

main();
