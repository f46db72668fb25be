import DBus
import Foundation

/// A pairing agent for Just Works bonds: it has no display and no keyboard, so BlueZ asks it
/// only to confirm, which it does. Requests for a PIN or passkey are rejected, and BlueZ then
/// reports the pairing as failed.
struct BlueZAgent: Sendable {
    let path: String

    /// Exports the agent and registers it with BlueZ's `AgentManager1`.
    static func register(on bus: BlueZBus) async throws -> BlueZAgent {
        let path = "/org/bitflash/agent\(UInt32.random(in: 1...UInt32.max))"
        do {
            try bus.connection.export(path: path) { call in
                switch call.member {
                case "Release", "Cancel", "RequestConfirmation", "RequestAuthorization", "AuthorizeService",
                    "DisplayPasskey",
                    "DisplayPinCode":
                    return []
                default:
                    throw DBusError(
                        name: "org.bluez.Error.Rejected", message: "bitflash pairs without a PIN or passkey")
                }
            }
        } catch let error as DBusError {
            throw BlueZError.from(error, operation: "preparing to pair")
        }
        try await bus.call(
            BlueZNames.root, BlueZNames.agentManager, "RegisterAgent", [.objectPath(path), .string("NoInputNoOutput")],
            operation: "registering the pairing agent")
        return BlueZAgent(path: path)
    }

    func unregister(on bus: BlueZBus) async {
        _ = try? await bus.rawCall(
            BlueZNames.root, BlueZNames.agentManager, "UnregisterAgent", [.objectPath(path)],
            timeout: .seconds(5))
        bus.connection.unexport(path: path)
    }
}
