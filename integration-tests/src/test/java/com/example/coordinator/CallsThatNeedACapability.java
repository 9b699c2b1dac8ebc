package com.example.coordinator;

import dev.rollcall.api.Requirements;
import dev.rollcall.core.WorkerResolver;
import dev.rollcall.grpc.RollcallCallOptions;
import dev.rollcall.grpc.RollcallNameResolverProvider;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.AbstractStub;

public final class CallsThatNeedACapability {

    private static final Requirements GEO_DISTANCE = Requirements.of("udf:geo_distance");

    /** One call that needs the UDF: only workers that have it take it, on any rollcall: channel. */
    static <S extends AbstractStub<S>> S needingGeoDistance(S stub) {
        return stub.withOption(RollcallCallOptions.REQUIREMENTS, GEO_DISTANCE);
    }

    /** Every call of this channel needs plan-protocol>=3: its addresses are only the workers that have it. */
    static ManagedChannel planProtocol3Channel(WorkerResolver resolver) {
        String target = RollcallNameResolverProvider.requiring(resolver.grpcTarget(), // ?require=plan-protocol%3E%3D3
                Requirements.of("plan-protocol>=3"));
        return ManagedChannelBuilder.forTarget(target).usePlaintext().build();
    }
}
