import Diagnostics

/// One adapter the fake plays: `/org/bluez/NAME`, its address, and how many LE connections its
/// controller holds at once (nil: no limit).
public struct FakeAdapter: Sendable, Equatable {
    public var name: String
    public var address: String
    public var maxConnections: Int?

    public init(name: String, address: String, maxConnections: Int? = nil) {
        self.name = name
        self.address = address
        self.maxConnections = maxConnections
    }

    /// `count` adapters `hci0`, `hci1` … with addresses `00:AA:01:00:00:01`, `…:02` …, each
    /// holding `maxConnections`.
    public static func numbered(_ count: Int, maxConnections: Int?) -> [FakeAdapter] {
        (0..<max(1, min(count, 255))).map { i in
            FakeAdapter(
                name: "hci\(i)", address: "00:AA:01:00:00:" + Hex.number(i + 1, digits: 2, prefix: false),
                maxConnections: maxConnections)
        }
    }
}

extension FakeBlueZOptions {
    /// The adapters `options` plays.
    public static func adapters(of options: FakeBlueZOptions) -> [FakeAdapter] { options.effectiveAdapters }

    /// The adapters in effect: `adapters`, else the one of `adapterName` and `adapterAddress`.
    var effectiveAdapters: [FakeAdapter] {
        adapters.isEmpty ? [FakeAdapter(name: adapterName, address: adapterAddress)] : adapters
    }
}

extension FakeState {
    /// The path of the adapter a device belongs to (`/org/bluez/hci1`).
    func adapterPath(of i: Int) -> String {
        let path = devices[i].path
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[..<slash])
    }

    /// True while another adapter's device of the same board holds the board's connection: a
    /// CODAL or DAL board, and a Nordic bootloader, stop advertising while a central is connected
    /// (they accept one connection), so the other adapters see nothing of it.
    func heldThroughAnotherAdapter(_ i: Int) -> Bool {
        let b = boardIndex(i)
        return devices.indices.contains { j in
            j != i && devices[j].connected && boardIndex(j) == b && adapterPath(of: j) != adapterPath(of: i)
        }
    }

    /// Live connections of the adapter at `path`.
    func connections(onAdapter path: String) -> Int {
        devices.indices.reduce(0) { $0 + (devices[$1].connected && adapterPath(of: $1) == path ? 1 : 0) }
    }
}

extension FakeBlueZ {
    /// The most boards each adapter (`hci0`) had connected at once.
    public var peakConnections: [String: Int] {
        state.withLock { s in
            Dictionary(
                uniqueKeysWithValues: s.peakConnections.map {
                    (String($0.key.split(separator: "/").last ?? ""), $0.value)
                })
        }
    }

    /// Refuses a connection the adapter has no room for, when the board's advertisement arrives
    /// and the link would be created, as the stack does: the controller completes
    /// LE Create Connection with HCI 0x0D "Connection Rejected due to Limited Resources"; Linux
    /// maps 0x0D to ECONNREFUSED (net/bluetooth/lib.c `bt_to_errno`) and bluetoothd replies
    /// `org.bluez.Error.Failed` "le-connection-refused" (BlueZ src/device.c `att_connect_cb` →
    /// src/error.c `btd_error_le_errno`, `btd_error_le_str`).
    func refuseBeyondLimit(_ i: Int, _ s: FakeState) throws {
        let path = s.adapterPath(of: i)
        guard let adapter = options.effectiveAdapters.first(where: { BlueZ.rootPath + "/" + $0.name == path }),
            let limit = adapter.maxConnections, s.connections(onAdapter: path) >= limit
        else { return }
        note("[\(s.devices[i].name)] Connect refused: \(adapter.name) holds its \(limit) connections")
        throw BlueZ.error("Failed", "le-connection-refused")
    }
}
