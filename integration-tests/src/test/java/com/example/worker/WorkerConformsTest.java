package com.example.worker;

import dev.rollcall.worker.RollcallWorker;
import dev.rollcall.conformance.WorkerConformance;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class WorkerConformsTest {

    @Test
    void myWorkerKeepsTheProtocol() throws Exception {
        // Start your worker as your tests do, in any language; here Rollcall's own.
        try (RollcallWorker worker = RollcallWorker.builder().version("1.4.0").host("127.0.0.1").port(0).start()) {
            WorkerConformance.builder()
                    .target("127.0.0.1", worker.port())
                    .callTimeout(Duration.ofSeconds(5))   // a busy CI machine; the default is a coordinator's 2 s
                    .build()
                    .check()                              // W1-W22 as a coordinator sees them, in about 3 s
                    .requirePassed();                     // else an AssertionError with one line per rule
        }
    }
}
