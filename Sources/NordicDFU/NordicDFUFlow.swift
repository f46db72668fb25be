import FirmwareImage
import NordicDFUFrames
import Transport

/// A Nordic DFU of one board, whichever protocol it speaks: Secure DFU when the connection
/// shows the FE59 service, legacy DFU when it shows the micro:bit DFU control service or the
/// legacy bootloader. The application binary is cut from the board image at the start.
public struct NordicDFUFlow: FlowMachine {
    public typealias Output = NordicDFUResult
    public typealias Report = NordicDFUReport

    enum Inner: Sendable {
        case waiting
        case secure(SecureDFUFlow)
        case legacy(LegacyDFUFlow)
        case failed(NordicDFUError)
    }

    private var inner: Inner = .waiting
    private let application: Result<DFUApplication, NordicDFUError>
    private let options: NordicDFUOptions

    /// A DFU of the application in `image` (the board family's image from the file).
    public init(image: MemoryImage, family: ChipFamily, options: NordicDFUOptions = NordicDFUOptions()) {
        do {
            application = .success(try DFUApplication.cut(from: image, family: family))
        } catch let error as NordicDFUError {
            application = .failure(error)
        } catch {
            application = .failure(.noApplication(family: family))
        }
        self.options = options
    }

    public var outcome: Result<NordicDFUResult, any Error>? {
        switch inner {
        case .waiting: return nil
        case let .secure(f): return f.outcome
        case let .legacy(f): return f.outcome
        case let .failed(e): return .failure(e)
        }
    }

    public mutating func handle(_ event: FlowEvent, now: Duration) -> [FlowAction] {
        switch inner {
        case .waiting:
            guard case let .start(info) = event else { return [] }
            let app: DFUApplication
            switch application {
            case let .success(a): app = a
            case let .failure(e): inner = .failed(e); return [.finish]
            }
            guard let target = NordicDFUTarget(info) else { inner = .failed(.noDFUService); return [.finish] }
            if target.isSecure {
                var f = SecureDFUFlow(application: app, options: options)
                let actions = f.handle(event, now: now)
                inner = .secure(f)
                return actions
            }
            var f = LegacyDFUFlow(application: app, options: options)
            let actions = f.handle(event, now: now)
            inner = .legacy(f)
            return actions
        case var .secure(f):
            let actions = f.handle(event, now: now)
            inner = .secure(f)
            return actions
        case var .legacy(f):
            let actions = f.handle(event, now: now)
            inner = .legacy(f)
            return actions
        case .failed:
            return []
        }
    }
}
