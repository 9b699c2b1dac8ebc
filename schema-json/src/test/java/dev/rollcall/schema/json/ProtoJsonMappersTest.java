package dev.rollcall.schema.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.gson.JsonParser;
import dev.rollcall.api.registry.JsonMappers;
import dev.rollcall.api.registry.JsonMappingException;
import dev.rollcall.api.registry.ProtoSchema;
import java.util.List;
import org.junit.jupiter.api.Test;

/** JSON mapping over one schema built at run time, as reflection would deliver it. */
class ProtoJsonMappersTest {

    private static FieldDescriptorProto field(String name, int number, Type type, Label label, String typeName) {
        FieldDescriptorProto.Builder f = FieldDescriptorProto.newBuilder().setName(name).setNumber(number)
                .setType(type).setLabel(label);
        return (typeName == null ? f : f.setTypeName(typeName)).build();
    }

    /** {@code t.Req { repeated Item items = 1; map<string, int32> counts = 2; Item one = 3; } Item { int32 n = 1; }}. */
    private static ProtoSchema schema() throws Exception {
        DescriptorProto item = DescriptorProto.newBuilder().setName("Item")
                .addField(field("n", 1, Type.TYPE_INT32, Label.LABEL_OPTIONAL, null)).build();
        DescriptorProto countsEntry = DescriptorProto.newBuilder().setName("CountsEntry")
                .setOptions(MessageOptions.newBuilder().setMapEntry(true))
                .addField(field("key", 1, Type.TYPE_STRING, Label.LABEL_OPTIONAL, null))
                .addField(field("value", 2, Type.TYPE_INT32, Label.LABEL_OPTIONAL, null)).build();
        DescriptorProto req = DescriptorProto.newBuilder().setName("Req").addNestedType(countsEntry)
                .addField(field("items", 1, Type.TYPE_MESSAGE, Label.LABEL_REPEATED, ".t.Item"))
                .addField(field("counts", 2, Type.TYPE_MESSAGE, Label.LABEL_REPEATED, ".t.Req.CountsEntry"))
                .addField(field("one", 3, Type.TYPE_MESSAGE, Label.LABEL_OPTIONAL, ".t.Item")).build();
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("t.proto").setPackage("t")
                .setSyntax("proto3").addMessageType(item).addMessageType(req)
                .addService(ServiceDescriptorProto.newBuilder().setName("S").addMethod(MethodDescriptorProto
                        .newBuilder().setName("M").setInputType(".t.Req").setOutputType(".t.Item")))
                .build();
        FileDescriptor built = FileDescriptor.buildFrom(file, new FileDescriptor[0]);
        return ProtoSchema.of(List.of(built.findServiceByName("S")));
    }

    @Test
    void roundTripsThroughBytes() throws Exception {
        ProtoSchema schema = schema();
        JsonMappers json = ProtoJsonMappers.over(schema);
        String text = "{\"items\":[{\"n\":1},{\"n\":2}],\"counts\":{\"a\":3},\"one\":{\"n\":4}}";
        byte[] bytes = json.requestFromJson("t.S", "M", text);
        DynamicMessage parsed = DynamicMessage.parseFrom(schema.method("t.S", "M").orElseThrow().getInputType(), bytes);
        assertThat(parsed.getRepeatedFieldCount(parsed.getDescriptorForType().findFieldByName("items"))).isEqualTo(2);
        assertThat(JsonParser.parseString(json.requestToJson("t.S", "M", bytes))).isEqualTo(JsonParser.parseString(text));
        assertThat(json.responseToJson("t.S", "M", json.responseFromJson("t.S", "M", "{\"n\":9}"))).contains("\"n\": 9");
    }

    @Test
    void namesThePathOfTheFieldAtFault() throws Exception {
        JsonMappers json = ProtoJsonMappers.over(schema());
        assertThat(pathOf(json, "{\"items\":[{\"n\":1},{\"n\":\"x\"}]}")).isEqualTo("items[1].n");
        assertThat(pathOf(json, "{\"items\":[{\"m\":1}]}")).isEqualTo("items[0].m");
        assertThat(pathOf(json, "{\"counts\":{\"a\":1,\"b\":\"many\"}}")).isEqualTo("counts[\"b\"]");
        assertThat(pathOf(json, "{\"one\":{\"n\":1.5}}")).isEqualTo("one.n");
        assertThat(pathOf(json, "{\"one\":{\"n\":1},\"extra\":true}")).isEqualTo("extra");
        assertThat(pathOf(json, "{\"items\":{\"n\":1}}")).isEqualTo("items");
    }

    @Test
    void bytesThatDoNotParseAndUnknownMethodsAreDistinctErrors() throws Exception {
        JsonMappers json = ProtoJsonMappers.over(schema());
        assertThatThrownBy(() -> json.requestToJson("t.S", "M", new byte[] {(byte) 0xff, (byte) 0xff}))
                .isInstanceOfSatisfying(JsonMappingException.class,
                        e -> assertThat(e.reason()).isEqualTo(JsonMappingException.Reason.UNPARSABLE_MESSAGE));
        assertThatThrownBy(() -> json.requestFromJson("t.S", "Nope", "{}"))
                .isInstanceOfSatisfying(JsonMappingException.class,
                        e -> assertThat(e.reason()).isEqualTo(JsonMappingException.Reason.UNKNOWN_METHOD));
        assertThatThrownBy(() -> json.requestFromJson("t.S", "M", "[1]"))
                .isInstanceOfSatisfying(JsonMappingException.class,
                        e -> assertThat(e.reason()).isEqualTo(JsonMappingException.Reason.MALFORMED_JSON));
    }

    private static String pathOf(JsonMappers json, String text) {
        try {
            json.requestFromJson("t.S", "M", text);
        } catch (JsonMappingException e) {
            assertThat(e.reason()).isEqualTo(JsonMappingException.Reason.BAD_FIELD);
            assertThat(e.getMessage()).contains(e.fieldPath());
            return e.fieldPath();
        }
        throw new AssertionError("no error for " + text);
    }
}
