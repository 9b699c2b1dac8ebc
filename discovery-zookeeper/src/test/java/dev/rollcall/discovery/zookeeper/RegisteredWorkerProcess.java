package dev.rollcall.discovery.zookeeper;

import dev.rollcall.core.RollcallConfig;
import dev.rollcall.core.worker.RollcallWorker;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * A worker process for the tests: a real {@link RollcallWorker} that registers itself in ZooKeeper through
 * configuration, exactly as a user's worker would. Arguments are {@code key=value} Rollcall settings.
 * Prints {@code REGISTERED <url> <path>} once ZooKeeper has created its node, then runs until its standard
 * input closes (then it shuts down cleanly) or it is killed.
 */
public final class RegisteredWorkerProcess {

    private RegisteredWorkerProcess() {
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> config = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            config.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        try (RollcallWorker worker = RollcallWorker.builder()
                .version("1.0.0")
                .config(RollcallConfig.of(config))
                .start()) {
            String path = worker.registration().map(r -> ((ZooKeeperRegistration) r).path()).orElse("none");
            System.out.println("REGISTERED " + worker.endpoint().url() + " " + path);
            System.out.flush();
            while (System.in.read() >= 0) {
                // Runs until the parent closes our input or kills us.
            }
        }
    }
}
