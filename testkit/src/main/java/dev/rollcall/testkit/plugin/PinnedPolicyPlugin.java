package dev.rollcall.testkit.plugin;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.ToolProvider;

/**
 * A custom version policy compiled at test time, outside every class path, for tests of how
 * Rollcall finds a user's plugins: a jar with a {@code META-INF/services} file (for a class path,
 * e.g. the command's {@code --classpath}) or a named module that declares itself only with
 * {@code provides} (for the module path).
 *
 * <p>The policy is {@code rollcall.policy.type=pinned}: it accepts workers whose version equals
 * {@code rollcall.policy.pinned.version} and describes itself as
 * {@code pinned <version>}, followed by {@code from module <name>} in a named module. Needs a JDK (it runs
 * {@code javac}); not thread-safe against two calls writing to one directory.
 */
public final class PinnedPolicyPlugin {

    /** The provider's class name. */
    public static final String PROVIDER = "com.example.pinned.PinnedPolicyProvider";
    /** The named module's name. */
    public static final String MODULE = "com.example.pinned";

    private static final String SOURCE = """
            package com.example.pinned;

            import dev.rollcall.api.Settings;
            import dev.rollcall.api.WorkerInfo;
            import dev.rollcall.api.policy.Verdict;
            import dev.rollcall.api.policy.VersionPolicy;
            import dev.rollcall.api.policy.VersionPolicyProvider;

            public final class PinnedPolicyProvider implements VersionPolicyProvider {
                @Override
                public String type() {
                    return "pinned";
                }

                @Override
                public VersionPolicy create(Settings settings) {
                    String pinned = settings.string("version");
                    String module = getClass().getModule().getName();
                    return new VersionPolicy() {
                        @Override
                        public Verdict check(WorkerInfo worker) {
                            return worker.version().equals(pinned) ? Verdict.accept()
                                    : Verdict.reject("not the pinned version " + pinned);
                        }

                        @Override
                        public String description() {
                            return "pinned " + pinned + (module == null ? "" : " from module " + module);
                        }
                    };
                }
            }
            """;

    private static final String MODULE_INFO = """
            module com.example.pinned {
                requires dev.rollcall.api;
                provides dev.rollcall.api.policy.VersionPolicyProvider with com.example.pinned.PinnedPolicyProvider;
            }
            """;

    private PinnedPolicyPlugin() {
    }

    /**
     * Compiles the policy against this JVM's class path into {@code dir/pinned-policy.jar}, with its
     * {@code META-INF/services} entry, and returns the jar.
     */
    public static Path jar(Path dir) {
        Path classes = compile(dir.resolve("jar-src"), dir.resolve("jar-classes"), false,
                "-cp", System.getProperty("java.class.path"));
        Path jar = dir.resolve("pinned-policy.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
             Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace(File.separatorChar, '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
            out.putNextEntry(new JarEntry("META-INF/services/dev.rollcall.api.policy.VersionPolicyProvider"));
            out.write((PROVIDER + "\n").getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + jar, e);
        }
        return jar;
    }

    /**
     * Compiles the policy as the named module {@value #MODULE} (a {@code module-info} with
     * {@code provides}, no {@code META-INF/services}) into an exploded module directory under
     * {@code dir} and returns it.
     *
     * @param modulePath where {@code dev.rollcall.api} (and {@code com.google.protobuf}, which it
     *                   requires statically) are
     */
    public static Path namedModule(Path dir, List<Path> modulePath) {
        return compile(dir.resolve("module-src"), dir.resolve(MODULE), true, "--module-path",
                modulePath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)));
    }

    private static Path compile(Path src, Path out, boolean asModule, String... pathOptions) {
        try {
            Path source = src.resolve("com/example/pinned/PinnedPolicyProvider.java");
            Files.createDirectories(source.getParent());
            Files.createDirectories(out);
            Files.writeString(source, SOURCE);
            List<String> args = new ArrayList<>(List.of("--release", "17", "-d", out.toString()));
            args.addAll(List.of(pathOptions));
            if (asModule) {
                Files.writeString(src.resolve("module-info.java"), MODULE_INFO);
                args.add(src.resolve("module-info.java").toString());
            }
            args.add(source.toString());
            int rc = ToolProvider.getSystemJavaCompiler().run(null, null, null, args.toArray(String[]::new));
            if (rc != 0) {
                throw new IllegalStateException("javac of the pinned policy failed (exit " + rc + ")");
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the pinned policy's sources under " + src, e);
        }
    }
}
