import Foundation
import Hummingbird
import Logging
import Synchronization

/// The class page's HTTP server (Hummingbird): the page, its script and style, the event stream
/// and the few requests the page makes. Every request passes `RequestGuard` first; every answer
/// forbids caching, framing and referrers.
public enum PageServer {
    /// Serves `room` on `address`:`port` (0: a free port) until the process is stopped.
    /// - Parameter running: called once the server listens, with the guard of this start (its
    ///   token and the hosts it answers to) and the port.
    public static func run(
        _ room: ClassRoom, address: String, port: Int, token: String,
        running: @escaping @Sendable (RequestGuard, Int) -> Void
    ) async throws {
        let checks = GuardBox()
        let router = Router()
        router.add(middleware: GuardMiddleware(checks: checks))
        routes(router, room: room)
        let app = Application(
            router: router, configuration: .init(address: .hostname(address, port: port), serverName: nil),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                let check = RequestGuard(token: token, address: address, port: bound)
                checks.value.withLock { $0 = check }
                running(check, bound)
            },
            // Its own lines are the command's: the server says only what goes wrong.
            logger: {
                var logger = Logger(label: "bitflash-serve"); logger.logLevel = .warning; return logger
            }())
        try await app.runService()
    }

    static func routes(_ router: Router<BasicRequestContext>, room: ClassRoom) {
        router.get("/") { request, _ in
            // The guard let the request through: its token is this start's.
            let token = request.uri.queryParameters["token"].map(String.init) ?? ""
            return text(PageHTML.page(token: token), type: "text/html; charset=utf-8")
        }
        router.get("/page.js") { _, _ in text(PageScript.source, type: "text/javascript; charset=utf-8") }
        router.get("/page.css") { _, _ in text(PageStyle.source, type: "text/css; charset=utf-8") }
        router.get("/api/state") { _, _ in json(PageMessage.state(await room.state()).json()) }
        router.get("/api/events") { _, _ in
            let stream = await room.listen()
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    for await text in stream { try await writer.write(ByteBuffer(string: text)) }
                    try await writer.finish(nil)
                })
        }
        router.post("/api/file") { request, _ in
            if let length = request.headers[.contentLength].flatMap(Int.init), length > FileCheck.largestUpload {
                return tooLarge(length)
            }
            let body: ByteBuffer
            do { body = try await request.body.collect(upTo: FileCheck.largestUpload) } catch {
                return tooLarge(nil)
            }
            let name = request.headers[.init("X-File-Name")!]?.removingPercentEncoding
            do {
                let summary = try await room.load(Array(buffer: body), name: name)
                return json(encode(summary))
            } catch let error as FileRefusal { return refusal(error.message) } catch { return refusal("\(error)") }
        }
        router.post("/api/estimate") { request, _ in
            let names = await boards(of: request)
            do {
                let words = try await room.estimate(names)
                return json(encode(["estimate": words ?? "one board: no class estimate"]))
            } catch let error as FileRefusal { return refusal(error.message) } catch { return refusal("\(error)") }
        }
        router.post("/api/start") { request, _ in
            let names = await boards(of: request)
            do {
                try await room.start(names)
                return json("{\"started\":\(names.count)}")
            } catch let error as FileRefusal { return refusal(error.message) } catch { return refusal("\(error)") }
        }
        router.post("/api/scan") { _, _ in
            await room.scan()
            return json(PageMessage.state(await room.state()).json())
        }
    }

    /// The board names of a request's JSON body (`{"boards": ["sim-1", …]}`); none when unreadable.
    static func boards(of request: Request) async -> [String] {
        struct Choice: Decodable { var boards: [String] }
        guard let body = try? await request.body.collect(upTo: 64 * 1024),
            let choice = try? JSONDecoder().decode(Choice.self, from: Data(buffer: body))
        else { return [] }
        return choice.boards
    }

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func text(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Self.text(text, type: "application/json", status: status)
    }

    /// 422 with `{"error": message}`: what the page shows in its refusal box.
    static func refusal(_ message: String) -> Response {
        json(encode(["error": message]), status: .unprocessableContent)
    }

    static func tooLarge(_ size: Int?) -> Response {
        json(
            encode([
                "error": "the file is \(size.map { "\($0) bytes" } ?? "larger than that"); no board takes a file "
                    + "larger than \(FileCheck.largestUpload) bytes"
            ]), status: .contentTooLarge)
    }
}

/// Refuses a request `RequestGuard` refuses (403, in words), and adds to every answer the headers
/// that keep the page to itself.
struct GuardMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let checks: GuardBox

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let token = request.uri.queryParameters["token"].map(String.init) ?? request.headers[PageServer.tokenHeader]
        let verdict =
            checks.value.withLock { $0 }?.check(
                host: request.head.authority, origin: request.headers[.origin], token: token)
            ?? .refuse("the server is starting")
        var response: Response
        switch verdict {
        case .allow: response = try await next(request, context)
        case let .refuse(reason):
            response = PageServer.text(reason + "\n", type: "text/plain; charset=utf-8", status: .forbidden)
        }
        response.headers[.cacheControl] = response.headers[.cacheControl] ?? "no-store"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("X-Frame-Options")!] = "DENY"
        response.headers[.init("Content-Security-Policy")!] =
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'"
        return response
    }
}

extension PageServer {
    /// The header a script sends the token in (the event stream sends it in the query instead).
    static let tokenHeader: HTTPFields.Element.Name = .init("X-Bitflash-Token")!
}

/// The guard of this start, known once the server listens (its port).
final class GuardBox: Sendable {
    let value = Mutex<RequestGuard?>(nil)
}
