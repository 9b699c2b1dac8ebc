/**
 * Kubernetes rollouts that wait for Rollcall: {@link dev.rollcall.kubernetes.gate.KubernetesGate} sets
 * the resolver's verdict on each worker pod as a readiness gate condition (and, opt-in, its deletion
 * cost), and {@link dev.rollcall.kubernetes.gate.KubernetesGateKeys} declares its keys. Everything else
 * is internal.
 */
package dev.rollcall.kubernetes.gate;
