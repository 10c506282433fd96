import Foundation

/// Human-readable numbers for the Markdown table.
enum Formatting {
    static func value(_ value: Double, _ unit: MetricUnit) -> String {
        switch unit {
        case .nanoseconds: duration(value)
        case .bytes: bytes(value)
        case .perSecond: grouped(value) + "/s"
        case .count: grouped(value)
        }
    }

    static func duration(_ nanoseconds: Double) -> String {
        switch abs(nanoseconds) {
        case ..<10: String(format: "%.2f ns", nanoseconds)
        case ..<1_000: String(format: "%.1f ns", nanoseconds)
        case ..<1_000_000: String(format: "%.2f µs", nanoseconds / 1_000)
        case ..<1_000_000_000: String(format: "%.2f ms", nanoseconds / 1_000_000)
        default: String(format: "%.2f s", nanoseconds / 1_000_000_000)
        }
    }

    static func bytes(_ bytes: Double) -> String {
        switch abs(bytes) {
        case ..<1024: String(format: "%.0f B", bytes)
        case ..<(1024 * 1024): String(format: "%.1f KiB", bytes / 1024)
        default: String(format: "%.1f MiB", bytes / (1024 * 1024))
        }
    }

    static func grouped(_ value: Double) -> String {
        let rounded = Int(value.rounded())
        let digits = String(abs(rounded))
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return (rounded < 0 ? "-" : "") + result
    }

    static func ratio(_ value: Double) -> String {
        value >= 100
            ? String(format: "%.0f×", value)
            : value >= 10 ? String(format: "%.1f×", value) : String(format: "%.2f×", value)
    }
}
