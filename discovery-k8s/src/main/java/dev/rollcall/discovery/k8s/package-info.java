/**
 * The {@code k8s} discovery backend: the candidate workers are the serving endpoints of a Kubernetes
 * service, one per pod (terminating ones labelled {@code rollcall.state=draining}), followed through
 * its {@code discovery.k8s.io/v1} EndpointSlices with a fabric8 informer.
 *
 * <p>Users select the backend with {@code rollcall.discovery.type=k8s}: its provider, its keys and
 * {@link dev.rollcall.discovery.k8s.KubernetesAccess} (the same cluster and account, for the readiness
 * gate beside it) are all that is public. There is no registration provider:
 * Kubernetes registers pods in their service's EndpointSlices itself.
 */
package dev.rollcall.discovery.k8s;
