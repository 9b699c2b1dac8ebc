package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code rollcall demo --discovery etcd}: the same story with a real etcd (Debian's etcd-server,
 * which {@code ./run-tests} installs); without etcd this fails and says how to install it.
 */
class DemoOnEtcdTest {

    @Test
    void runsTheWholeDemoWithWorkersRegisteredInEtcd() {
        StringWriter captured = new StringWriter();
        PrintWriter pw = new PrintWriter(captured, true);
        int code = new CommandLine(new RollcallCommand()).setOut(pw).setErr(pw)
                .execute("demo", "--discovery", "etcd");
        String output = captured.toString();
        assertThat(code).as(output).isZero();
        assertThat(output)
                .contains("rollcall.discovery.type=etcd")
                .contains("etcd key /rollcall/demo/workers/127.0.0.1_")
                .contains("5 candidates: 3 compatible, 1 rejected by version, 1 unreachable, 0 pending")
                .contains("took part in none of the 4 jobs")
                .contains("== Done in ");
    }
}
