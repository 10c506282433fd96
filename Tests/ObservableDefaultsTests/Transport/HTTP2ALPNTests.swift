import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A TLS server that does not choose HTTP/2 with ALPN (an HTTP/1.1-only endpoint, e.g. a reverse proxy in
/// front of etcd's JSON gateway): the gRPC connection fails at once with a sentence naming what the server
/// chose and the transport that does work there, and leaves no descriptor open. The server is a real
/// `openssl s_server`.
@Suite(OpenSSLServer.required) struct HTTP2ALPNTests {
    static let transport = EtcdTransport(EtcdTLS(caFile: Fixtures.url("tls/ca.pem")))

    /// `http/1.1`: the server refuses the handshake (RFC 7301's alert no_application_protocol); none: it
    /// completes the handshake choosing no protocol.
    @Test(arguments: [
        ("http/1.1", "accepts none of the application protocols offered with ALPN (h2)"),
        (nil, "the TLS handshake did not select HTTP/2: the client offered ALPN h2 and the server chose no protocol")
    ])
    func aTLSServerThatDoesNotSpeakH2IsRefusedWithTheReasonAndTheWayOut(alpn: String?, reason: String) throws {
        let server = try OpenSSLServer(alpn: alpn, connections: 20)
        let before = HTTP2EtcdTests.openDescriptors()
        for _ in 0..<20 {
            do throws(EtcdHTTP.Failure) {
                let connection = try HTTP2Connection.open(
                    url: server.url, transport: Self.transport, deadline: .now + .seconds(20))
                connection.close()
                Issue.record("HTTP/2 over a TLS server that chose \(alpn ?? "nothing") connected")
            } catch {
                #expect(error.text.contains(reason), "\(error.text)")
                #expect(error.text.contains("so gRPC cannot be used there (`?transport=gateway`"), "\(error.text)")
                #expect(error.rejected, "a refusal, not a member to fail over from")
            }
        }
        // Other tests may open descriptors meanwhile: the 20 sockets must not all stay.
        #expect(
            eventually { HTTP2EtcdTests.openDescriptors() < before + 10 },
            "before \(before), now \(HTTP2EtcdTests.openDescriptors())")
    }
}

/// `openssl s_server` on a loopback port of its own choosing, with the test certificate
/// (`Fixtures/tls/server.pem`), selecting `alpn` (none: it ignores the client's ALPN), for `connections`
/// connections, one after the other (answered as HTTP/1.1, `-www`: without it, it ends each connection at
/// the end of its standard input); stopped by PID when released.
final class OpenSSLServer {
    static let installCommand = "apt-get install -y openssl"
    static let executable = ["/usr/bin", "/bin", "/usr/local/bin"]
        .map { URL(fileURLWithPath: $0).appendingPathComponent("openssl") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// The trait of tests that need `openssl`: skipped with the install command without it, except under
    /// `CI=true`, where they run and fail.
    static var required: ConditionTrait {
        .enabled(
            if: executable != nil || ProcessInfo.processInfo.environment["CI"] == "true",
            "openssl is not installed; install it with `\(installCommand)` to run the ALPN tests")
    }

    let url: URL
    private let process: Process
    /// Its standard output, kept open while it runs (a test counts the process's descriptors).
    private let output = Pipe()

    init(alpn: String?, connections: Int) throws {
        guard let executable = Self.executable else {
            throw EtcdTestError("openssl is not installed and CI=true requires the ALPN tests: \(Self.installCommand)")
        }
        process = Process()
        process.executableURL = executable
        process.arguments =
            [
                "s_server", "-accept", "127.0.0.1:0", "-naccept", String(connections), "-www",
                "-cert", Fixtures.url("tls/server.pem").path, "-key", Fixtures.url("tls/server-key.pem").path
            ] + (alpn.map { ["-alpn", $0] } ?? [])
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // It prints `ACCEPT 127.0.0.1:PORT` once it listens.
        let port = Locked<Int?>(nil)
        let reader = output.fileHandleForReading
        Thread.detachNewThread {
            var text = ""
            while port.withLock({ $0 }) == nil {
                let data = reader.availableData
                if data.isEmpty { return }
                text += String(decoding: data, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }),
                    let found = line.split(separator: ":").last.flatMap({ Int($0) })
                {
                    port.withLock { $0 = found }
                }
            }
        }
        guard eventually(timeout: .seconds(20), { port.withLock { $0 } != nil }), let port = port.withLock({ $0 })
        else {
            Self.stop(process)
            throw EtcdTestError("openssl s_server did not say which port it listens on within 20 s")
        }
        url = URL(string: "https://127.0.0.1:\(port)")!
    }

    private static func stop(_ process: Process) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { Self.stop(process) }
}
