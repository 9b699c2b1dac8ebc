/**
 * What the real-server launchers share ({@link dev.rollcall.local.internal.ServerProcess},
 * {@link dev.rollcall.local.internal.ServerCleanup}): rollcall-local's {@code EtcdServer} and the
 * testkit's {@code DnsServer} and {@code ZooKeeperServer}. Not an API: it changes without notice.
 */
package dev.rollcall.local.internal;
