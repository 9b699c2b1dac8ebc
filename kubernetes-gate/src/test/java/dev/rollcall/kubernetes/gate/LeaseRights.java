package dev.rollcall.kubernetes.gate;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * In front of the mock API server's dispatcher: a Role the test can take the leases out of. Once
 * {@link #forbid()} is called, every request on {@code coordination.k8s.io} is refused 403 with the
 * API server's own wording for a missing RBAC rule ({@link #forbidWrites()}: every request but a
 * read); everything else goes to {@code next}.
 * Thread-safe.
 */
final class LeaseRights extends Dispatcher {

    private final Dispatcher next;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private volatile boolean forbidden;
    private volatile boolean writesForbidden;

    LeaseRights(Dispatcher next) {
        this.next = next;
    }

    /** From now on leases are refused. */
    void forbid() {
        forbidden = true;
    }

    /** From now on leases may be read, not created or changed (a Role with only {@code get}). */
    void forbidWrites() {
        writesForbidden = true;
    }

    /** Requests on {@code coordination.k8s.io} so far, refused or not. */
    int requests() {
        return requests.get();
    }

    /** Requests on {@code coordination.k8s.io} refused so far. */
    int refused() {
        return refused.get();
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        if (String.valueOf(request.getPath()).startsWith("/apis/coordination.k8s.io/")) {
            requests.incrementAndGet();
            if (forbidden || (writesForbidden && !"GET".equals(request.getMethod()))) {
                refused.incrementAndGet();
                return new MockResponse().setResponseCode(403).setHeader("Content-Type", "application/json")
                        .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
                                + "\"leases.coordination.k8s.io is forbidden: User"
                                + " \\\"system:serviceaccount:compute:rollcall\\\" cannot " + verb(request)
                                + " resource \\\"leases\\\" in API group \\\"coordination.k8s.io\\\" in the namespace"
                                + " \\\"" + MockCluster.NS + "\\\"\",\"reason\":\"Forbidden\",\"code\":403}");
            }
        }
        return next.dispatch(request);
    }

    private static String verb(RecordedRequest request) {
        switch (request.getMethod()) {
            case "POST":
                return "create";
            case "PATCH":
                return "patch";
            case "PUT":
                return "update";
            default:
                return "get";
        }
    }

    @Override
    public void shutdown() {
        next.shutdown();
    }

    @Override
    public void releaseResources() {
        next.releaseResources();
    }
}
