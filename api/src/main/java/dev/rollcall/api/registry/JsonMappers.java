package dev.rollcall.api.registry;

/**
 * Read-only view: JSON to a method's request or response message and back, with protobuf's own
 * JSON mapping (field names in lowerCamelCase or as in the {@code .proto} file, enums by name, 64-bit
 * integers as strings, bytes in base64). The schema is the newest compatible version's that defines
 * the method (see {@link ProtoSymbols}), or one version's, as the implementation was made.
 *
 * <p>The implementation lives in {@code rollcall-schema-json} ({@code dev.rollcall.schema.json.ProtoJsonMappers}),
 * which brings {@code protobuf-java-util} and Gson; a consumer that needs only key routing or
 * symbols does not carry them. Implementations are thread-safe and never block.
 */
public interface JsonMappers {

    /**
     * The serialized request message of {@code method} of {@code service} that {@code json} describes.
     *
     * @throws JsonMappingException naming the field path of an unknown or ill-typed field
     *         ({@code order.items[2].quantity}), or the method when no schema defines it
     */
    byte[] requestFromJson(String service, String method, String json);

    /** The request message {@code request} as JSON. @throws JsonMappingException when the bytes do not parse */
    String requestToJson(String service, String method, byte[] request);

    /** The serialized response message that {@code json} describes; errors as {@link #requestFromJson}. */
    byte[] responseFromJson(String service, String method, String json);

    /** The response message {@code response} as JSON. @throws JsonMappingException when the bytes do not parse */
    String responseToJson(String service, String method, byte[] response);
}
