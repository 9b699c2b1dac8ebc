package dev.rollcall.spring.autoconfigure;

import dev.rollcall.api.KeyCatalog;
import dev.rollcall.api.SettingKey;
import dev.rollcall.api.SettingType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes the keys of every {@link KeyCatalog} on the class path into Spring Boot's configuration
 * metadata ({@code META-INF/spring-configuration-metadata.json}), so that IDEs complete
 * {@code application.yml} with the same names, defaults and documentation the code reads. Run by
 * the build ({@code exec-maven-plugin}, {@code process-classes}) after the configuration processor:
 * the processor's entries (the actuator endpoint's) are kept and the catalog's put beside them.
 * A build tool, not used at run time.
 */
public final class CatalogMetadataWriter {

    private static final Pattern PROPERTIES = Pattern.compile("\"properties\"\\s*:\\s*\\[");
    /** This writer's entries: one a line, from the first column (the processor indents its own). */
    private static final Pattern OURS = Pattern.compile("(?m)^\\{\"name\": .*\\},?\n");
    /** {@code rollcall.keys.<service>.<method>} names the user's own methods: a family, not one key. */
    private static final String ROUTING_KEYS = "{\"name\": \"rollcall.keys\", \"type\": \"java.util.Map<java.lang.String,"
            + "java.lang.String>\", \"description\": \"Field path of a method's routing key, by <service>.<method>, e.g."
            + " rollcall.keys.demo.v1.Orders.Place=order.customer_id.\"}";

    private CatalogMetadataWriter() {
    }

    /** {@code args[0]}: the metadata file to write or to add to. */
    public static void main(String[] args) throws IOException {
        Path file = Path.of(args[0]);
        String entries = entries(KeyCatalog.all(CatalogMetadataWriter.class.getClassLoader()));
        String json;
        if (Files.exists(file)) {
            // Lines this writer added on an earlier run (the processor does not rewrite an unchanged file).
            String existing = OURS.matcher(Files.readString(file, StandardCharsets.UTF_8)).replaceAll("");
            Matcher m = PROPERTIES.matcher(existing);
            if (m.find()) {
                boolean empty = existing.substring(m.end()).stripLeading().startsWith("]");
                json = existing.substring(0, m.end()) + "\n" + entries + (empty ? "\n" : ",\n")
                        + existing.substring(m.end());
            } else {
                int brace = existing.indexOf('{');
                json = existing.substring(0, brace + 1) + "\n\"properties\": [\n" + entries + "\n],"
                        + existing.substring(brace + 1);
            }
        } else {
            Files.createDirectories(file.getParent());
            json = "{\n\"properties\": [\n" + entries + "\n]\n}\n";
        }
        Files.writeString(file, json, StandardCharsets.UTF_8);
    }

    /** One metadata entry per key, then the routing-key family. */
    static String entries(List<SettingKey<?>> keys) {
        StringBuilder out = new StringBuilder();
        for (SettingKey<?> key : keys) {
            out.append(entry(key)).append(",\n");
        }
        // rollcall.keys.* is a family, written on one line as the entries above (see OURS).
        return out.append(ROUTING_KEYS).toString();
    }

    private static <T> String entry(SettingKey<T> key) {
        StringBuilder e = new StringBuilder("{\"name\": ").append(quote(key.name()))
                .append(", \"type\": ").append(quote(javaType(key.type())))
                .append(", \"description\": ").append(quote(description(key)));
        T value = key.defaultValue();
        if (value != null) {
            String text = key.type().text(value);
            boolean bare = key.type() == SettingType.WHOLE_NUMBER || key.type() == SettingType.BOOLEAN;
            e.append(", \"defaultValue\": ").append(bare ? text : quote(text));
        }
        return e.append('}').toString();
    }

    private static String description(SettingKey<?> key) {
        String doc = Character.toUpperCase(key.doc().charAt(0)) + key.doc().substring(1) + ".";
        if (key.defaultValue() == null && !"unset".equals(key.defaultText()) && !"—".equals(key.defaultText())) {
            doc += " Default: " + key.defaultText() + ".";
        }
        if (key.min() != null || !key.allowedValues().isEmpty()) {
            doc += " Expected: " + key.expected() + ".";
        }
        return doc;
    }

    private static String javaType(SettingType<?> type) {
        if (type == SettingType.WHOLE_NUMBER) {
            return "java.lang.Integer";
        }
        if (type == SettingType.BOOLEAN) {
            return "java.lang.Boolean";
        }
        if (type == SettingType.DURATION) {
            return "java.time.Duration";
        }
        return type == SettingType.LIST ? "java.util.List<java.lang.String>" : "java.lang.String";
    }

    private static String quote(String text) {
        StringBuilder q = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> q.append("\\\"");
                case '\\' -> q.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        q.append(String.format("\\u%04x", (int) c));
                    } else {
                        q.append(c);
                    }
                }
            }
        }
        return q.append('"').toString();
    }
}
