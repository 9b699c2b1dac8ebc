package com.example.console;

import dev.rollcall.console.RollcallConsole;
import dev.rollcall.core.WorkerResolver;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;

public final class FleetPage {

    public static void main(String[] args) throws InterruptedException {
        try (WorkerResolver resolver = WorkerResolver.fromConfig();          // rollcall.properties, as always
             RollcallConsole console = RollcallConsole.builder(resolver)
                     .address(new InetSocketAddress("127.0.0.1", 8470))    // loopback; elsewhere needs allowRemote(true)
                     .maxClients(8)                                         // browsers following at once
                     .start()) {
            System.out.println("fleet page: " + console.uri());            // http://127.0.0.1:8470/
            new CountDownLatch(1).await();                                  // until interrupted
        }
    }
}
