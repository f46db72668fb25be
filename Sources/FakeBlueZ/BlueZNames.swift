import DBus

/// The names BlueZ uses on D-Bus (`doc/org.bluez.*.rst`, `src/error.c`).
enum BlueZ {
    static let busName = "org.bluez"
    static let rootPath = "/org/bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let gattDescriptor = "org.bluez.GattDescriptor1"
    static let agentManager = "org.bluez.AgentManager1"

    /// An `org.bluez.Error.NAME` reply with BlueZ's message text.
    static func error(_ name: String, _ message: String) -> DBusError {
        DBusError(name: "org.bluez.Error.\(name)", message: message)
    }

    static let inProgress = error("InProgress", "Operation already in progress")
    static let notConnected = error("NotConnected", "Not Connected")
    static let doesNotExist = error("DoesNotExist", "Does Not Exist")
    static let alreadyExists = error("AlreadyExists", "Already Exists")
    static let notReady = error("NotReady", "Resource Not Ready")
    static let notSupported = error("NotSupported", "Operation is not supported")
    static let invalidArguments = error("InvalidArguments", "Invalid arguments in method call")
    static let authenticationFailed = error("AuthenticationFailed", "Authentication Failed")
    /// A GATT call on a device whose link is down (`characteristic_write_value`).
    static let gattNotConnected = error("Failed", "Not connected")
    /// An ATT Insufficient Authentication/Encryption answer (`create_gatt_dbus_error`).
    static let notPaired = error("NotPermitted", "Not paired")
    /// The kernel's reason when an LE connection attempt is aborted (`src/error.h`).
    static let abortByLocal = error("Failed", "le-connection-abort-by-local")

    /// The methods of each interface, for introspection (`doc/org.bluez.*.rst`).
    static let members: [String: [DBusMemberDescription]] = [
        agentManager: [
            .method("RegisterAgent", ["o", "s"]), .method("UnregisterAgent", ["o"]),
            .method("RequestDefaultAgent", ["o"])
        ],
        adapter: [
            .method("StartDiscovery"), .method("StopDiscovery"), .method("SetDiscoveryFilter", ["a{sv}"]),
            .method("GetDiscoveryFilters", returns: ["as"]), .method("RemoveDevice", ["o"])
        ],
        device: [
            .method("Connect"), .method("Disconnect"), .method("ConnectProfile", ["s"]),
            .method("DisconnectProfile", ["s"]), .method("Pair"), .method("CancelPairing")
        ],
        gattCharacteristic: [
            .method("ReadValue", ["a{sv}"], returns: ["ay"]), .method("WriteValue", ["ay", "a{sv}"]),
            .method("AcquireWrite", ["a{sv}"], returns: ["h", "q"]),
            .method("AcquireNotify", ["a{sv}"], returns: ["h", "q"]),
            .method("StartNotify"), .method("StopNotify")
        ],
        gattDescriptor: [.method("ReadValue", ["a{sv}"], returns: ["ay"]), .method("WriteValue", ["ay", "a{sv}"])]
    ]

    /// `/org/bluez/hci0/dev_F0_0D_00_00_00_01` for address `F0:0D:00:00:00:01`.
    static func devicePath(adapter: String, address: String) -> String {
        adapter + "/dev_" + address.uppercased().replacingOccurrences(of: ":", with: "_")
    }
}
