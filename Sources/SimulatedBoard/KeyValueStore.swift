import Diagnostics
import FirmwareImage

/// The runtime's persistent key-value store, kept byte for byte in its own flash page as the
/// runtime keeps it. `flashIncomplete` and `RebootMode` live here, so they survive whatever
/// leaves that page alone: a reset, a partial flash, a Nordic DFU (whose bootloaders keep the
/// pages above the application), an MCUboot swap (which touches only its slots).
///
/// Where and how, from the runtimes' sources:
/// - CODAL (micro:bit V2, Calliope mini 3): the page `MICROBIT_STORAGE_PAGE` = bootloader − 3
///   pages = 0x74000 (codal-microbit-v2 `inc/MicroBitConfig.h`; `model/MicroBit.cpp` builds
///   `storage(internalFlash)` on it). codal-core `KeyValueStorage`: a header {u32 magic
///   0xC0DA1, u32 count}, then `count` pairs of a 16-byte NUL-terminated key and a 32-byte
///   value; at most 5 pairs (`KEY_VALUE_STORAGE_MAX_PAIRS`: a 6th `put` fails and writes
///   nothing). Every change copies the pairs into a zeroed 256-byte RAM scratch buffer, erases
///   the page and writes the buffer back (`put`, `remove`, `size`, `scratchReset`).
/// - DAL (micro:bit V1, Calliope mini 1/2): the page flash pages − 17 = 0x3BC00 on a 256 KiB
///   part (microbit-dal `inc/drivers/MicroBitStorage.h` `MICROBIT_STORAGE_STORE_PAGE_OFFSET`),
///   header {u32 magic 0xCAFE, u32 size}, the same 48-byte pairs, as many as fit the page;
///   every change goes through the flash scratch page pages − 19 = 0x3B400 (erase it, copy the
///   header and pairs there, erase the store page, copy back: `MicroBitStorage::put`, `remove`).
/// - Both: a `put` of a key that holds the same value writes nothing; reading the store when
///   the page has no magic first initialises it empty (`size()`), which every boot does when
///   it looks for `RebootMode` and `flashIncomplete`.
///
/// Not modelled: CODAL's page rewrite is not power-fail safe (a reset between its erase and its
/// write loses every key); here a change is one step. The bytes of a key or value past what
/// was stored are whatever the runtime's buffer held (CODAL's `put` pair is uninitialised);
/// here they are zeros.
public struct KeyValueStore: Sendable, Equatable {
    public let runtime: BoardRuntime
    /// The store's page.
    public let page: UInt32
    /// DAL's flash scratch page (nil on CODAL, whose scratch is in RAM).
    public let scratchPage: UInt32?
    let pageSize: UInt32

    static let keySize = 16, valueSize = 32, pairSize = 48, headerSize = 8
    static let codalMagic: UInt32 = 0xC0DA1, dalMagic: UInt32 = 0xCAFE
    static let codalMaximumPairs = 5, codalScratchBytes = 256

    public init(runtime: BoardRuntime, layout: MemoryLayout) {
        self.runtime = runtime
        pageSize = layout.pageSize
        switch runtime {
        case .codal:
            page = layout.bootloaderStart - 3 * layout.pageSize
            scratchPage = nil
        case .dal:
            let pages = layout.flashSize / layout.pageSize
            page = (pages - 17) * layout.pageSize
            scratchPage = (pages - 19) * layout.pageSize
        }
    }

    var magic: UInt32 { runtime == .codal ? Self.codalMagic : Self.dalMagic }
    var capacity: Int { runtime == .codal ? Self.codalMaximumPairs : (Int(pageSize) - Self.headerSize) / Self.pairSize }

    /// The pairs the page holds, in order (empty when the page holds no store). Reads only.
    public func pairs(in flash: FlashMemory) -> [(key: String, value: [UInt8])] {
        guard let header = try? flash.read(page..<(page + 8)), (try? LEBytes.u32(header, 0)) == magic,
            let stored = try? LEBytes.u32(header, 4)
        else { return [] }
        let count = min(Int(stored), capacity)
        return (0..<count).compactMap { i in
            let at = page + UInt32(Self.headerSize + i * Self.pairSize)
            guard let pair = try? flash.read(at..<(at + UInt32(Self.pairSize))) else { return nil }
            let keyBytes = pair[0..<Self.keySize].prefix { $0 != 0 }
            return (String(decoding: keyBytes, as: UTF8.self), Array(pair[Self.keySize...]))
        }
    }

