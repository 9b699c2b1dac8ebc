/**
 * The coordinator side: {@link dev.rollcall.core.WorkerResolver} keeps the compatible workers,
 * {@link dev.rollcall.api.RollcallConfig} reads the configuration, and
 * {@link dev.rollcall.core.WorkerProbe} answers one-off questions about one worker.
 */
package dev.rollcall.core;
