package dev.rollcall.conformance;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The compatibility promise of {@code rollcall.v1} ({@code docs/protocol.md}) as a check: compares
 * the descriptors of a protocol as it is now with those of the last published release and names
 * every change that breaks a peer built against the release. Breaking: a file, message, enum,
 * service or method removed or renamed; a field removed, renumbered, renamed, retyped (its type,
 * its message or enum type, repeated or not, {@code optional} presence); an enum value removed,
 * renumbered or renamed; a method's request or response type changed, or made streaming or unary.
 * Allowed: new files, messages, enums, services, methods, fields with new numbers, enum values with
 * new numbers; comments, options and JSON names are not compared.
 *
 * <p>What it cannot see: a field whose meaning changed under the same name, number and type (the
 * page's rules are for that). Pure functions; thread-safe.
 */
public final class ProtocolCompatibility {

    private ProtocolCompatibility() {
    }

    /**
     * Every breaking change from {@code published} to {@code current}, files matched by name, each
     * a sentence naming the element ({@code field rollcall.v1.WorkerInfoResponse.instance_id (2)
     * removed}); empty when {@code current} only adds.
     */
    public static List<String> breakingChanges(FileDescriptorSet published, FileDescriptorSet current) {
        Map<String, FileDescriptorProto> now = new LinkedHashMap<>();
        current.getFileList().forEach(file -> now.put(file.getName(), file));
        List<String> breaks = new ArrayList<>();
        for (FileDescriptorProto was : published.getFileList()) {
            FileDescriptorProto is = now.get(was.getName());
            if (is == null) {
                breaks.add("file " + was.getName() + " removed or renamed");
            } else {
                breaks.addAll(breakingChanges(was, is));
            }
        }
        return List.copyOf(breaks);
    }

    /** Every breaking change from one file to the same file now; see {@link #breakingChanges(FileDescriptorSet, FileDescriptorSet)}. */
    public static List<String> breakingChanges(FileDescriptorProto published, FileDescriptorProto current) {
        List<String> breaks = new ArrayList<>();
        String was = prefix(published);
        if (!published.getPackage().equals(current.getPackage())) {
            breaks.add("package " + published.getPackage() + " of " + published.getName() + " is now "
                    + current.getPackage() + ": every message, enum and service moved");
        }
        messages(was, published.getMessageTypeList(), current.getMessageTypeList(), breaks);
        enums(was, published.getEnumTypeList(), current.getEnumTypeList(), breaks);
        Map<String, ServiceDescriptorProto> services = byName(current.getServiceList(), ServiceDescriptorProto::getName);
        for (ServiceDescriptorProto service : published.getServiceList()) {
            ServiceDescriptorProto now = services.get(service.getName());
            String name = was + service.getName();
            if (now == null) {
                breaks.add("service " + name + " removed or renamed");
                continue;
            }
            Map<String, MethodDescriptorProto> methods = byName(now.getMethodList(), MethodDescriptorProto::getName);
            for (MethodDescriptorProto method : service.getMethodList()) {
                MethodDescriptorProto m = methods.get(method.getName());
                String shown = "method " + name + "." + method.getName();
                if (m == null) {
                    breaks.add(shown + " removed or renamed");
                    continue;
                }
                if (!method.getInputType().equals(m.getInputType())) {
                    breaks.add(shown + " takes " + m.getInputType() + " instead of " + method.getInputType());
                }
                if (!method.getOutputType().equals(m.getOutputType())) {
                    breaks.add(shown + " returns " + m.getOutputType() + " instead of " + method.getOutputType());
                }
                if (method.getClientStreaming() != m.getClientStreaming()) {
                    breaks.add(shown + (m.getClientStreaming() ? " now takes a stream" : " no longer takes a stream"));
                }
                if (method.getServerStreaming() != m.getServerStreaming()) {
                    breaks.add(shown + (m.getServerStreaming() ? " now returns a stream" : " no longer returns a stream"));
                }
            }
        }
        return List.copyOf(breaks);
    }

    private static void messages(String was, List<DescriptorProto> published, List<DescriptorProto> current,
                                 List<String> breaks) {
        Map<String, DescriptorProto> now = byName(current, DescriptorProto::getName);
        for (DescriptorProto message : published) {
            String name = was + message.getName();
            DescriptorProto m = now.get(message.getName());
            if (m == null) {
                breaks.add("message " + name + " removed or renamed");
                continue;
            }
            fields(name, message, m, breaks);
            messages(name + ".", message.getNestedTypeList(), m.getNestedTypeList(), breaks);
            enums(name + ".", message.getEnumTypeList(), m.getEnumTypeList(), breaks);
        }
    }

    private static void fields(String message, DescriptorProto published, DescriptorProto current, List<String> breaks) {
        Map<Integer, FieldDescriptorProto> byNumber = new LinkedHashMap<>();
        current.getFieldList().forEach(f -> byNumber.put(f.getNumber(), f));
        Map<String, FieldDescriptorProto> byName = byName(current.getFieldList(), FieldDescriptorProto::getName);
        for (FieldDescriptorProto field : published.getFieldList()) {
            String shown = "field " + message + "." + field.getName() + " (" + field.getNumber() + ")";
            FieldDescriptorProto same = byNumber.get(field.getNumber());
            FieldDescriptorProto named = byName.get(field.getName());
            if (same == null) {
                breaks.add(shown + (named != null ? " renumbered to " + named.getNumber() : " removed"));
                continue;
            }
            if (!same.getName().equals(field.getName())) {
                breaks.add(shown + " renamed to " + same.getName()
                        + (named != null ? " (and " + field.getName() + " renumbered to " + named.getNumber() + ")" : ""));
            }
            String type = type(field);
            String now = type(same);
            if (!type.equals(now)) {
                breaks.add(shown + " retyped from " + type + " to " + now);
            }
        }
    }

    /** {@code repeated string}, {@code optional .rollcall.v1.Visibility}: everything a peer's reading depends on. */
    private static String type(FieldDescriptorProto f) {
        String label = f.getLabel() == FieldDescriptorProto.Label.LABEL_REPEATED ? "repeated "
                : f.getProto3Optional() ? "optional " : "";
        String kind = f.hasTypeName() ? f.getTypeName() : f.getType().name().substring("TYPE_".length()).toLowerCase();
        return label + kind + (f.hasOneofIndex() && !f.getProto3Optional() ? " in oneof " + f.getOneofIndex() : "");
    }

    private static void enums(String was, List<EnumDescriptorProto> published, List<EnumDescriptorProto> current,
                              List<String> breaks) {
        Map<String, EnumDescriptorProto> now = byName(current, EnumDescriptorProto::getName);
        for (EnumDescriptorProto e : published) {
            String name = was + e.getName();
            EnumDescriptorProto n = now.get(e.getName());
            if (n == null) {
                breaks.add("enum " + name + " removed or renamed");
                continue;
            }
            Map<Integer, EnumValueDescriptorProto> byNumber = new LinkedHashMap<>();
            n.getValueList().forEach(v -> byNumber.putIfAbsent(v.getNumber(), v));
            Map<String, EnumValueDescriptorProto> byName = byName(n.getValueList(), EnumValueDescriptorProto::getName);
            for (EnumValueDescriptorProto value : e.getValueList()) {
                String shown = "enum value " + name + "." + value.getName() + " (" + value.getNumber() + ")";
                EnumValueDescriptorProto same = byNumber.get(value.getNumber());
                EnumValueDescriptorProto named = byName.get(value.getName());
                if (named != null && named.getNumber() != value.getNumber()) {
                    breaks.add(shown + " renumbered to " + named.getNumber());
                } else if (same == null) {
                    breaks.add(shown + " removed");
                } else if (!same.getName().equals(value.getName())) {
                    breaks.add(shown + " renamed to " + same.getName());
                }
            }
        }
    }

    private static String prefix(FileDescriptorProto file) {
        return file.getPackage().isEmpty() ? "" : file.getPackage() + ".";
    }

    private static <T> Map<String, T> byName(List<T> items, Function<T, String> name) {
        Map<String, T> m = new LinkedHashMap<>();
        items.forEach(item -> m.putIfAbsent(Objects.requireNonNull(name.apply(item)), item));
        return m;
    }
}
