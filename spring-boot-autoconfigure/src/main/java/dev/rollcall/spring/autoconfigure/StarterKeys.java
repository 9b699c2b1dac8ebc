package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.util.List;

/**
 * The starter's own keys, declared once as every module's are: its three switches and the version a
 * worker bean reports. Found by {@link java.util.ServiceLoader}; the Spring Boot metadata lists them
 * with the other catalogs' keys. Stateless.
 */
public final class StarterKeys implements KeyCatalog {

    private static final String STARTER = "rollcall-spring-boot-autoconfigure";

    static final SettingKey<Boolean> RESOLVER_ENABLED = SettingKey.define(STARTER, "rollcall.resolver.enabled",
            SettingType.BOOLEAN, "create the WorkerResolver bean, its health indicator, endpoint and metrics")
            .byDefault(true);
    static final SettingKey<Boolean> WORKER_ENABLED = SettingKey.define(STARTER, "rollcall.worker.enabled",
            SettingType.BOOLEAN, "create a RollcallWorker bean serving this application's gRPC services")
            .byDefault(false);
    static final SettingKey<String> WORKER_VERSION = SettingKey.define(STARTER, "rollcall.worker.version",
            SettingType.TEXT, "the version the worker bean reports; required with rollcall.worker.enabled=true")
            .derivedDefault("—");

    static final SettingKey<Boolean> SERVE_ENABLED = SettingKey.define(STARTER, "rollcall.serve.enabled",
            SettingType.BOOLEAN, "serve the WorkerResolver bean's fleet to coordinators in any language: a FleetServer"
                    + " bean (rollcall.v1.FleetService; needs rollcall-server), configured by rollcall.serve.*")
            .byDefault(false);

    private static final List<SettingKey<?>> KEYS = List.of(RESOLVER_ENABLED, WORKER_ENABLED, WORKER_VERSION,
            SERVE_ENABLED);

    @Override
    public List<SettingKey<?>> keys() {
        return KEYS;
    }
}
