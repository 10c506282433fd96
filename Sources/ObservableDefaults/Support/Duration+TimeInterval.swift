import Foundation

extension Duration {
    /// The duration in seconds, as Foundation's `Date` and timeouts take it.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
