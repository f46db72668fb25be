import DBus
import Testing
@testable import BlueZTransport
import Transport
import PartialFlashingFrames
import SMP

@Suite struct DeviceQueryTests {
    private func device(_ address: String, _ name: String?, adapter: String = "/org/bluez/hci0") -> BlueZDevice {
        var p: [String: DBusValue] = ["Address": .string(address)]
        if let name { p["Name"] = .string(name) }
        return BlueZDevice(path: BlueZDevice.path(adapter: adapter, address: address), properties: p)!
    }

    private var boards: [BlueZDevice] {
        [
            device("F0:0D:00:00:00:01", "BBC micro:bit [zotig]"), device("F0:0D:00:00:00:02", "BBC micro:bit [vavit]"),
            device("F0:0D:00:00:00:03", "Calliope mini [gapoz]"), device("F0:0D:00:00:00:04", nil)
        ]
    }

    @Test("an address matches in any case and with colons, dashes or underscores")
    func addresses() throws {
        for text in ["F0:0D:00:00:00:03", "f0:0d:00:00:00:03", "F0-0D-00-00-00-03", "f0_0d_00_00_00_03"] {
            #expect(try DeviceQuery(text).best(in: boards)?.address == "F0:0D:00:00:00:03", "\(text)")
        }
        #expect(try DeviceQuery("F0:0D:00:00:00:09").best(in: boards) == nil)
        #expect(try DeviceQuery("F0:0D:00:00:00:04").best(in: boards)?.name == nil)
    }

    @Test("a name matches whole, as the bracketed friendly name, or as a unique part")
    func names() throws {
        #expect(try DeviceQuery("bbc micro:bit [vavit]").best(in: boards)?.address == "F0:0D:00:00:00:02")
        #expect(try DeviceQuery("zotig").best(in: boards)?.address == "F0:0D:00:00:00:01")
        #expect(try DeviceQuery("Calliope").best(in: boards)?.address == "F0:0D:00:00:00:03")
        #expect(try DeviceQuery("nothing like it").best(in: boards) == nil)
    }

    @Test("a part of several names is ambiguous and lists the candidates")
    func ambiguous() {
        #expect(
            throws: BlueZError.ambiguousDevice(
                query: "micro:bit",
                matches: [
                    "BBC micro:bit [vavit] (F0:0D:00:00:00:02)", "BBC micro:bit [zotig] (F0:0D:00:00:00:01)"
                ])
        ) {
            try DeviceQuery("micro:bit").best(in: boards)
        }
    }

    @Test("an exact name wins over a partial match of another board")
    func exactBeatsPartial() throws {
        let list = boards + [device("F0:0D:00:00:00:05", "zotig")]
        #expect(try DeviceQuery("zotig").best(in: list)?.address == "F0:0D:00:00:00:05")
    }

    @Test("the same board seen through two adapters is one match")
    func twoAdapters() throws {
        let list = [
            device("F0:0D:00:00:00:01", "BBC micro:bit [zotig]"),
            device("F0:0D:00:00:00:01", "BBC micro:bit [zotig]", adapter: "/org/bluez/hci1")
        ]
        #expect(try DeviceQuery("zotig").best(in: list)?.address == "F0:0D:00:00:00:01")
    }

    @Test("the board kind is guessed from the name and the advertised services")
    func kindGuess() {
        var d = device("F0:0D:00:00:00:01", "BBC micro:bit [zotig]")
        #expect(d.boardKindGuess == "micro:bit")
        d.services = [PartialFlashingGATT.service, SMPGATT.service]
        #expect(d.boardKindGuess == "micro:bit with MCUboot (full updates)")
        #expect(device("F0:0D:00:00:00:03", "Calliope mini [gapoz]").boardKindGuess == "Calliope mini")
        #expect(device("F0:0D:00:00:00:04", "Thermostat").boardKindGuess == "unknown")
        #expect(!device("F0:0D:00:00:00:04", "Thermostat").looksFlashable)
    }
}
