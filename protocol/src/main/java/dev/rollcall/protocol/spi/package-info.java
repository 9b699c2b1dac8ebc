/**
 * The probe-protocol SPI: how the resolver asks a candidate what it runs. A
 * {@link dev.rollcall.protocol.spi.ProbeProtocolProvider} is found by {@link java.util.ServiceLoader}
 * and chosen by {@code rollcall.probe.protocol} (default {@code rollcall}); its
 * {@link dev.rollcall.protocol.spi.ProbeProtocol} probes once, and optionally watches, and says in
 * {@link dev.rollcall.protocol.spi.ProbeCapabilities} what its answers can and cannot carry.
 */
package dev.rollcall.protocol.spi;
