package dev.rollcall.discovery.consul;

import dev.rollcall.testkit.consul.ConsulStandIn;

/** {@link ConsulScenarios} against the stand-in: always runs. */
class StandInConsulScenariosTest extends ConsulScenarios {

    private ConsulStandIn standIn;

    @Override
    void startTarget() {
        standIn = ConsulStandIn.start();
    }

    @Override
    void releaseTarget() {
        standIn.close();
    }

    @Override
    String address() {
        return standIn.address();
    }

    @Override
    String token() {
        return null;
    }

    @Override
    String deregisterAfter() {
        return "2s";
    }
}
