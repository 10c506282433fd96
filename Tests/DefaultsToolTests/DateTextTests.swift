import Foundation
import Testing
@testable import defaults

/// `watch`'s time of day reads as a `DateFormatter` with `HH:mm:ss.SSS` printed it before.
struct DateTextTests {
    @Test func theTimeOfDayIsWhatADateFormatterPrints() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm:ss.SSS"
        var generator = SystemRandomNumberGenerator()
        let instants = [0, 0.0005, 0.999, 59.9999, 3_599.25, 86_399.999, 1_700_000_000.123, 1_790_000_000.0999]
            + (0..<500).map { _ in Double.random(in: 0 ..< 2_000_000_000, using: &generator) }
        for seconds in instants {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(defaults.DateText.timeOfDay(date) == formatter.string(from: date), "\(seconds)")
        }
    }
}
