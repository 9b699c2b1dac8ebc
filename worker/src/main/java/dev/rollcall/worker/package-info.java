/**
 * The worker side: advertise a version (and what the worker serves) next to an Arrow Flight
 * service, on one gRPC server and port.
 */
package dev.rollcall.worker;
