import Foundation
import Testing
@testable import defaults

/// `watch`'s time of day reads as a `DateFormatter` with `HH:mm:ss.SSS` printed it before; `read`'s dates
/// read the same from the shared formatters as from one made per date, from any thread.
struct DateTextTests {
    @Test func theTimeOfDayIsWhatADateFormatterPrints() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm:ss.SSS"
        var generator = SystemRandomNumberGenerator()
        let instants =
            [0, 0.0005, 0.999, 59.9999, 3_599.25, 86_399.999, 1_700_000_000.123, 1_790_000_000.0999]
            + (0..<500).map { _ in Double.random(in: 0..<2_000_000_000, using: &generator) }
        for seconds in instants {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(defaults.DateText.timeOfDay(date) == formatter.string(from: date), "\(seconds)")
        }
    }

    @Test func humanDatesAreUTCWithMillisecondsOnlyWhenThereIsAFraction() {
        #expect(defaults.DateText.human(Date(timeIntervalSince1970: 1_714_566_600)) == "2024-05-01 12:30:00 +0000")
        #expect(
            defaults.DateText.human(Date(timeIntervalSince1970: 1_714_566_600.25)) == "2024-05-01 12:30:00.250 +0000")
        #expect(defaults.DateText.human(Date(timeIntervalSince1970: -1)) == "1969-12-31 23:59:59 +0000")
    }

    @Test func humanDatesFromManyThreadsAtOnceAreEachRight() async {
        let dates = (0..<2_000).map { Date(timeIntervalSince1970: 1_700_000_000 + Double($0) * 86_400.5) }
        let expected = dates.map { date -> String in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            let seconds = date.timeIntervalSince1970
            formatter.dateFormat =
                seconds == seconds.rounded(.down) ? "yyyy-MM-dd HH:mm:ss Z" : "yyyy-MM-dd HH:mm:ss.SSS Z"
            return formatter.string(from: date)
        }
        let results = await withTaskGroup(of: (Int, String).self) { group in
            for index in dates.indices { group.addTask { (index, defaults.DateText.human(dates[index])) } }
            var results = [String](repeating: "", count: dates.count)
            for await (index, text) in group { results[index] = text }
            return results
        }
        #expect(results == expected)
    }
}
