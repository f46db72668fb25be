internal import CDBus
import Synchronization

/// Owns one reference to a libdbus message and drops it exactly once.
final class Message: @unchecked Sendable {
    // libdbus message reference counting is atomic, and a message is not modified after
    // it has been sent or received, so sharing the owner across threads is safe.
    let pointer: OpaquePointer

    /// How many messages are alive in this process (a leak check for tests).
    static let liveCount = Atomic<Int>(0)

    /// Takes over a reference the caller already holds.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
        Message.liveCount.add(1, ordering: .relaxed)
    }

    deinit {
        cdbus_message_unref(pointer)
        Message.liveCount.subtract(1, ordering: .relaxed)
    }

    static func methodCall(destination: String?, path: String, interface: String?, method: String) throws -> Message {
        if let destination { try Validation.busName(destination) }
        try Validation.path(path)
        if let interface { try Validation.interface(interface) }
        try Validation.member(method)
        guard let raw = cdbus_message_new_method_call(destination, path, interface, method) else {
            throw DBusError.outOfMemory
        }
        return Message(owning: raw)
    }

    static func signal(path: String, interface: String, member: String) throws -> Message {
        try Validation.path(path)
        try Validation.interface(interface)
        try Validation.member(member)
        guard let raw = cdbus_message_new_signal(path, interface, member) else { throw DBusError.outOfMemory }
        return Message(owning: raw)
    }

    /// The success reply to this method call.
    func methodReturn() throws -> Message {
        guard let raw = cdbus_message_new_method_return(pointer) else { throw DBusError.outOfMemory }
        return Message(owning: raw)
    }

    /// An error reply to this method call.
    func errorReply(name: String, message: String) throws -> Message {
        let safeName = (try? Validation.errorName(name)) != nil ? name : DBusErrorName.failed.rawValue
        let text = message.replacingOccurrences(of: "\0", with: " ")
        guard let raw = cdbus_message_new_error(pointer, safeName, text) else { throw DBusError.outOfMemory }
        return Message(owning: raw)
    }

    func setDestination(_ destination: String) throws {
        try Validation.busName(destination)
        guard cdbus_message_set_destination(pointer, destination) != 0 else { throw DBusError.outOfMemory }
    }

    /// Appends `values` as the body; nothing is written unless all of them are valid.
    func append(_ values: [DBusValue]) throws {
        for value in values { try Validation.value(value) }
        var iter = DBusMessageIter()
        cdbus_message_iter_init_append(pointer, &iter)
        for value in values { try MessageCodec.append(value, to: &iter) }
    }

    /// The decoded body.
    func arguments() throws -> [DBusValue] {
        try MessageCodec.decodeBody(pointer)
    }

    var type: Int32 { cdbus_message_get_type(pointer) }
    var isMethodCall: Bool { type == CDBUS_MESSAGE_TYPE_METHOD_CALL }
    var isMethodReturn: Bool { type == CDBUS_MESSAGE_TYPE_METHOD_RETURN }
    var isError: Bool { type == CDBUS_MESSAGE_TYPE_ERROR }
    var isSignal: Bool { type == CDBUS_MESSAGE_TYPE_SIGNAL }
    var serial: UInt32 { cdbus_message_get_serial(pointer) }
    var replySerial: UInt32 { cdbus_message_get_reply_serial(pointer) }
    var expectsReply: Bool { cdbus_message_get_no_reply(pointer) == 0 }
    var sender: String? { Message.string(cdbus_message_get_sender(pointer)) }
    var destination: String? { Message.string(cdbus_message_get_destination(pointer)) }
    var path: String? { Message.string(cdbus_message_get_path(pointer)) }
    var interface: String? { Message.string(cdbus_message_get_interface(pointer)) }
    var member: String? { Message.string(cdbus_message_get_member(pointer)) }
    var errorName: String? { Message.string(cdbus_message_get_error_name(pointer)) }
    var bodySignature: String { Message.string(cdbus_message_get_signature(pointer)) ?? "" }

    /// The `DBusError` an error reply stands for: its name and first string argument.
    func remoteError() -> DBusError {
        let name = errorName ?? DBusErrorName.failed.rawValue
        let text = (try? arguments().first?.string()) ?? ""
        return DBusError(name: name, message: text)
    }

    private static func string(_ c: UnsafePointer<CChar>?) -> String? {
        guard let c else { return nil }
        return String(cString: c)
    }
}
