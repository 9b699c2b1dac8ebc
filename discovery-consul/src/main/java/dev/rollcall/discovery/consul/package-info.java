/**
 * The {@code consul} discovery backend: the healthy instances of one Consul service, followed with
 * blocking health queries ({@link dev.rollcall.discovery.consul.ConsulWorkerDiscoveryProvider}), and
 * the worker side that registers an instance with a TTL check
 * ({@link dev.rollcall.discovery.consul.ConsulRegistrationProvider}). See this module's README.
 */
package dev.rollcall.discovery.consul;