    /// The value of `key` (32 bytes), initialising an empty store first as the runtime's `get` does.
    public func get(_ key: String, flash: inout FlashMemory) -> [UInt8]? {
        initialiseIfNeeded(&flash)
        return pairs(in: flash).first { $0.key == key }?.value
    }

    /// Stores `value` under `key`. False when the key or value is too long or the store is full
    /// (nothing is written then), as the runtime's `put` refuses them.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8], flash: inout FlashMemory) -> Bool {
        let keyBytes = Array(key.utf8)
        guard keyBytes.count + 1 <= Self.keySize, value.count <= Self.valueSize else { return false }
        initialiseIfNeeded(&flash)
        var pairs = self.pairs(in: flash)
        let stored =
            (keyBytes + [UInt8](repeating: 0, count: Self.keySize - keyBytes.count))
            + value + [UInt8](repeating: 0, count: Self.valueSize - value.count)
        if let i = pairs.firstIndex(where: { $0.key == key }) {
            if Array(pairs[i].value.prefix(value.count)) == value { return true }
            pairs[i].value = Array(stored[Self.keySize...])
        } else {
            guard pairs.count < capacity else { return false }
            pairs.append((key, Array(stored[Self.keySize...])))
        }
        rewrite(pairs, flash: &flash, wordsAfterHeader: pairs.count)
        return true
    }

    /// Removes `key`; nothing is written when it is not there.
    public func remove(_ key: String, flash: inout FlashMemory) {
        initialiseIfNeeded(&flash)
        let pairs = self.pairs(in: flash)
        guard let i = pairs.firstIndex(where: { $0.key == key }) else { return }
        var kept = pairs
        kept.remove(at: i)
        // Both runtimes copy back as many pairs as there were before (the last slot then holds
        // what the scratch held there: zeros in CODAL's buffer, erased flash in DAL's page).
        rewrite(kept, flash: &flash, wordsAfterHeader: pairs.count)
    }

    // MARK: - The runtime's page writes

    /// `size()`: a page without the magic becomes an empty store.
    func initialiseIfNeeded(_ flash: inout FlashMemory) {
        guard let header = try? flash.read(page..<(page + 8)), (try? LEBytes.u32(header, 0)) != magic else { return }
        rewrite([], flash: &flash, wordsAfterHeader: 0)
    }

    /// The header and `pairs`, written as the runtime writes them: CODAL erases the page and
    /// burns its zeroed RAM scratch (the whole 256 bytes for a `put` or an empty store, the
    /// header and `wordsAfterHeader` pairs for a `remove`); DAL erases its flash scratch page,
    /// writes the header and pairs there, erases the store page and copies them back.
    private func rewrite(
        _ pairs: [(key: String, value: [UInt8])], flash: inout FlashMemory, wordsAfterHeader slots: Int
    ) {
        var bytes = LEBytes.bytes(magic) + LEBytes.bytes(UInt32(pairs.count))
        for p in pairs {
            let k = Array(p.key.utf8)
            bytes += k + [UInt8](repeating: 0, count: Self.keySize - k.count) + p.value
        }
        switch runtime {
        case .codal:
            let length = slots > pairs.count ? Self.headerSize + slots * Self.pairSize : Self.codalScratchBytes
            bytes += [UInt8](repeating: 0, count: max(0, min(length, Self.codalScratchBytes) - bytes.count))
            flash.eraseForStorage(pageAt: page)
            flash.writeForStorage(bytes, at: page)
        case .dal:
            guard let scratch = scratchPage else { return }
            flash.eraseForStorage(pageAt: scratch)
            flash.writeForStorage(bytes, at: scratch)
            let copied =
                (try? flash.read(
                    scratch..<(scratch + UInt32(Self.headerSize + max(slots, pairs.count) * Self.pairSize)))) ?? bytes
            flash.eraseForStorage(pageAt: page)
            flash.writeForStorage(copied, at: page)
        }
    }
}
