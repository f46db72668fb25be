import FakeBlueZ
import Foundation
import Testing
import TestSupport
import PartialFlashingFrames
import Transport

/// The fake as two reference D-Bus clients see it: systemd's `busctl` and dbus-python (the
/// bindings bleak's predecessors and BlueZ's own test scripts use).
@Suite(.enabled(if: PrivateBus.isAvailable, Comment(rawValue: PrivateBus.skipMessage)))
struct ReferenceToolTests {
    static let busctl = "/usr/bin/busctl"
    static let python = "/usr/bin/python3"
    static var hasBusctl: Bool { FileManager.default.isExecutableFile(atPath: busctl) }
    static var hasDBusPython: Bool {
        FileManager.default.isExecutableFile(atPath: python)
            && ((try? run(python, ["-c", "import dbus, dbus.mainloop.glib; from gi.repository import GLib"]).status)
                == 0)
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Runs a tool in a detached thread, so the fake keeps answering meanwhile.
    static func runAsync(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try run(executable, arguments) })
            }
        }
    }

    @Test(
        "busctl walks the tree, introspects the adapter's methods and reads GetManagedObjects as BlueZ's",
        .enabled(if: hasBusctl, "busctl not installed: busctl reference checks skipped"))
    func busctlSeesBlueZShapes() async throws {
        let fixture = try await FakeBus.start([FakeBoard(board: try TestBoards.microbit())])
        let address = "--address=\(fixture.bus.address)"
        let tree = try await Self.runAsync(Self.busctl, [address, "tree", "org.bluez"])
        #expect(tree.status == 0)
        #expect(tree.output.contains("/org/bluez/hci0"))

        let introspection = try await Self.runAsync(
            Self.busctl, [address, "introspect", "org.bluez", "/org/bluez/hci0"])
        #expect(introspection.status == 0)
        let lines = introspection.output.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        #expect(
            lines.contains { $0.count >= 3 && $0[0] == ".SetDiscoveryFilter" && $0[1] == "method" && $0[2] == "a{sv}" })
        #expect(lines.contains { $0.count >= 3 && $0[0] == ".Discovering" && $0[1] == "property" && $0[2] == "b" })

        let objects = try await Self.runAsync(
            Self.busctl,
            [
                address, "--json=short", "call", "org.bluez", "/",
                "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"
            ])
        #expect(objects.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(objects.output.utf8)) as? [String: Any]
        #expect(json?["type"] as? String == "a{oa{sa{sv}}}")
        let data = (json?["data"] as? [Any])?.first as? [String: Any]
        let adapter = (data?["/org/bluez/hci0"] as? [String: Any])?["org.bluez.Adapter1"] as? [String: Any]
        #expect((adapter?["Address"] as? [String: Any])?["data"] as? String == "00:AA:01:00:00:01")
        #expect((adapter?["Powered"] as? [String: Any])?["type"] as? String == "b")
        _ = await fixture.stop()
    }

    static let script = """
        import sys, json, dbus, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        service, char_uuid = sys.argv[2], sys.argv[3]
        loop = GLib.MainLoop()
        out = {}
        waiting = ['device']
        def added(path, interfaces):
            if 'org.bluez.Device1' in interfaces and 'device' not in out:
                out['device'] = str(path); out['name'] = str(interfaces['org.bluez.Device1']['Name'])
                if waiting[0] == 'device': loop.quit()
        def changed(interface, props, invalidated, path=None):
            if interface == 'org.bluez.Device1' and props.get('ServicesResolved') and waiting[0] == 'resolved': loop.quit()
            if interface == 'org.bluez.GattCharacteristic1' and 'Value' in props:
                out['value'] = bytes(props['Value']).hex()
                if waiting[0] == 'value': loop.quit()
        bus.add_signal_receiver(added, 'InterfacesAdded', 'org.freedesktop.DBus.ObjectManager', 'org.bluez')
        bus.add_signal_receiver(changed, 'PropertiesChanged', 'org.freedesktop.DBus.Properties', 'org.bluez', path_keyword='path')
        GLib.timeout_add(120000, loop.quit)  # a guard against a hang only, never a verdict
        adapter = dbus.Interface(bus.get_object('org.bluez', '/org/bluez/hci0'), 'org.bluez.Adapter1')
        adapter.SetDiscoveryFilter({'Transport': 'le'})
        adapter.StartDiscovery()
        if 'device' not in out: loop.run()
        device = bus.get_object('org.bluez', out['device'])
        dbus.Interface(device, 'org.bluez.Device1').Connect()
        waiting[0] = 'resolved'
        if not dbus.Interface(device, 'org.freedesktop.DBus.Properties').Get('org.bluez.Device1', 'ServicesResolved'):
            loop.run()
        objects = dbus.Interface(bus.get_object('org.bluez', '/'), 'org.freedesktop.DBus.ObjectManager').GetManagedObjects()
        path = [p for p, i in objects.items() if i.get('org.bluez.GattCharacteristic1', {}).get('UUID') == char_uuid][0]
        char = objects[path]['org.bluez.GattCharacteristic1']
        out['char'] = str(path); out['flags'] = [str(f) for f in char['Flags']]
        out['service'] = str(objects[char['Service']]['org.bluez.GattService1']['UUID'])
        c = dbus.Interface(bus.get_object('org.bluez', path), 'org.bluez.GattCharacteristic1')
        c.StartNotify()
        waiting[0] = 'value'
        c.WriteValue(dbus.Array([0xEE], signature='y'), {'type': 'command'})
        if 'value' not in out: loop.run()
        print(json.dumps(out))
        """

    @Test(
        "dbus-python discovers with a filter, connects, finds the partial-flashing characteristic and gets a notification",
        .enabled(
            if: hasDBusPython, "/usr/bin/python3 with dbus and gi not installed: dbus-python reference check skipped"))
    func dbusPythonFlowWorks() async throws {
        let fixture = try await FakeBus.start([
            FakeBoard(board: try TestBoards.microbit(), name: "BBC micro:bit [tupit]")
        ])
        let result = try await Self.runAsync(
            Self.python,
            [
                "-c", Self.script, fixture.bus.address, PartialFlashingGATT.service.uuidString,
                TestBoards.pfCharacteristic
            ])
        #expect(result.status == 0)
        let out = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        #expect(out?["device"] as? String == TestBoards.devicePath("F0:0D:00:00:00:01"))
        #expect(out?["name"] as? String == "BBC micro:bit [tupit]")
        #expect(out?["service"] as? String == PartialFlashingGATT.service.uuidString)
        #expect(out?["flags"] as? [String] == ["write-without-response", "write", "notify"])
        #expect(out?["value"] as? String == "ee0101")
        _ = await fixture.stop()
    }
}
