import Foundation

// The `UserDefaults` spellings that ported code calls on its suite, mapped onto the file store, so code
// written for Apple platforms compiles once it says `DefaultsSuite` where it said `UserDefaults`.
extension DefaultsSuite {
    /// Opens the suite `suiteName` in ``defaultDirectory``, like `UserDefaults(suiteName:)`; `nil` or a blank
    /// name opens the standard suite's file. Returns `nil` where ``init(name:directory:)`` would throw
    /// (an invalid name, a directory that cannot be created); use that initializer to learn why.
    public convenience init?(suiteName: String?) {
        let trimmed = suiteName?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        do {
            try self.init(name: trimmed.isEmpty ? SuiteLocation.standardSuiteName() : trimmed)
        } catch {
            return nil
        }
    }

    /// Writes pending changes (``flush()``), then re-reads the file if another process changed it
    /// (``reload()``), like `UserDefaults.synchronize()`. Never needed for correctness: a `set` writes
    /// through and observers follow the file.
    /// - Returns: `false` when pending changes could not be written (the reason is on the error channel and
    ///   the changes stay pending).
    @discardableResult
    public func synchronize() -> Bool {
        let written: Bool
        do {
            try flush()
            written = true
        } catch {
            written = false
        }
        reload()
        return written
    }

    /// Removes every stored key of the suite `domainName` in this suite's directory (this suite itself when
    /// the names match), like `UserDefaults.removePersistentDomain(forName:)`. Registered defaults stay.
    /// An invalid name is reported on this suite's error channel.
    public func removePersistentDomain(forName domainName: String) {
        if domainName == name {
            removeAll()
            return
        }
        do {
            try DefaultsSuite(name: domainName, directory: fileURL.deletingLastPathComponent()).removeAll()
        } catch {
            storage.report(error)
        }
    }

    /// The name of `UserDefaults.didChangeNotification`, declared so ported code that posts or observes it
    /// compiles. A suite does not post it: observe a suite with ``observe(keys:prefix:scope:_:)`` or bind it to an
    /// `@ObservableDefaults` class, which follow every change without notifications.
    public static let didChangeNotification = Notification.Name("NSUserDefaultsDidChangeNotification")
}
