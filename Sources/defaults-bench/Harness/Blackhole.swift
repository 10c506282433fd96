/// Keeps benchmark results alive so the optimizer cannot remove the work that produced them.
///
/// Every measured body returns a checksum derived from what it read or wrote; the harness folds the
/// checksums into ``Blackhole/total``, which the report prints. A result that is printed cannot be
/// proven unused, so the loops that compute it stay.
enum Blackhole {
    nonisolated(unsafe) private static var accumulator: Int = 0

    /// Folds `value` into the printed total.
    @inline(never)
    static func consume(_ value: Int) {
        accumulator = accumulator &* 31 &+ value
    }

    /// The folded checksum of everything measured (printed in the report footer).
    static var total: Int { accumulator }
}

/// Returns its argument through a call the optimizer cannot see through, so a value known at compile
/// time (a key, an object) is not constant-folded into the measured loop.
@inline(never)
func opaque<T>(_ value: T) -> T { value }
