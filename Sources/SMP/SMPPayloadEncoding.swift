import CBOR

/// How the CBOR payload of a frame is written. Both decode to the same items; a decoder
/// must accept either (docs/protocols/mcumgr-smp.md; Zephyr's own tests expect the second).
public enum SMPPayloadEncoding: String, Sendable, Equatable, Codable {
    /// RFC 8949 §4.2.1 deterministic encoding: definite lengths, map keys sorted. What this
    /// package's clients send.
    case deterministic
    /// As Zephyr writes responses with zcbor in its default (non-canonical) build: maps and
    /// arrays of indefinite length (`bf` … `ff`, `9f` … `ff`), map keys in the order the handler
    /// wrote them, integers and strings in their shortest definite form (zcbor
    /// `zcbor_encode.c` `list_map_start_encode`; Zephyr's `tests/subsys/mgmt/mcumgr/smp_version`
    /// expects `bf 62 72 63 03 ff` for `{"rc": 3}`).
    case zcbor

    /// The bytes of `item` in this encoding.
    public func encode(_ item: CBOR) -> [UInt8] {
        switch self {
        case .deterministic: return item.encoded()
        case .zcbor:
            var out: [UInt8] = []
            Self.appendZCBOR(item, to: &out)
            return out
        }
    }

    private static func appendZCBOR(_ item: CBOR, to out: inout [UInt8]) {
        switch item {
        case let .array(items):
            out.append(0x9F)
            for element in items { appendZCBOR(element, to: &out) }
            out.append(0xFF)
        case let .map(pairs):
            out.append(0xBF)
            for pair in pairs {
                appendZCBOR(pair.key, to: &out)
                appendZCBOR(pair.value, to: &out)
            }
            out.append(0xFF)
        default:
            // Scalars (and tags, which SMP does not use) have one shortest form.
            out += item.encoded()
        }
    }
}

extension SMPFrame {
    /// The bytes of the frame with its payload written in `encoding`; the header's length is
    /// that of the payload so written.
    public func encoded(_ encoding: SMPPayloadEncoding) throws(SMPError) -> [UInt8] {
        let body = encoding.encode(payload)
        guard body.count <= Int(UInt16.max) else { throw .payloadTooLarge(body.count) }
        var head = header
        head.length = UInt16(body.count)
        return head.bytes + body
    }
}
