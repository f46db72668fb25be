/// Answers method calls on an exported object path: returns the reply body, or throws.
///
/// Throwing ``DBusError/remote(name:message:)`` (``DBusError/init(name:message:)``) sends that
/// error name and message; any other error is sent as `org.freedesktop.DBus.Error.Failed`.
public typealias DBusMethodHandler = @Sendable (DBusMethodCall) async throws -> [DBusValue]

/// A method call received on an exported object.
public struct DBusMethodCall: Sendable {
    /// The unique name of the caller.
    public let sender: String
    public let path: String
    /// The interface named by the caller; D-Bus allows calls without one.
    public let interface: String?
    public let member: String
    public let arguments: [DBusValue]
    /// The body signature as received, e.g. `aya{sv}`.
    public let signature: String

    public init(sender: String, path: String, interface: String?, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.signature = arguments.signature
    }

    /// Throws `InvalidArgs` unless the call has exactly the given signature.
    public func expectSignature(_ expected: String) throws {
        guard signature == expected else {
            throw DBusError(
                name: DBusErrorName.invalidArgs.rawValue,
                message: "\(interface ?? "").\(member) takes '\(expected)', got '\(signature)'")
        }
    }
}

extension ConnectionCore {
    /// Sorts a received message to its waiter (called on the dispatch thread only).
    func route(_ message: Message) {
        if message.isMethodReturn || message.isError {
            deliverReply(message)
        } else if message.isSignal {
            deliverSignal(message)
        } else if message.isMethodCall {
            incoming.yield(message)
        }
    }

    private func deliverSignal(_ message: Message) {
        let subscriptions = state.withLock { Array($0.subscriptions.values) }
        guard !subscriptions.isEmpty, let arguments = try? message.arguments() else { return }
        let signal = DBusSignal(
            sender: message.sender ?? "", path: message.path ?? "/",
            interface: message.interface ?? "", member: message.member ?? "", arguments: arguments)
        for subscription in subscriptions {
            if let owner = subscription.senderOwner, owner != signal.sender { continue }
            guard
                subscription.rule.matches(
                    path: signal.path, interface: signal.interface,
                    member: signal.member, arguments: arguments)
            else { continue }
            subscription.continuation.yield(signal)
        }
    }

    /// Runs the handler for one incoming method call and sends its reply.
    func answer(_ message: Message) async {
        let path = message.path ?? "/"
        let member = message.member ?? ""
        let reply: Message?
        do {
            reply = try await makeReply(to: message, path: path, member: member)
        } catch {
            let (name, text) =
                (error as? DBusError)?.replyNameAndMessage
                ?? (DBusErrorName.failed.rawValue, String(describing: error))
            reply = try? message.errorReply(name: name, message: text)
        }
        guard message.expectsReply, let reply else { return }
        _ = try? raw.send(reply)
    }

    private func makeReply(to message: Message, path: String, member: String) async throws -> Message {
        if message.interface == DBusStandard.peer, member == "Ping" {
            return try message.methodReturn()
        }
        guard let handler = state.withLock({ $0.handler(for: path) }) else {
            throw DBusError(name: DBusErrorName.unknownObject.rawValue, message: "No object at path \(path)")
        }
        let call = DBusMethodCall(
            sender: message.sender ?? "", path: path, interface: message.interface,
            member: member, arguments: try message.arguments())
        let result = try await handler(call)
        let reply = try message.methodReturn()
        try reply.append(result)
        return reply
    }
}
