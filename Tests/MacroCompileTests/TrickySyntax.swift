// Parser robustness: real sources using the macros with syntax the plugin's lexer and parser must handle.
// This target has no tests of its own; compiling it (`swift build --build-tests`) is the test.
import Foundation
import ObservableDefaults

enum Level: Int, Codable, Sendable { case low = 1, high = 2 }

/* A block comment /* nested */ with { braces } and "quotes" before the class. */
@ObservableDefaults(suiteName: "compile-tests.tricky", prefix: "t.")
final class TrickySettings {
    // A comment with { an unbalanced brace and a " quote
    var braces = "{ not a block } \" still a string"
    var multiLine = """
        line one { }
        "quoted" and \(1 + (2 * 3)) interpolated
        var notAProperty = 1
        """
    var raw = #"raw "string" with \(no) interpolation and { braces"#
    var rawInterpolated = #"value \#(40 + 2) and "quotes""#
    var nestedInterpolation = "outer \("inner \(String(repeating: ")", count: 2))") end"
    /* comment between members { */ var afterComment = 1 /* trailing } comment */
    var closure: [Int] = {
        var values = [1, 2, 3]
        values.append(4)
        return values.map { $0 * 2 }
    }()
    var multiLineInitializer = [
        "a": 1,
        "b": 2  // a comment inside
    ]
    var chained = "a,b,c"
        .split(separator: ",")
        .map(String.init)
    var ternary = ProcessInfo.processInfo.processorCount > 0 ? "yes" : "no"
    var nested: [String: [Int]] = ["x": [1, 2]]
    var generic: Array<Dictionary<String, Int>> = []
    var optionalGeneric: Optional<Array<Int>> = nil
    var level: Level = .high
    var levelOptional: Level? = .low
    var `default` = "backticked"
    var größe = 180
    var 名前 = "名前"
    public private(set) var restricted = 3
    private(set) var restricted2 = "x"
    @ObservableOnly var observed = [1, 2]
    @ObservableOnly var observedTyped: Int
    @Ignore var ignored = "ignored"
    @DefaultsKey(userDefaultsKey: "renamed.key") var keyed = 5
    @DefaultsBacked(userDefaultsKey: "backed-key") var backed = 6

    nonisolated(unsafe) static var shared = 0
    static let constant = "c"
    class var classComputed: Int { 1 }
    lazy var lazyValue = "lazy"
    let constantMember = 1
    var computed: Int { afterComment * 2 }
    var computedWithAccessors: Int {
        get { afterComment }
        set { afterComment = newValue }
    }

    var observedWithDidSet: Int = 0 {
        didSet { didSetCount += 1 }
    }
    @ObservableOnly var didSetCount = 0

    #if os(Linux)
        var linuxOnly = "linux"
    #else
        var otherOS = "other"
    #endif

    #if DEBUG_NEVER_SET
        var neverCompiled = 1
    #elseif os(Linux)
        var linuxElse = 2
    #endif

    struct Nested {
        var x = 1
        var y: String { "y" }
    }

    enum Mode: String, Codable { case a, b }
    var mode: Mode = .a

    init(observed value: Int) {
        self.observedTyped = value
        observerStarter()
    }

    func method() -> String { "\(braces) { }" }
}

@ObservableDefaults(suiteName: "compile-tests.generic")
final class GenericSettings<Value: Codable & Sendable> {
    var count = 0
    @ObservableOnly var value: Value?
    @Ignore var note = ""

    init(value: Value?) {
        self.value = value
        observerStarter()
    }
}

enum Outer {
    @ObservableDefaults(autoInit: true, suiteName: "compile-tests.nested", observeFirst: true)
    final class Inner {
        var onlyObserved = 1
        @DefaultsBacked var stored = "s"
        @DefaultsBacked(userDefaultsKey: "k") var storedWithKey = 2.5
    }
}

// User types that shadow library and Foundation names must not break generated code.
enum Shadowing {
    struct Notification {}
    struct Data {}
    struct URL {}
    struct DefaultsSuite {}
    struct Observation {}
    struct ObservationRegistrar {}
    struct Bool {}
    struct String {}
    struct PartialKeyPath {}

    @ObservableDefaults(suiteName: "compile-tests.shadowing")
    final class Settings {
        var name = "n"
        var flag = true
        var data = Foundation.Data()
        var url = Foundation.URL(string: "https://example.org")!
        var notification: Swift.String? = nil
    }
}

@MainActor
@ObservableDefaults(suiteName: "compile-tests.main")
final class MainActorSettings {
    var name = "m"
    var count: Int = 0 {
        willSet { print("will", newValue) }
        didSet(previous) { print("did", previous, count) }
    }
}

@ObservableDefaults(suiteName: "compile-tests.sendable")
public final class PublicSendableSettings: Sendable {
    public var name = "p"
    public var values: [Int] = []
}

// A non-final class and a subclass of it.
@ObservableDefaults(suiteName: "compile-tests.base")
class BaseSettings {
    var shared = "base"
    open class var kind: String { "base" }
}

final class DerivedSettings: BaseSettings {
    var extra = 1
    override class var kind: String { "derived" }
}

func useDerived() -> String {
    let settings = DerivedSettings(prefix: "derived.")
    settings.shared = "changed"
    return settings.shared + DerivedSettings.kind
}

// Accessor attributes, effects and `nonisolated` members next to persisted ones.
@ObservableDefaults(suiteName: "compile-tests.members")
final class MemberVariety: Sendable {
    var a = 1; var b = "two"
    nonisolated var computedNonisolated: Int { 3 }
    var getterWithAttribute: Int {
        @inline(__always) get { 4 }
    }
    var throwing: Int {
        get throws { 5 }
    }
    subscript(index: Int) -> Int { index }
    typealias Alias = [String: [Int]]
    var aliased: Alias = [:]
    var tuple: [String] = ["(", ")", "{", "}"]
    var regexLike = "a/b/c"  // not a regex literal
    deinit {}
}
