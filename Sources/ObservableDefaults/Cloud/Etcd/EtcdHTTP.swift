import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One blocking HTTP POST through `URLSession` (callers are the sync thread, never an actor).
enum EtcdHTTP {
    /// What came back: a status and body, or a transport failure (refused, reset, timed out).
    enum Outcome {
        case answer(status: Int, body: Data)
        case unreachable(String)
    }

    static func post(
        session: URLSession, url: URL, body: Data, headers: [String: String], timeout: TimeInterval
    ) -> Outcome {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        request.timeoutInterval = timeout
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let result = Locked<Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { data, response, error in
            let outcome: Outcome
            if let error {
                outcome = .unreachable(error.localizedDescription)
            } else if let response = response as? HTTPURLResponse {
                outcome = .answer(status: response.statusCode, body: data ?? Data())
            } else {
                outcome = .unreachable("no HTTP answer")
            }
            result.withLock { $0 = outcome }
            done.signal()
        }.resume()
        // URLSession enforces the timeout; the extra wait only guards against a lost completion.
        if done.wait(timeout: .now() + timeout + 5) == .timedOut { return .unreachable("no answer within \(timeout) s") }
        return result.withLock { $0 } ?? .unreachable("no answer")
    }
}
