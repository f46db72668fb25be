import PartialFlashingFrames
import SMP
import Transport

/// The names BlueZ uses on the system bus (`doc/org.bluez.*.rst`).
public enum BlueZNames {
    /// The bus name of bluetoothd.
    public static let service = "org.bluez"
    /// Where the object tree of adapters, devices and GATT attributes lives.
    public static let root = "/org/bluez"
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let gattService = "org.bluez.GattService1"
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    public static let agentManager = "org.bluez.AgentManager1"
    public static let agent = "org.bluez.Agent1"
    /// The error name prefix of bluetoothd's error replies (`src/error.c`).
    public static let errorPrefix = "org.bluez.Error."
}

/// Limits BlueZ and the ATT protocol guarantee; anything beyond them is a broken reply.
public enum BlueZLimits {
    /// The ATT MTU when none was exchanged (and the micro:bit's MTU).
    public static let defaultMTU = 23
    /// The largest ATT MTU BlueZ negotiates.
    public static let maximumMTU = 517
    /// The longest attribute value ATT allows (Core spec Vol 3 Part F 3.2.9).
    public static let maximumValueLength = 512
    /// The largest MTU a write can use: one attribute value plus the 3-byte ATT header.
    public static let usableMTU = maximumValueLength + 3
}

extension BlueZNames {
    /// The services bitflash looks for when scanning: partial flashing and McuMgr SMP.
    public static let flashingServices: [BLEUUID] = [PartialFlashingGATT.service, SMPGATT.service]
}
