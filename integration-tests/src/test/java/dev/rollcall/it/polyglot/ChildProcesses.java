package dev.rollcall.it.polyglot;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * What the polyglot tests' process helpers share: killing a child that is still alive, and
 * refusing to start one whose runtime or packages are missing with a message that says how to
 * install them (a test that needs Node or Python fails, never skips). Stateless.
 */
final class ChildProcesses {

    private ChildProcesses() {
    }

    /** Kills {@code process} if it is alive and waits up to 10 s for it to end. */
    static void kill(Process process) {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Throws naming what to install when Node, or the npm package {@code pkg} in {@code dir}, is
     * missing for {@code what} (e.g. "the Node xDS client").
     */
    static void requireNode(String what, Path dir, String pkg) {
        String problem = ReferenceWorker.nodeBinary() == null
                ? "node is not on the PATH: " + what + " needs Node.js 18 or newer (./run-tests installs Debian's"
                + " nodejs; or apt-get install -y nodejs npm, or set ROLLCALL_NODE)"
                : Files.isRegularFile(dir.resolve("node_modules/" + pkg + "/package.json")) ? ""
                : what + "'s packages are not installed: run 'npm ci' in " + dir + " (./run-tests does)";
        if (!problem.isEmpty()) {
            throw new IllegalStateException(problem);
        }
    }

    /** Throws naming what to install when Debian's python3 is missing for {@code what}. */
    static void requirePython(String what) {
        if (!Files.isExecutable(Path.of(ReferenceWorker.pythonBinary()))) {
            throw new IllegalStateException(ReferenceWorker.pythonBinary() + " is missing: " + what + " runs on"
                    + " Debian's python3 (apt-get install -y python3-grpcio python3-protobuf; ./run-tests does; or set"
                    + " ROLLCALL_PYTHON)");
        }
    }
}
