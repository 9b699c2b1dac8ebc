/**
 * A live, read-only page of one resolver's fleet: {@link dev.rollcall.console.RollcallConsole}.
 * Everything else in this package is its machinery.
 */
package dev.rollcall.console;
