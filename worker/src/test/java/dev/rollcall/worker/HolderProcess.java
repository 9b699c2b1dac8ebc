package dev.rollcall.worker;

import java.util.concurrent.CountDownLatch;

/**
 * A coordinator in a process of its own, for the kill test: holds the worker on 127.0.0.1:{@code
 * args[0]} under holder id {@code args[1]}, prints {@code HOLDING} once the first answer came, then
 * never releases it and waits to be killed.
 */
public final class HolderProcess {

    private HolderProcess() {
    }

    public static void main(String[] args) throws InterruptedException {
        TestCoordinator holder = TestCoordinator.watch(Integer.parseInt(args[0]), args[1]);
        holder.awaitAnswer(a -> true);
        System.out.println("HOLDING");
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
