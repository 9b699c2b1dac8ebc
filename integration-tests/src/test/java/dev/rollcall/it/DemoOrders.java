package dev.rollcall.it;

import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.TimestampProto;
import dev.rollcall.it.demo.v1.Order;
import io.grpc.BindableService;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoFileDescriptorSupplier;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;

/**
 * The demo {@code demo.v1.Orders} service in two versions whose schemas differ: version 1 is the
 * compiled {@code demo/v1/orders.proto}; version 2 is the same file with {@code Order.coupon} and
 * an {@code Amend} method added, built at run time (two generated versions cannot share one class
 * path). Both are served from descriptors with one generic handler, so the server's reflection
 * service describes exactly the file the worker was given.
 */
final class DemoOrders {

    static final String SERVICE = "demo.v1.Orders";

    private DemoOrders() {
    }

    /** Version 1's file: the compiled one. */
    static FileDescriptor v1() {
        return Order.getDescriptor().getFile();
    }

    /** Version 2's file: version 1 plus {@code Order.coupon} (field 9) and {@code rpc Amend}. */
    static FileDescriptor v2() {
        FileDescriptorProto.Builder file = v1().toProto().toBuilder();
        for (int i = 0; i < file.getMessageTypeCount(); i++) {
            if (file.getMessageType(i).getName().equals("Order")) {
                file.getMessageTypeBuilder(i).addField(FieldDescriptorProto.newBuilder().setName("coupon")
                        .setJsonName("coupon").setNumber(9).setType(FieldDescriptorProto.Type.TYPE_STRING)
                        .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL));
            }
        }
        file.getServiceBuilder(0).addMethod(MethodDescriptorProto.newBuilder().setName("Amend")
                .setInputType(".demo.v1.PlaceOrderRequest").setOutputType(".demo.v1.PlaceOrderResponse"));
        try {
            return FileDescriptor.buildFrom(file.build(), new FileDescriptor[] {TimestampProto.getDescriptor()});
        } catch (DescriptorValidationException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The {@code Orders} service of {@code file}, answering every method with its response type:
     * {@code served_by} (when the response has it) set to {@code tag}.
     */
    static BindableService service(FileDescriptor file, String tag) {
        ServiceDescriptor service = file.findServiceByName("Orders");
        io.grpc.ServiceDescriptor.Builder descriptor = io.grpc.ServiceDescriptor.newBuilder(service.getFullName())
                .setSchemaDescriptor((ProtoFileDescriptorSupplier) () -> file);
        java.util.List<io.grpc.MethodDescriptor<DynamicMessage, DynamicMessage>> methods = new java.util.ArrayList<>();
        for (MethodDescriptor m : service.getMethods()) {
            io.grpc.MethodDescriptor<DynamicMessage, DynamicMessage> md =
                    io.grpc.MethodDescriptor.<DynamicMessage, DynamicMessage>newBuilder()
                            .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
                            .setFullMethodName(io.grpc.MethodDescriptor.generateFullMethodName(
                                    service.getFullName(), m.getName()))
                            .setRequestMarshaller(ProtoUtils.marshaller(
                                    DynamicMessage.getDefaultInstance(m.getInputType())))
                            .setResponseMarshaller(ProtoUtils.marshaller(
                                    DynamicMessage.getDefaultInstance(m.getOutputType())))
                            .build();
            methods.add(md);
            descriptor.addMethod(md);
        }
        ServerServiceDefinition.Builder definition = ServerServiceDefinition.builder(descriptor.build());
        for (int i = 0; i < methods.size(); i++) {
            MethodDescriptor m = service.getMethods().get(i);
            definition.addMethod(methods.get(i), ServerCalls.asyncUnaryCall((request, response) -> {
                DynamicMessage.Builder answer = DynamicMessage.newBuilder(m.getOutputType());
                var servedBy = m.getOutputType().findFieldByName("served_by");
                if (servedBy != null) {
                    answer.setField(servedBy, tag);
                }
                response.onNext(answer.build());
                response.onCompleted();
            }));
        }
        ServerServiceDefinition built = definition.build();
        return () -> built;
    }
}
