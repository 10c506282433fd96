/// A value declared `Sendable` without the compiler's check, for values handed to another thread where the
/// code around them guarantees they are used safely.
///
/// Implementation detail of the macros; not API.
@usableFromInline
struct _DefaultsUnchecked<Wrapped>: @unchecked Sendable {
    @usableFromInline var wrapped: Wrapped
    @inlinable init(wrapped: Wrapped) { self.wrapped = wrapped }
}
