package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.ConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a bad {@code rollcall.*} key into Spring Boot's "APPLICATION FAILED TO START" report: core's
 * message (the key, the value, what was expected or the nearest known key, and which property source
 * set it) as the description, the key to fix as the action, instead of a stack of bean errors.
 */
public final class RollcallFailureAnalyzer extends AbstractFailureAnalyzer<ConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, ConfigurationException cause) {
        return new FailureAnalysis(cause.getMessage(),
                "Correct " + cause.key() + " in the application's configuration (application.yml or .properties,"
                        + " a profile, an argument or ROLLCALL_* environment variable); every key is in Rollcall's"
                        + " docs/configuration.md.", cause);
    }
}
