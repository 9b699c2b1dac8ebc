package dev.rollcall.it;

import dev.rollcall.worker.RollcallWorker;

/** A child JVM that starts one worker and prints {@code started} or the failure's message. */
final class WorkerStartProcess {

    private WorkerStartProcess() {
    }

    public static void main(String[] args) throws Exception {
        try (RollcallWorker worker = RollcallWorker.builder().version("1.0.0").start()) {
            System.out.println("started " + worker.endpoint().url());
        } catch (IllegalStateException e) {
            System.out.println("failed: " + e.getMessage());
        }
    }
}
