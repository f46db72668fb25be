import Transport

/// McuMgr's SMP transport over GATT: one characteristic that takes requests as Write Without
/// Response and answers with notifications (Zephyr `subsys/mgmt/mcumgr/transport/src/smp_bt.c`;
/// docs/protocols/mcumgr-smp.md).
public enum SMPGATT {
    /// The SMP service's UUID.
    public static let service = BLEUUID("8d53dc1d-1db7-4cd3-868b-8a527460aa84")
    /// The SMP characteristic: requests in, responses out.
    public static let characteristic = GATTCharacteristic(
        service: service, characteristic: BLEUUID("da2e7828-fbce-4e01-ae9e-261174997c48"))
}
