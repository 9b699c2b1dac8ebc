/**
 * One resolver's rooms, assembled: {@code ResolverLifecycle} builds the probe client, the serial
 * context, the fan-out, schemas, the tracker and the call path in order, starts them, and closes them
 * in the one order that stops cleanly. The facade holds one and delegates to it. Internal: not an API.
 */
package dev.rollcall.core.internal.lifecycle;
