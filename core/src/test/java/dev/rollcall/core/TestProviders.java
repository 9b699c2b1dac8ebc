package dev.rollcall.core;

import dev.rollcall.api.Settings;
import dev.rollcall.api.discovery.CandidateListener;
import dev.rollcall.api.discovery.WorkerDiscovery;
import dev.rollcall.api.discovery.WorkerDiscoveryProvider;
import dev.rollcall.api.policy.Verdict;
import dev.rollcall.api.policy.VersionPolicy;
import dev.rollcall.api.policy.VersionPolicyProvider;
import java.time.Duration;
import java.util.Set;

/** Providers registered in this module's test service files, to exercise provider lookup. */
final class TestProviders {

    private TestProviders() {
    }

    /** Discovery type {@code nothing}: publishes an empty set; reads {@code delay} to show key tracking. */
    public static class NothingDiscoveryProvider implements WorkerDiscoveryProvider {
        @Override
        public String type() {
            return "nothing";
        }

        @Override
        public WorkerDiscovery create(Settings settings) {
            settings.duration("delay", Duration.ZERO);
            return new WorkerDiscovery() {
                @Override
                public void start(CandidateListener listener) {
                    listener.onCandidates(Set.of());
                }

                @Override
                public void close() {
                }
            };
        }
    }

    /** Two providers of type {@code twin}: configuring it must fail and name both. */
    public static final class TwinOne extends NothingDiscoveryProvider {
        @Override
        public String type() {
            return "twin";
        }
    }

    public static final class TwinTwo extends NothingDiscoveryProvider {
        @Override
        public String type() {
            return "twin";
        }
    }

    /** Policy type {@code any}: accepts every worker. */
    public static final class AnyPolicyProvider implements VersionPolicyProvider {
        @Override
        public String type() {
            return "any";
        }

        @Override
        public VersionPolicy create(Settings settings) {
            return worker -> Verdict.accept();
        }
    }
}
