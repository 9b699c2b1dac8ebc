package dev.rollcall.kubernetes.gate;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The mock API server's CRUD dispatcher, recording each pod PATCH it answers (when, which pod, which
 * resource, what it answered), and able to lie as a real API server can: refuse a resource (403, as
 * RBAC does), fail one (500 with a text of the test's choosing), or let a kubelet write the pod just
 * before a patch is applied (the race between read and patch).
 */
final class ApiServerLog extends KubernetesCrudDispatcher {

    /** One pod PATCH: {@code resource} is {@code pods} or {@code pods/status}. */
    record Patch(long nanos, String pod, String resource, int code) {
    }

    private final List<Patch> patches = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> failing = new ConcurrentHashMap<>();
    private final Map<String, String> failureText = new ConcurrentHashMap<>();
    private final Map<String, Consumer<String>> beforeNextPatch = new ConcurrentHashMap<>();

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath();
        int query = path.indexOf('?');
        String bare = query < 0 ? path : path.substring(0, query);
        String[] parts = bare.split("/");
        // /api/v1/namespaces/{ns}/pods/{name}[/status]
        if (!"PATCH".equals(request.getMethod()) || parts.length < 7 || !"pods".equals(parts[5])) {
            return super.dispatch(request);
        }
        String pod = parts[6];
        String resource = parts.length > 7 ? "pods/" + parts[7] : "pods";
        Consumer<String> kubelet = beforeNextPatch.remove(pod);
        if (kubelet != null) {
            kubelet.accept(pod);
        }
        Integer code = failing.get(resource);
        MockResponse response = code == null ? apply(request) : new MockResponse().setResponseCode(code)
                .setBody(status(code, failureText.getOrDefault(resource, "pods \"" + pod + "\" is forbidden: User"
                        + " \"system:serviceaccount:compute:rollcall\" cannot patch resource \"" + resource
                        + "\" in API group \"\" in the namespace \"compute\"")));
        patches.add(new Patch(System.nanoTime(), pod, resource, response.code()));
        return response;
    }

    /**
     * The CRUD dispatcher's answer; a JSON Patch it cannot apply (a {@code test} that fails: the pod
     * changed) gets 422 as kube-apiserver answers it. (The mock itself throws, and never answers.)
     */
    private MockResponse apply(RecordedRequest request) {
        try {
            return super.dispatch(request);
        } catch (RuntimeException e) {
            return new MockResponse().setResponseCode(422).setBody(Serialization.asJson(new StatusBuilder()
                    .withStatus("Failure").withReason("Invalid").withCode(422)
                    .withMessage("the server rejected our request due to an error in our request: " + e.getMessage())
                    .build()));
        }
    }

    /** Answers every PATCH of {@code resource} with {@code code} and a Status saying {@code text}. */
    void fail(String resource, int code, String text) {
        failureText.put(resource, text);
        failing.put(resource, code);
    }

    /** Answers every PATCH of {@code resource} with 403, as RBAC does without the right. */
    void refuse(String resource) {
        failing.put(resource, 403);
    }

    /** Answers PATCHes of {@code resource} again. */
    void allow(String resource) {
        failing.remove(resource);
        failureText.remove(resource);
    }

    /** Runs {@code kubelet} on pod {@code pod} just before its next PATCH is applied. */
    void beforeNextPatch(String pod, Consumer<String> kubelet) {
        beforeNextPatch.put(pod, kubelet);
    }

    /**
     * Applies {@code jsonPatch} to the status of {@code pod} directly in the store, as the kubelet's
     * own write would land (used from {@link #beforeNextPatch}, inside the dispatch of another request).
     */
    void patchStatusNow(String namespace, String pod, String jsonPatch) {
        String path = "/api/v1/namespaces/" + namespace + "/pods/" + pod + "/status";
        MockResponse answer = super.dispatch(new RecordedRequest("PATCH " + path + " HTTP/1.1", HttpMethod.PATCH,
                path, Headers.builder().add("Content-Type", "application/json-patch+json").build(),
                new Buffer().writeUtf8(jsonPatch)));
        if (answer.code() / 100 != 2) {
            throw new IllegalStateException("the kubelet's patch of " + pod + " answered " + answer.code());
        }
    }

    List<Patch> patches() {
        return List.copyOf(patches);
    }

    List<Patch> patchesOf(String pod) {
        return patches.stream().filter(p -> p.pod().equals(pod)).collect(Collectors.toList());
    }

    /** The most patches the server received within any one second. */
    int mostInOneSecond() {
        List<Long> times = patches.stream().map(Patch::nanos).sorted().collect(Collectors.toList());
        int most = 0;
        int from = 0;
        for (int to = 0; to < times.size(); to++) {
            while (times.get(to) - times.get(from) >= 1_000_000_000L) {
                from++;
            }
            most = Math.max(most, to - from + 1);
        }
        return most;
    }

    private static String status(int code, String message) {
        return Serialization.asJson(new StatusBuilder().withStatus("Failure").withMessage(message)
                .withReason(code == 403 ? "Forbidden" : "InternalError").withCode(code).build());
    }
}
