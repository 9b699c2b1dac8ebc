package com.example.consumer;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Set;
import java.util.TreeSet;

/**
 * The versions of the libraries that must move together, read from the jars of a class path laid
 * out as a Maven repository ({@code .../io/netty/netty-buffer/4.2.18.Final/netty-buffer-4.2.18.Final.jar}).
 * Netty, gRPC, protobuf and Arrow artifacts of one family share one version; Jackson's share
 * major.minor (its annotations jar has no patch number). A mixed family is the NoSuchMethodError a
 * user meets at the first TLS handshake or Flight call.
 */
final class ClassPathVersions {

    /** Repository path of a family's group, and how much of a version must agree. */
    private record Family(String name, String groupPath, boolean majorMinorOnly) {
    }

    private static final List<Family> FAMILIES = List.of(
            new Family("Netty", "/io/netty/", false),
            new Family("gRPC", "/io/grpc/", false),
            new Family("protobuf", "/com/google/protobuf/", false),
            new Family("Arrow", "/org/apache/arrow/", false),
            new Family("Jackson2", "/com/fasterxml/jackson/", true),
            new Family("Jackson3", "/tools/jackson/", true));

    /** Netty artifacts versioned on their own (the native TLS bindings), not with Netty itself. */
    private static boolean versionedApart(String artifactId) {
        return artifactId.startsWith("netty-tcnative") || artifactId.startsWith("netty-jni-util")
                || artifactId.startsWith("netty-incubator");
    }

    /** family → version → artifacts at that version. */
    private final Map<String, Map<String, TreeSet<String>>> found = new TreeMap<>();

    static ClassPathVersions of(String classPath) {
        ClassPathVersions versions = new ClassPathVersions();
        for (String entry : classPath.split(File.pathSeparator)) {
            versions.add(Path.of(entry).toAbsolutePath().toString().replace(File.separatorChar, '/'));
        }
        return versions;
    }

    private void add(String jar) {
        String[] parts = jar.split("/");
        if (!jar.endsWith(".jar") || parts.length < 3) {
            return;
        }
        String version = parts[parts.length - 2];
        String artifactId = parts[parts.length - 3];
        for (Family family : FAMILIES) {
            if (jar.contains(family.groupPath()) && !versionedApart(artifactId)) {
                String compared = family.majorMinorOnly() ? majorMinor(version) : version;
                found.computeIfAbsent(family.name(), f -> new TreeMap<>())
                        .computeIfAbsent(compared, v -> new TreeSet<>()).add(artifactId + ":" + version);
            }
        }
    }

    private static String majorMinor(String version) {
        String[] numbers = version.split("\\.");
        return numbers.length < 2 ? version : numbers[0] + "." + numbers[1];
    }

    /** One line per family found at more than one version, naming each artifact and its version. */
    List<String> mixedFamilies() {
        List<String> mixed = new ArrayList<>();
        found.forEach((family, byVersion) -> {
            if (byVersion.size() > 1) {
                mixed.add(family + " at " + byVersion.size() + " versions: " + byVersion.values());
            }
        });
        return mixed;
    }

    /**
     * One line per family whose version is not the one expected ({@code family=version}, comma
     * separated, e.g. {@code Netty=4.2.18.Final,gRPC=1.85.1}); a family absent from the class path is one.
     */
    List<String> differingFrom(String expected) {
        List<String> differing = new ArrayList<>();
        for (String pair : expected.split(",")) {
            String[] nameAndVersion = pair.trim().split("=", 2);
            if (nameAndVersion.length != 2) {
                continue;
            }
            String name = nameAndVersion[0].trim();
            Family family = FAMILIES.stream().filter(f -> f.name().equals(name)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("no library family '" + name + "' in " + FAMILIES));
            String want = family.majorMinorOnly() ? majorMinor(nameAndVersion[1].trim()) : nameAndVersion[1].trim();
            Map<String, TreeSet<String>> byVersion = found.getOrDefault(name, Map.of());
            if (!byVersion.keySet().equals(Set.of(want))) {
                differing.add(name + ": expected " + want + ", found " + byVersion.values());
            }
        }
        return differing;
    }

    @Override
    public String toString() {
        List<String> lines = new ArrayList<>();
        found.forEach((family, byVersion) -> lines.add(family + " " + byVersion.keySet()));
        return String.join(", ", lines);
    }
}
