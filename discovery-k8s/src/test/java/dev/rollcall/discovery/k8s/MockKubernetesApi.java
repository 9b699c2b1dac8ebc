package dev.rollcall.discovery.k8s;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * fabric8's Kubernetes mock API server in CRUD mode (real HTTP, WebSocket watches, label selectors)
 * whose storage outlives the server: it can be stopped and started again on the same port, like an
 * API server restarting over the same etcd.
 *
 * <p>The mock alone does not replay history: a watch that resumes from an old resource version
 * gets the objects that exist now (as ADDED) but never hears of deletions it missed. A real API
 * server either replays from its watch cache or, when the version is older than the cache,
 * answers {@code 410 Gone} so that the client re-lists. This stand-in does the latter: after a
 * restart its watch cache begins at the newest resource version in storage, as a real one's does,
 * and a watch resuming from before that gets {@code 410 Gone} (an ERROR event, as from kube-apiserver).
 *
 * <p>What the mock never does by itself and a real API server does routinely, on demand:
 * <ul>
 *   <li>{@link #endWatchesAfter}: end every watch after a while, as kube-apiserver does when a
 *       watch's {@code timeoutSeconds} (5 to 10 minutes from informers) runs out;</li>
 *   <li>{@link #sendBookmarks}: send {@code BOOKMARK} events carrying the newest resource version
 *       to watches that allow them, so that a watch filtered by labels can resume from a recent
 *       version instead of an old one;</li>
 *   <li>{@link #delayLists}: answer lists slowly, as a loaded API server over a big namespace.</li>
 * </ul>
 */
final class MockKubernetesApi implements AutoCloseable {

    /** The User-Agent of the test's own client, whose requests {@link #requests()} leaves out. */
    private static final String TEST_CLIENT = "rollcall-tests/mock-client";
    private static final Pattern WATCH_FROM_VERSION = Pattern.compile("[?&]resourceVersion=(\\d+)");

    private final Storage storage = new Storage();
    private final int port;
    private KubernetesMockServer server;
    private KubernetesClient client;

    private MockKubernetesApi(int port) {
        this.port = port;
    }

    /** Starts on a free loopback port. */
    static MockKubernetesApi start() {
        MockKubernetesApi api = new MockKubernetesApi(0);
        api.server = api.serve(0);
        return api;
    }

    /** Stops serving: open watches are cut and connections refused. The stored objects are kept. */
    synchronized void stop() {
        if (server != null) {
            server.shutdown();
            server = null;
        }
    }

    /**
     * Warms up what the mock does on its event loop and watch threads: Jackson's first
     * serialization of an EndpointSlice watch event takes seconds on a busy machine, and the
     * mock waits for a watch's pending sends on its event loop when the watch is closed.
     */
    static void warmUp() {
        String json = Serialization.asJson(Slices.ipv4("warm-up", "warm-up", 1, Slices.ready("127.0.0.1", "p")));
        KubernetesResource resource = Serialization.unmarshal(json, KubernetesResource.class);
        Serialization.asJson(new WatchEvent(resource, "ADDED"));
    }

    /** Serves again on the same port over the same objects; its watch cache starts now. */
    synchronized void restart() {
        stop();
        storage.watchCacheStartsNow();
        server = serve(port());
    }

    /**
     * Runs {@code changes} against another API server over the same storage, while this one may be
     * down: what a second replica of a highly available control plane would accept meanwhile.
     */
    void throughAnotherReplica(Consumer<KubernetesClient> changes) {
        KubernetesMockServer replica = newServer();
        replica.start(InetAddress.getLoopbackAddress(), 0);
        try (KubernetesClient other = clientFor(replica.url("/"))) {
            changes.accept(other);
        } finally {
            replica.shutdown();
        }
    }

    int port() {
        return port != 0 ? port : portOfFirstServer;
    }

    private int portOfFirstServer;

    /** The API server's URL, e.g. {@code http://localhost:41234/}. */
    String url() {
        return "http://127.0.0.1:" + port() + "/";
    }

    /** A client for the test's own reads and writes (not the backend's). */
    synchronized KubernetesClient client() {
        if (client == null) {
            client = clientFor(url());
        }
        return client;
    }

    /** While {@code true}, every request is refused with 403 Forbidden, as for an account without RBAC rights. */
    void forbidAll(boolean forbidden) {
        storage.forbidden = forbidden;
    }

    /** The {@code Authorization} headers of the list and watch requests for EndpointSlices, in order. */
    List<String> sliceReadAuthorizations() {
        return List.copyOf(storage.authorizations);
    }

    /** While {@code true}, requests for pods are refused with 403 Forbidden, as for an account without rights on pods. */
    void forbidPods(boolean forbidden) {
        storage.podsForbidden = forbidden;
    }

    /**
     * Every request this API server was asked by a client other than {@link #client()} (the backend's,
     * not the test's own writes), as {@code METHOD path?query}, in order.
     */
    List<String> requests() {
        return List.copyOf(storage.requests);
    }

    /** The paths (with their queries) of the requests for pods, lists and watches, in order. */
    List<String> podRequests() {
        return List.copyOf(storage.podRequests);
    }

    /** From now on every watch is ended (cleanly, code 1000) {@code after} it opened; null: never. */
    void endWatchesAfter(java.time.Duration after) {
        storage.watchTimeout = after;
    }

    /** How many watches this server ended because of {@link #endWatchesAfter}. */
    int watchesEnded() {
        return storage.ended.get();
    }

    /**
     * While {@code true}, every open watch that allows bookmarks gets a {@code BOOKMARK} event with
     * the newest resource version every 100 ms (kube-apiserver sends them about once a minute).
     */
    void sendBookmarks(boolean send) {
        storage.bookmarks = send;
    }

    /** How many bookmark events were sent. */
    int bookmarksSent() {
        return storage.bookmarksSent.get();
    }

    /** From now on list requests for EndpointSlices are answered after {@code delay}; zero: at once. */
    void delayLists(java.time.Duration delay) {
        storage.listDelay = delay;
    }

    /** How many watches were refused with {@code 410 Gone}. */
    int goneAnswers() {
        return storage.gone.get();
    }

    @Override
    public synchronized void close() {
        if (client != null) {
            client.close();
        }
        try {
            stop();
        } catch (IllegalStateException e) {
            // The mock blocks its event loop while a closed watch's last sends drain; its shutdown
            // then gives up after 10 s. The test has made its assertions: do not fail it on that.
            System.err.println("mock API server was slow to stop: " + e);
        }
    }

    private KubernetesMockServer serve(int onPort) {
        KubernetesMockServer s = newServer();
        s.start(InetAddress.getLoopbackAddress(), onPort);
        if (onPort == 0) {
            portOfFirstServer = s.getPort();
        }
        return s;
    }

    @SuppressWarnings("deprecation")    // the mock's own JUnit extension builds its context with this mapper
    private KubernetesMockServer newServer() {
        MockWebServer web = new MockWebServer();
        // Real API servers speak TLS (HTTP/2 by ALPN), never cleartext HTTP/2 upgrades.
        web.setHttp2ClearTextEnabled(false);
        return new KubernetesMockServer(new Context(Serialization.jsonMapper()), web, new HashMap<>(),
                new Unclosable(storage), false);
    }

    private static KubernetesClient clientFor(String url) {
        return new KubernetesClientBuilder().withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(
                io.fabric8.kubernetes.client.Config.empty()).withMasterUrl(url).withRequestTimeout(10_000)
                .withUserAgent(TEST_CLIENT).build()).build();
    }

    /** The CRUD dispatcher plus a watch cache that begins at the last (re)start. */
    private static final class Storage extends KubernetesCrudDispatcher {
        private final AtomicLong newest = new AtomicLong();
        private volatile long watchCacheStart;
        private final AtomicInteger gone = new AtomicInteger();
        private volatile boolean forbidden;
        private volatile boolean podsForbidden;
        private final List<String> podRequests = new CopyOnWriteArrayList<>();
        private final List<String> requests = new CopyOnWriteArrayList<>();
        private final List<String> authorizations = new CopyOnWriteArrayList<>();
        private volatile java.time.Duration watchTimeout;
        private final AtomicInteger ended = new AtomicInteger();
        private volatile boolean bookmarks;
        private final AtomicInteger bookmarksSent = new AtomicInteger();
        private volatile java.time.Duration listDelay = java.time.Duration.ZERO;
        private final java.util.concurrent.ScheduledExecutorService timers =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "mock-k8s-watch-timers");
                    t.setDaemon(true);
                    return t;
                });

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            if (!TEST_CLIENT.equals(request.getHeader("User-Agent"))) {
                requests.add(request.getMethod() + " " + request.getPath());
            }
            if ("GET".equals(request.getMethod()) && request.getPath() != null && request.getPath().contains("/endpointslices")) {
                authorizations.add(String.valueOf(request.getHeader("Authorization")));
            }
            boolean pods = "GET".equals(request.getMethod()) && request.getPath() != null
                    && request.getPath().matches(".*/pods([/?].*)?");
            if (pods) {
                podRequests.add(request.getPath());
            }
            if (pods && podsForbidden) {
                Status status = new StatusBuilder().withStatus("Failure").withCode(403).withReason("Forbidden")
                        .withMessage("pods is forbidden: User \"system:serviceaccount:workers:default\" cannot list"
                                + " resource \"pods\" in API group \"\" in the namespace \"workers\"")
                        .build();
                return new MockResponse().setResponseCode(403).setBody(Serialization.asJson(status));
            }
            if (forbidden) {
                Status status = new StatusBuilder().withStatus("Failure").withCode(403).withReason("Forbidden")
                        .withMessage("endpointslices.discovery.k8s.io is forbidden: User \"system:serviceaccount:workers:"
                                + "default\" cannot list resource \"endpointslices\" in API group \"discovery.k8s.io\"")
                        .build();
                return new MockResponse().setResponseCode(403).setBody(Serialization.asJson(status));
            }
            MockResponse response = super.dispatch(request);
            boolean list = "GET".equals(request.getMethod()) && request.getPath() != null
                    && request.getPath().contains("/endpointslices") && !request.getPath().contains("watch=true");
            if (list && !listDelay.isZero()) {
                response.setBodyDelay(listDelay);
            }
            return response;
        }

        @Override
        public long requestResourceVersion() {
            long v = super.requestResourceVersion();
            newest.accumulateAndGet(v, Math::max);
            return v;
        }

        @Override
        public MockResponse handleDelete(String path) {
            // A real API server gives every write a new resource version, deletions included; the mock
            // does not for deletions, which would make a watch cache unable to tell that it missed one.
            requestResourceVersion();
            return super.handleDelete(path);
        }

        void watchCacheStartsNow() {
            watchCacheStart = newest.get();
        }

        @Override
        public MockResponse handleWatch(String path) {
            Matcher m = WATCH_FROM_VERSION.matcher(path);
            if (m.find() && Long.parseLong(m.group(1)) < watchCacheStart) {
                gone.incrementAndGet();
                // What kube-apiserver does: accept the watch, send one ERROR event carrying the 410, close.
                Status status = new StatusBuilder().withStatus("Failure").withCode(410).withReason("Expired")
                        .withMessage("too old resource version: " + m.group(1) + " (" + watchCacheStart + ")").build();
                String event = Serialization.asJson(new WatchEvent(status, "ERROR"));
                return new MockResponse().withWebSocketUpgrade(new WebSocketListener() {
                    @Override
                    public void onOpen(WebSocket webSocket, Response response) {
                        webSocket.send(event);
                        webSocket.close(1000, "");
                    }
                });
            }
            MockResponse response = super.handleWatch(path);
            WebSocketListener inner = response.getWebSocketListener();
            if (inner == null) {
                return response;
            }
            boolean allowsBookmarks = path.contains("allowWatchBookmarks=true");
            return response.withWebSocketUpgrade(new WebSocketListener() {
                private final List<java.util.concurrent.ScheduledFuture<?>> timers = new CopyOnWriteArrayList<>();

                @Override
                public void onOpen(WebSocket webSocket, Response r) {
                    inner.onOpen(webSocket, r);
                    java.time.Duration timeout = watchTimeout;
                    if (timeout != null) {
                        timers.add(Storage.this.timers.schedule(() -> {
                            ended.incrementAndGet();
                            webSocket.close(1000, "");      // what a watch whose timeoutSeconds ran out gets
                        }, timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
                    }
                    if (allowsBookmarks) {
                        timers.add(Storage.this.timers.scheduleWithFixedDelay(() -> {
                            if (bookmarks) {
                                webSocket.send(bookmark());
                                bookmarksSent.incrementAndGet();
                            }
                        }, 100, 100, java.util.concurrent.TimeUnit.MILLISECONDS));
                    }
                }

                @Override
                public void onMessage(WebSocket webSocket, String text) {
                    inner.onMessage(webSocket, text);
                }

                @Override
                public void onClosing(WebSocket webSocket, int code, String reason) {
                    timers.forEach(t -> t.cancel(false));
                    inner.onClosing(webSocket, code, reason);
                }

                @Override
                public void onClosed(WebSocket webSocket, int code, String reason) {
                    timers.forEach(t -> t.cancel(false));
                    inner.onClosed(webSocket, code, reason);
                }

                @Override
                public void onFailure(WebSocket webSocket, Throwable t, Response r) {
                    timers.forEach(f -> f.cancel(false));
                    inner.onFailure(webSocket, t, r);
                }
            });
        }

        /** A BOOKMARK event as kube-apiserver sends it: an object of the watched kind with only a resource version. */
        private String bookmark() {
            return "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"EndpointSlice\",\"apiVersion\":"
                    + "\"discovery.k8s.io/v1\",\"metadata\":{\"resourceVersion\":\"" + newest.get() + "\"}}}";
        }
    }

    /** Shares one storage between server instances: a server shutting down must not end it. */
    private static final class Unclosable extends Dispatcher {
        private final Dispatcher delegate;

        Unclosable(Dispatcher delegate) {
            this.delegate = delegate;
        }

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            return delegate.dispatch(request);
        }

        @Override
        public void shutdown() {
            // the storage lives on
        }
    }
}
