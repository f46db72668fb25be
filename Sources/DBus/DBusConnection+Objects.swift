extension DBusConnection {
    /// Subscribes to signals matching `rule`.
    ///
    /// The match rule is added on the bus before this returns, so signals sent after it are
    /// delivered, in the order received. Buffering is bounded: when the consumer falls
    /// `bufferLimit` signals behind, newer signals are dropped (the oldest are kept, so what is
    /// delivered stays in order). When the stream ends (the consumer stops iterating, or the
    /// connection closes) the match rule is removed from the bus.
    ///
    /// A well-known `sender` is resolved to its current owner at subscription time; if the
    /// name has no owner yet, signals are filtered by the bus only.
    public func signals(matching rule: DBusMatchRule, bufferLimit: Int = 1024) async throws -> AsyncStream<DBusSignal> {
        try rule.validate()
        var owner: String?
        if let sender = rule.sender {
            owner = sender.hasPrefix(":") ? sender : try await nameOwner(sender)
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: DBusSignal.self, bufferingPolicy: .bufferingOldest(max(1, bufferLimit)))
        let core = self.core
        let id = core.state.withLock { state -> UInt64 in
            let id = state.makeID()
            state.subscriptions[id] = Subscription(rule: rule, senderOwner: owner, continuation: continuation)
            return id
        }
        let ruleString = rule.ruleString
        continuation.onTermination = { _ in
            let removed = core.state.withLock { $0.subscriptions.removeValue(forKey: id) } != nil
            guard removed || !core.state.withLock({ $0.closed }) else { return }
            Task { try? await core.callBus("RemoveMatch", ruleString) }
        }
        do {
            _ = try await callBus("AddMatch", [.string(ruleString)], timeout: .seconds(5))
        } catch {
            continuation.finish()
            throw error
        }
        return stream
    }

    /// Answers method calls on `path` with `handler`, replacing any earlier handler.
    ///
    /// Calls are handled one at a time in arrival order (the order matters for BLE writes);
    /// a handler that suspends delays the calls behind it. With `concurrent`, calls on this
    /// path are instead each answered in a task of their own, so a handler may wait (for a
    /// device, a timer) without holding up other calls; their replies may then leave in any
    /// order. With `subtree`, the handler also answers calls on the paths below `path` that
    /// have no handler of their own (as libdbus's fallback objects do), e.g. `Introspect` on
    /// the intermediate nodes of an object tree. `org.freedesktop.DBus.Peer.Ping` is answered
    /// for every path.
    public func export(
        path: String, concurrent: Bool = false, subtree: Bool = false,
        handler: @escaping DBusMethodHandler
    ) throws {
        try Validation.path(path)
        core.state.withLock { state in
            state.handlers[path] = handler
            if concurrent { state.concurrentPaths.insert(path) } else { state.concurrentPaths.remove(path) }
            if subtree { state.subtreePaths.insert(path) } else { state.subtreePaths.remove(path) }
        }
    }

    /// Stops answering calls on `path` (later calls get `UnknownObject`).
    public func unexport(path: String) {
        core.state.withLock { state in
            state.handlers.removeValue(forKey: path)
            state.concurrentPaths.remove(path)
            state.subtreePaths.remove(path)
        }
    }
}

extension ConnectionCore {
    /// A call to the bus daemon that ignores the result (used for `RemoveMatch`).
    func callBus(_ method: String, _ argument: String) async throws {
        let message = try Message.methodCall(
            destination: DBusStandard.bus, path: DBusStandard.busPath, interface: DBusStandard.bus, method: method)
        try message.append([.string(argument)])
        _ = try await send(message, label: "\(DBusStandard.bus).\(method)", timeout: .seconds(5))
    }
}
