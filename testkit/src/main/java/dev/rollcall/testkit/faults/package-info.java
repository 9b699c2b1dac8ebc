/**
 * Faults as a network makes them, on loopback: {@link dev.rollcall.testkit.faults.FaultProxy} for TCP
 * (a host cut off with its sockets open, a slow link, a reset, a half-close, a successor behind the
 * same address) and {@link dev.rollcall.testkit.faults.DatagramFaultProxy} for UDP (a DNS server that
 * goes silent). Put one between the code under test and its peer.
 */
package dev.rollcall.testkit.faults;
