/**
 * Probe protocols: finding the one {@code rollcall.probe.protocol} names ({@code ProbeProtocols})
 * and Rollcall's own ({@code rollcall}, {@code datafusion-distributed}, {@code grpc-health},
 * {@code none}), each a provider of the public SPI in {@code dev.rollcall.protocol.spi}. The
 * resolver reaches them through {@code ProtocolTransport}. Internal: not an API.
 */
package dev.rollcall.core.internal.protocols;
