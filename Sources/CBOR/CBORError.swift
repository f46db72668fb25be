import Diagnostics

/// Why bytes could not be decoded as CBOR. Every case names the byte offset
/// (from the start of the input) where the problem was found.
public enum CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input ended inside an item.
    case truncated(offset: Int, needed: Int, available: Int)
    /// Additional information 28…30, which RFC 8949 reserves.
    case reservedAdditionalInfo(offset: Int, initialByte: UInt8)
    /// Indefinite length (additional information 31) on a type that cannot have it.
    case invalidIndefiniteLength(offset: Int, initialByte: UInt8)
    /// A "break" (0xFF) outside an indefinite-length array, map or string.
    case unexpectedBreak(offset: Int)
    /// A chunk of an indefinite-length string that is not a definite string of the same type.
    case invalidStringChunk(offset: Int, initialByte: UInt8)
    /// A text string that is not valid UTF-8.
    case invalidUTF8(offset: Int)
    /// A two-byte simple value below 32, which RFC 8949 §3.3 forbids.
    case invalidSimpleValue(offset: Int, value: UInt8)
    /// An indefinite-length map whose break came after a key but before its value.
    case oddMapItemCount(offset: Int)
    /// Arrays, maps and tags nested deeper than the decoder's limit.
    case nestingTooDeep(offset: Int, limit: Int)
    /// An array or map that declares (or holds) more elements than the limit.
    case tooManyElements(offset: Int, count: UInt64, limit: Int)
    /// A string longer than the limit.
    case stringTooLong(offset: Int, length: UInt64, limit: Int)
    /// More items in the whole input than the limit.
    case tooManyItems(offset: Int, limit: Int)
    /// Input larger than the limit.
    case inputTooLarge(size: Int, limit: Int)
    /// A declared length larger than the bytes that remain, so it cannot be complete.
    case lengthExceedsInput(offset: Int, declared: UInt64, available: Int)
    /// An array or map that declares more elements than the remaining bytes could hold.
    case countExceedsInput(offset: Int, count: UInt64, available: Int)
    /// Bytes left over after the single item that was expected.
    case trailingBytes(offset: Int, count: Int)

    /// The byte offset at which the problem was found.
    public var offset: Int {
        switch self {
        case let .truncated(o, _, _), let .reservedAdditionalInfo(o, _), let .invalidIndefiniteLength(o, _),
            let .unexpectedBreak(o), let .invalidStringChunk(o, _), let .invalidUTF8(o),
            let .invalidSimpleValue(o, _), let .oddMapItemCount(o), let .nestingTooDeep(o, _),
            let .tooManyElements(o, _, _), let .stringTooLong(o, _, _), let .tooManyItems(o, _),
            let .lengthExceedsInput(o, _, _), let .countExceedsInput(o, _, _), let .trailingBytes(o, _):
            return o
        case .inputTooLarge:
            return 0
        }
    }

    public var description: String {
        let hint = "the data is not valid CBOR; check that the peer speaks the expected protocol"
        switch self {
        case let .truncated(o, needed, available):
            return
                "CBOR input ends at byte \(o + available) but the item at byte \(o) needs \(needed) bytes (\(available) left); the message was cut short — make sure the whole frame was received"
        case let .reservedAdditionalInfo(o, b):
            return
                "CBOR byte \(o) (0x\(Hex.number(b, digits: 2, prefix: false))) uses reserved additional information \(b & 0x1F); \(hint)"
        case let .invalidIndefiniteLength(o, b):
            return
                "CBOR byte \(o) (0x\(Hex.number(b, digits: 2, prefix: false))) declares an indefinite length, which its major type \(b >> 5) does not allow; \(hint)"
        case let .unexpectedBreak(o):
            return "CBOR byte \(o) is a break (0xFF) outside an indefinite-length item; \(hint)"
        case let .invalidStringChunk(o, b):
            return
                "CBOR byte \(o) (0x\(Hex.number(b, digits: 2, prefix: false))) is not a definite-length chunk of the same string type inside an indefinite-length string; \(hint)"
        case let .invalidUTF8(o):
            return "CBOR text string at byte \(o) is not valid UTF-8; \(hint)"
        case let .invalidSimpleValue(o, v):
            return
                "CBOR byte \(o) encodes simple value \(v) in two bytes, which is only allowed for values 32…255; \(hint)"
        case let .oddMapItemCount(o):
            return "CBOR indefinite-length map ends at byte \(o) after a key without its value; \(hint)"
        case let .nestingTooDeep(o, limit):
            return
                "CBOR item at byte \(o) is nested more than \(limit) levels deep; refusing it (raise CBORDecoder.Limits.maximumDepth if the data is trusted)"
        case let .tooManyElements(o, count, limit):
            return
                "CBOR array or map at byte \(o) has \(count) elements, more than the limit of \(limit) (CBORDecoder.Limits.maximumElementCount)"
        case let .stringTooLong(o, length, limit):
            return
                "CBOR string at byte \(o) is \(length) bytes long, more than the limit of \(limit) (CBORDecoder.Limits.maximumStringLength)"
        case let .tooManyItems(o, limit):
            return
                "CBOR input holds more than \(limit) items (reached at byte \(o)); refusing it (CBORDecoder.Limits.maximumItemCount)"
        case let .inputTooLarge(size, limit):
            return "CBOR input is \(size) bytes, more than the limit of \(limit) (CBORDecoder.Limits.maximumInputSize)"
        case let .lengthExceedsInput(o, declared, available):
            return
                "CBOR item at byte \(o) declares length \(declared) but only \(available) bytes follow; the data is truncated or corrupt"
        case let .countExceedsInput(o, count, available):
            return
                "CBOR array or map at byte \(o) declares \(count) elements but only \(available) bytes follow; the data is truncated or corrupt"
        case let .trailingBytes(o, count):
            return "CBOR item ends at byte \(o) but \(count) more bytes follow; expected exactly one item"
        }
    }
}

extension CBORError: DomainError {
    /// CBOR comes from the board's answers: a malformed one fails the flash.
    public var failureKind: FailureKind { .flashFailed }
}
