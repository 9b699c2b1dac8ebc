package dev.rollcall.cli;

import dev.rollcall.api.Settings;
import dev.rollcall.api.WorkerEndpoint;
import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registration.WorkerRegistration;
import dev.rollcall.discovery.etcd.EtcdRegistrationProvider;
import dev.rollcall.local.etcd.EtcdServer;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Candidates in a real etcd that the demo starts on free loopback ports: each worker is registered
 * under a lease by the etcd backend's own {@link EtcdRegistrationProvider}, as a worker with
 * {@code rollcall.worker.register=true} registers itself, and removed by closing its registration.
 */
final class EtcdCandidates implements Candidates {

    static final String PREFIX = "/rollcall/demo/workers/";

    private final EtcdServer etcd;
    private final Map<String, WorkerRegistration> registrations = new LinkedHashMap<>();
    private final EtcdRegistrationProvider provider = new EtcdRegistrationProvider();

    private EtcdCandidates(EtcdServer etcd) {
        this.etcd = etcd;
    }

    /**
     * Starts etcd.
     *
     * @throws DemoFailure saying how to install it when the {@code etcd} binary is missing
     */
    static EtcdCandidates start() {
        try {
            return new EtcdCandidates(EtcdServer.start());
        } catch (EtcdServer.EtcdNotInstalledException e) {
            throw new DemoFailure(e.getMessage());
        }
    }

    /** The view a worker's registration gets: the backend's keys, scoped as {@code RollcallWorker} scopes them. */
    private Settings settings() {
        return Settings.of(Map.of("rollcall.discovery.etcd.endpoints", etcd.endpoint(),
                "rollcall.discovery.etcd.prefix", PREFIX)).scope("rollcall.discovery.etcd.");
    }

    @Override
    public void add(WorkerEndpoint endpoint, String version) {
        WorkerRegistration r = provider.create(new WorkerInfo(endpoint, version, "", Map.of(), List.of()), settings());
        r.start();
        registrations.put(endpoint.url(), r);
    }

    @Override
    public void remove(WorkerEndpoint endpoint) {
        WorkerRegistration r = registrations.remove(endpoint.url());
        if (r == null) {
            throw new IllegalArgumentException(endpoint.url() + " is not registered");
        }
        r.close();
    }

    @Override
    public String where() {
        return "etcd (" + etcd.endpoint() + ")";
    }

    @Override
    public List<String> discoveryProperties() {
        return List.of("rollcall.discovery.type=etcd",
                "rollcall.discovery.etcd.endpoints=" + etcd.endpoint(),
                "rollcall.discovery.etcd.prefix=" + PREFIX);
    }

    @Override
    public void print(PrintWriter out) {
        out.println("etcd " + etcd.endpoint() + ", one key per worker, each under a lease:");
        registrations.values().forEach(r -> out.println("  " + r.description()));
    }

    @Override
    public void close() {
        registrations.values().forEach(WorkerRegistration::close);
        registrations.clear();
        etcd.close();
    }
}
