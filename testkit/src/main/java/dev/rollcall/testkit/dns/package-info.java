/**
 * A launcher for a real DNS server on loopback ({@link dev.rollcall.testkit.dns.DnsServer}, Knot DNS)
 * whose records tests edit through dynamic updates, for tests of the dns discovery backend.
 * Needs {@code dnsjava} on the test class path (an optional dependency of the testkit).
 */
package dev.rollcall.testkit.dns;
