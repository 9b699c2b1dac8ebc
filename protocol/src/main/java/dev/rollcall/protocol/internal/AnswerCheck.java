package dev.rollcall.protocol.internal;

import dev.rollcall.api.PeerText;
import dev.rollcall.protocol.v1.HandlerInfo;
import dev.rollcall.protocol.v1.ServiceInfo;
import dev.rollcall.protocol.v1.WorkerInfoResponse;
import java.util.Map;

/**
 * Bounds on what a worker may say about itself. A {@code WorkerInfo} answer is at most
 * {@code rollcall.probe.max-response-bytes} on the wire, but the resolver keeps every answer for as
 * long as the worker is a candidate and writes its version and labels into logs and statuses: so
 * each field is bounded too, and text that could forge a log line (control characters, as
 * {@link PeerText} defines them) is refused.
 * A worker whose answer breaks a bound is left out, with the bound it broke as the reason; nothing
 * is silently cut or rewritten, so what the policy sees is exactly what the worker sent. Internal.
 */
public final class AnswerCheck {

    /** Longer than any real version string (semver with build metadata is rarely over 100). */
    public static final int MAX_VERSION_CHARS = 256;
    public static final int MAX_INSTANCE_ID_CHARS = 128;
    public static final int MAX_LABELS = 128;
    /** As a Kubernetes label key: a 253-character DNS prefix, '/', a 63-character name. */
    public static final int MAX_LABEL_KEY_CHARS = 317;
    public static final int MAX_LABEL_VALUE_CHARS = 1024;
    /** More than any worker serves; each service is kept per worker and indexed in every snapshot. */
    public static final int MAX_SERVICES = 256;
    /** Per service: a gRPC service with more methods than this is not one anybody wrote. */
    public static final int MAX_HANDLERS = 1024;
    /**
     * A service's or handler's name: a fully qualified gRPC service name ({@code demo.v1.Orders})
     * or method, or a task kind. Names are shown in logs and errors and are keys of the registry.
     */
    public static final int MAX_NAME_CHARS = 256;

    private AnswerCheck() {
    }

    /** What is wrong with {@code answer}, or {@code null} when it is within every bound. */
    public static String problem(WorkerInfoResponse answer) {
        String version = answer.getVersion();
        if (version.length() > MAX_VERSION_CHARS) {
            return "version is " + version.length() + " characters long (at most " + MAX_VERSION_CHARS + ")";
        }
        String bad = controlIn(version);
        if (bad != null) {
            return "version contains " + bad;
        }
        String instance = answer.getInstanceId();
        if (instance.length() > MAX_INSTANCE_ID_CHARS) {
            return "instance id is " + instance.length() + " characters long (at most " + MAX_INSTANCE_ID_CHARS + ")";
        }
        if ((bad = controlIn(instance)) != null) {
            return "instance id contains " + bad;
        }
        if (answer.getLabelsCount() > MAX_LABELS) {
            return answer.getLabelsCount() + " labels (at most " + MAX_LABELS + ")";
        }
        for (Map.Entry<String, String> label : answer.getLabelsMap().entrySet()) {
            String key = label.getKey();
            String shownKey = "'" + printable(key) + "'";
            if (key.isEmpty()) {
                return "a label has an empty key";
            }
            if (key.length() > MAX_LABEL_KEY_CHARS) {
                return "label key " + shownKey + " is " + key.length() + " characters long (at most "
                        + MAX_LABEL_KEY_CHARS + ")";
            }
            if ((bad = controlIn(key)) != null) {
                return "label key " + shownKey + " contains " + bad;
            }
            String value = label.getValue();
            if (value.length() > MAX_LABEL_VALUE_CHARS) {
                return "label " + shownKey + " has a value " + value.length() + " characters long (at most "
                        + MAX_LABEL_VALUE_CHARS + ")";
            }
            if ((bad = controlIn(value)) != null) {
                return "label " + shownKey + " has a value that contains " + bad;
            }
        }
        String services = servicesProblem(answer);
        return services != null ? services : capabilitiesProblem(answer);
    }

    /**
     * How many capabilities, and each as {@link dev.rollcall.api.Capability} bounds it (name, version,
     * each name once): the same rules a worker's builder applies, so nothing a Rollcall worker may
     * send is refused here.
     */
    private static String capabilitiesProblem(WorkerInfoResponse answer) {
        try {
            WireFormat.capabilities(answer);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /** Services and handlers: how many, and names that are short and free of white space and control characters. */
    private static String servicesProblem(WorkerInfoResponse answer) {
        if (answer.getServicesCount() > MAX_SERVICES) {
            return answer.getServicesCount() + " services (at most " + MAX_SERVICES + ")";
        }
        for (ServiceInfo service : answer.getServicesList()) {
            String bad = nameProblem(service.getName());
            if (bad != null) {
                return "service name " + bad;
            }
            String shown = "service '" + printable(service.getName()) + "'";
            if (service.getHandlersCount() > MAX_HANDLERS) {
                return shown + " has " + service.getHandlersCount() + " handlers (at most " + MAX_HANDLERS + ")";
            }
            for (HandlerInfo handler : service.getHandlersList()) {
                if ((bad = nameProblem(handler.getName())) != null) {
                    return shown + ": handler name " + bad;
                }
            }
        }
        return null;
    }

    /** What is wrong with a service's or handler's name, or null. */
    private static String nameProblem(String name) {
        if (name.isEmpty()) {
            return "is empty";
        }
        String shown = "'" + printable(name) + "'";
        if (name.length() > MAX_NAME_CHARS) {
            return shown + " is " + name.length() + " characters long (at most " + MAX_NAME_CHARS + ")";
        }
        String bad = controlIn(name);
        if (bad != null) {
            return shown + " contains " + bad;
        }
        for (int i = 0; i < name.length(); i++) {
            if (Character.isWhitespace(name.charAt(i)) || Character.isSpaceChar(name.charAt(i))) {
                return shown + " contains white space at index " + i;
            }
        }
        return null;
    }

    /** The first character {@link PeerText} would escape, described; null when there is none. */
    private static String controlIn(String s) {
        int i = PeerText.indexOfUnclean(s);
        return i < 0 ? null : String.format("a control character (U+%04X) at index %d", (int) s.charAt(i), i);
    }

    /** At most 40 characters of {@code s}, escaped: safe to log. */
    private static String printable(String s) {
        return PeerText.escape(s, 40);
    }
}
