package dev.rollcall.cli;

import dev.rollcall.api.WorkerEndpoint;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Candidates in a workers file that static discovery watches. */
final class FileCandidates implements Candidates {

    private final WorkersFile file;
    private final List<String> urls = new ArrayList<>();

    FileCandidates(Path path) {
        this.file = new WorkersFile(path);
        file.write(List.of());
    }

    @Override
    public void add(WorkerEndpoint endpoint, String version) {
        urls.add(endpoint.url());
        file.add(endpoint.url());
    }

    @Override
    public void remove(WorkerEndpoint endpoint) {
        urls.remove(endpoint.url());
        file.remove(endpoint.url());
    }

    @Override
    public String where() {
        return String.valueOf(file.path().getFileName());
    }

    @Override
    public List<String> discoveryProperties() {
        // Properties syntax treats '\\' as an escape: double it so a Windows path survives.
        return List.of("rollcall.discovery.type=static",
                "rollcall.discovery.static.file=" + file.path().toAbsolutePath().toString().replace("\\", "\\\\"));
    }

    @Override
    public void print(PrintWriter out) {
        out.println(file.path() + ":");
        for (String line : file.content().split("\n")) {
            out.println("  " + line);
        }
    }

    @Override
    public void close() {
        // The scratch directory that holds the file is deleted by the demo.
    }
}
