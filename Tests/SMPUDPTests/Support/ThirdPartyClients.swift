import Foundation
import TestSupport

/// The third-party SMP clients the interop tests drive, through small Python helpers that
/// print the slot list they received as one `SLOTS <json>` line.
enum ThirdPartyClients {
    static let python = ExternalProcess.onPath("python3")

    /// True when `python3 -c "import <module>"` works.
    static func hasModule(_ module: String) -> Bool {
        guard let python else { return false }
        let p = Process()
        p.executableURL = python
        p.arguments = ["-c", "import \(module)"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    static let smpmgrAvailable = hasModule("smpmgr.main")
    static let toolkitAvailable = hasModule("mcumgr_toolkit")

    /// Runs smpmgr's own command line (`smpmgr --ip HOST ARGS…`) in-process, with the UDP port
    /// smpmgr hard-codes (1337) replaced by `port`, then parses what `image state-read` printed
    /// (pydantic `ImageState` lines: `ImageState(slot=0, version='1.0.0', image=0, hash=HashBytes('5D8D…'), … active=True, …)`).
    static let smpmgrScript = #"""
        import ast, contextlib, io, json, re, sys
        import smpclient.transport.udp as udp
        port = int(sys.argv[1])
        defaults = list(udp.SMPUDPTransport.connect.__defaults__)
        defaults[-1] = port
        udp.SMPUDPTransport.connect.__defaults__ = tuple(defaults)
        from smpmgr.main import app
        buf = io.StringIO()
        code = 0
        sys.argv = ["smpmgr"] + sys.argv[2:]
        with contextlib.redirect_stdout(buf):
            try:
                app()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        text = buf.getvalue()
        print(text)
        slots = []
        for line in text.splitlines():
            slot = re.search(r"\bslot=(\d+)", line)
            if not slot or "hash=" not in line:
                continue
            flag = lambda k: re.search(r"\b" + k + r"=True\b", line) is not None
            h = re.search(r"hash=HashBytes\('([0-9A-Fa-f]*)'\)", line)
            if h:
                digest = h.group(1).lower()
            else:
                raw = re.search(r"hash=(b'(?:[^'\\]|\\.)*'|b\"(?:[^\"\\]|\\.)*\")", line)
                digest = ast.literal_eval(raw.group(1)).hex() if raw else ""
            slots.append({"slot": int(slot.group(1)), "hash": digest, "active": flag("active"), "confirmed": flag("confirmed"),
                          "pending": flag("pending"), "permanent": flag("permanent")})
        if slots:
            print("SLOTS " + json.dumps(slots))
        sys.exit(code)
        """#

    /// Drives mcumgr-toolkit's UDP client: ACTION is state, upload FILE, test HASH, confirm, reset,
    /// or update FILE (its own `firmware_update`); prints the slot list afterwards (not after reset).
    static let toolkitScript = #"""
        import json, sys
        from mcumgr_toolkit import MCUmgrClient
        host, port, action = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        client = MCUmgrClient.udp(host, port, timeout_ms=3000)
        if action == "upload":
            client.image_upload(open(sys.argv[4], "rb").read())
        elif action == "test":
            client.image_set_state(hash=bytes.fromhex(sys.argv[4]), confirm=False)
        elif action == "confirm":
            client.image_set_state(confirm=True)
        elif action == "reset":
            client.os_system_reset()
            sys.exit(0)
        elif action == "update":
            client.firmware_update(open(sys.argv[4], "rb").read())
            sys.exit(0)
        params = client.os_mcumgr_parameters()
        print(f"buf_size={params.buf_size} buf_count={params.buf_count}")
        slots = [{"slot": s.slot, "hash": s.hash.hex() if s.hash else "", "active": s.active, "confirmed": s.confirmed,
                  "pending": s.pending, "permanent": s.permanent} for s in client.image_get_state()]
        print("SLOTS " + json.dumps(slots))
        """#

    static let environment = ["COLUMNS": "1000", "NO_COLOR": "1", "TERM": "dumb", "PYTHONUNBUFFERED": "1"]

    /// smpmgr with `arguments` against 127.0.0.1:`port`.
    static func smpmgr(port: Int, _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String)
    {
        try await ExternalProcess.run(
            python!, ["-c", smpmgrScript, String(port), "--ip", "127.0.0.1", "--timeout", "5"] + arguments,
            timeout: .seconds(300), environment: environment)
    }

    /// mcumgr-toolkit doing `action` against 127.0.0.1:`port`.
    static func toolkit(port: Int, _ action: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ExternalProcess.run(
            python!, ["-c", toolkitScript, "127.0.0.1", String(port)] + action,
            timeout: .seconds(300), environment: environment)
    }
}
