package dev.rollcall.api.registry;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The protobuf schema one worker version serves: its gRPC services and every file they need
 * (the services' files and their dependencies). The resolver fetches it once per version through
 * gRPC server reflection; tests build one with {@link #of(Collection)}.
 *
 * <p>Symbols are full names: services ({@code demo.v1.Orders}), methods
 * ({@code demo.v1.Orders.Place}), messages and enums, nested ones included
 * ({@code demo.v1.Order.Item}). Immutable and thread-safe; every lookup is a map read.
 * Needs {@code protobuf-java} on the class path (the resolver has it).
 */
public final class ProtoSchema {

    private static final ProtoSchema EMPTY = new ProtoSchema(List.of());

    private final SortedSet<String> services;
    private final Map<String, ServiceDescriptor> serviceByName;
    private final Map<String, FileDescriptor> files;
    private final Map<String, FileDescriptor> symbols;

    private ProtoSchema(Collection<ServiceDescriptor> served) {
        Map<String, ServiceDescriptor> byName = new HashMap<>();
        Map<String, FileDescriptor> byFile = new LinkedHashMap<>();
        Map<String, FileDescriptor> bySymbol = new HashMap<>();
        Deque<FileDescriptor> todo = new ArrayDeque<>();
        for (ServiceDescriptor s : served) {
            byName.put(s.getFullName(), s);
            todo.add(s.getFile());
        }
        while (!todo.isEmpty()) {
            FileDescriptor f = todo.poll();
            if (byFile.putIfAbsent(f.getName(), f) != null) {
                continue;
            }
            todo.addAll(f.getDependencies());
            for (ServiceDescriptor s : f.getServices()) {
                bySymbol.putIfAbsent(s.getFullName(), f);
                for (MethodDescriptor m : s.getMethods()) {
                    bySymbol.putIfAbsent(m.getFullName(), f);
                }
            }
            f.getMessageTypes().forEach(m -> indexMessage(m, f, bySymbol));
            for (EnumDescriptor e : f.getEnumTypes()) {
                bySymbol.putIfAbsent(e.getFullName(), f);
            }
        }
        this.serviceByName = Map.copyOf(byName);
        this.services = Collections.unmodifiableSortedSet(new TreeSet<>(byName.keySet()));
        this.files = Collections.unmodifiableMap(byFile);
        this.symbols = Map.copyOf(bySymbol);
    }

    private static void indexMessage(Descriptor m, FileDescriptor f, Map<String, FileDescriptor> bySymbol) {
        bySymbol.putIfAbsent(m.getFullName(), f);
        m.getNestedTypes().forEach(n -> indexMessage(n, f, bySymbol));
        m.getEnumTypes().forEach(e -> bySymbol.putIfAbsent(e.getFullName(), f));
    }

    /** The schema of a worker that serves these gRPC services (with their files and dependencies). */
    public static ProtoSchema of(Collection<ServiceDescriptor> services) {
        Objects.requireNonNull(services, "services");
        return services.isEmpty() ? EMPTY : new ProtoSchema(List.copyOf(services));
    }

    /** The schema of a worker that serves no reflection: no services, no files. */
    public static ProtoSchema empty() {
        return EMPTY;
    }

    /** The full names of the gRPC services, sorted. */
    public SortedSet<String> services() {
        return services;
    }

    /** The service named {@code service} (full name). */
    public Optional<ServiceDescriptor> service(String service) {
        return Optional.ofNullable(serviceByName.get(service));
    }

    /** The method {@code method} (simple name, e.g. {@code Place}) of {@code service} (full name). */
    public Optional<MethodDescriptor> method(String service, String method) {
        ServiceDescriptor s = serviceByName.get(service);
        return s == null ? Optional.empty() : Optional.ofNullable(s.findMethodByName(method));
    }

    /** The file that defines {@code symbol} (a service, method, message or enum, by full name). */
    public Optional<FileDescriptor> fileContainingSymbol(String symbol) {
        return Optional.ofNullable(symbols.get(symbol));
    }

    /** The file named {@code name}, e.g. {@code demo/v1/orders.proto}. */
    public Optional<FileDescriptor> file(String name) {
        return Optional.ofNullable(files.get(name));
    }

    /** Every file, in no particular order: the services' files and all their dependencies. */
    public Collection<FileDescriptor> files() {
        return files.values();
    }

    /** Whether the schema has no service (the worker serves no reflection, or only Rollcall's own services). */
    public boolean isEmpty() {
        return services.isEmpty();
    }

    @Override
    public String toString() {
        return "ProtoSchema" + services + " (" + files.size() + " files)";
    }
}
