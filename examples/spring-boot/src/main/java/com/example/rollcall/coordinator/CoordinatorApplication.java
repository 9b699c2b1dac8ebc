package com.example.rollcall.coordinator;

import dev.rollcall.api.WorkerInfo;
import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.core.WorkerResolver;
import java.util.List;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@SpringBootApplication
@RestController
public class CoordinatorApplication {

    private final WorkerResolver resolver;   // the starter's bean, configured by application.yml

    public CoordinatorApplication(WorkerResolver resolver) {
        this.resolver = resolver;
    }

    public static void main(String[] args) {
        SpringApplication.run(CoordinatorApplication.class, args);
    }

    /** Plans a query: one snapshot for the whole query, compatible workers only. */
    @GetMapping("/plan")
    public List<String> plan() {
        FleetSnapshot snapshot = resolver.pin();
        return snapshot.workers().stream().map(WorkerInfo::toString).toList();
    }
}
