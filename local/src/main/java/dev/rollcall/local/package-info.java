/**
 * Rollcall on one machine: real workers on loopback ({@link dev.rollcall.local.WorkerFleet}), each a
 * {@code RollcallWorker} on its own {@code 127.0.0.1} port, and a worker that never answers. What
 * {@code rollcall demo} runs, and what Rollcall's tests (through {@code rollcall-testkit}) build their
 * fleets from. No test library: this ships in the {@code rollcall} distribution.
 */
package dev.rollcall.local;
