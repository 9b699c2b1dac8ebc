package dev.rollcall.spring.autoconfigure;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** The smallest Spring Boot application: whatever the starter and the class path configure. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TestApplication {
}
