import Foundation
import SystemFiles
import Testing

/// The POSIX file calls of SystemFiles on real files in a temporary folder.
struct SystemFileTests {
    let folder: String

    init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("systemfiles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        folder = url.path
    }

    func path(_ name: String) -> String { (folder as NSString).appendingPathComponent(name) }

    @Test("bytes written through a temporary file and renamed read back the same, with the permissions set")
    func temporaryFileRoundTrip() throws {
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let temporary = try SystemPaths.makeTemporary(prefix: path(".out.hex.bitflash-"))
        try temporary.file.writeAll(bytes)
        try temporary.file.setPermissions(0o640)
        try temporary.file.sync()
        try temporary.file.close()
        try SystemPaths.rename(temporary.path, to: path("out.hex"))
        let status = try FileStatus.of(path("out.hex"))
        #expect(status.kind == .regular && status.size == Int64(bytes.count) && status.permissions == 0o640)
        let reader = try SystemFile.open(path("out.hex"), flags: O_RDONLY)
        var read: [UInt8] = []
        while case let more = try reader.read(maximum: 4096), !more.isEmpty { read += more }
        #expect(read == bytes)
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
    }

    @Test("a link is seen as a link without following it, and its target is read; O_NOFOLLOW refuses it with ELOOP")
    func linksAreNotFollowed() throws {
        try Data("target\n".utf8).write(to: URL(fileURLWithPath: path("target.txt")))
        try FileManager.default.createSymbolicLink(atPath: path("link"), withDestinationPath: "target.txt")
        #expect(try FileStatus.of(path("link"), followingLinks: false).kind == .symbolicLink)
        #expect(try FileStatus.of(path("link")).kind == .regular)
        #expect(try FileStatus.of(path("link")).isSameFile(as: try FileStatus.of(path("target.txt"))))
        #expect(SystemPaths.linkTarget(path("link")) == "target.txt")
        #expect(SystemPaths.linkTarget(path("target.txt")) == nil)
        #expect(throws: SystemError(ELOOP)) { _ = try SystemFile.open(path("link"), flags: O_RDWR | O_NOFOLLOW) }
    }

    @Test("an exclusive lock held through one descriptor is refused through another until it is closed")
    func exclusiveLock() throws {
        let first = try SystemFile.open(path("bitflash.lock"), flags: O_RDWR | O_CREAT)
        let second = try SystemFile.open(path("bitflash.lock"), flags: O_RDWR)
        #expect(try first.tryLockExclusive())
        #expect(try !second.tryLockExclusive())
        try first.replaceContents(with: Array("4242\n".utf8))
        #expect(second.read(at: 0, maximum: 32) == Array("4242\n".utf8))
        try first.close()
        #expect(try second.tryLockExclusive())
    }

    @Test("a duplicate of a descriptor writes at its offset and leaves it open when closed")
    func duplicateDescriptor() throws {
        let file = try SystemFile.open(path("dup.txt"), flags: O_RDWR | O_CREAT | O_TRUNC)
        try file.writeAll(Array("one ".utf8))
        let copy = try SystemFile.duplicate(file.descriptor)
        try copy.writeAll(Array("two".utf8))
        try copy.close()
        try file.writeAll(Array(" three".utf8))
        try file.rewind()
        #expect(try file.read(maximum: 100) == Array("one two three".utf8))
    }

    @Test("a missing file fails with ENOENT")
    func missingFile() {
        #expect(throws: SystemError(ENOENT)) { _ = try FileStatus.of(path("nothing")) }
        #expect(throws: SystemError(ENOENT)) { _ = try SystemFile.open(path("nothing"), flags: O_RDONLY) }
    }
}
