import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// What reads an XML property list the way tests compare against: the library's reader, and Foundation's.
enum XMLPlist {
    static let fileURL = URL(fileURLWithPath: "/tmp/x.plist")

    /// A suite document whose one member `v` is `element`.
    static func member(_ element: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t\(element)\n</dict>\n</plist>\n"
    }

    /// The library's reading of a suite file.
    static func ours(_ data: Data) throws(DefaultsError) -> [String: DefaultsValue] {
        try SuiteFormat.propertyList.decodeSuite(data, fileURL: fileURL)
    }

    /// Foundation's reading, converted to the value model; `nil` when Foundation rejects the document.
    static func foundations(_ data: Data) -> [String: DefaultsValue]? {
        guard let object = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
            case .dictionary(let dictionary)? = DefaultsValue(any: object)
        else { return nil }
        return dictionary
    }
}

/// Every form of XML property list Apple's tools write or Foundation reads as valid reads with the
/// library's own reader, to the value Foundation reads (where Foundation reads it).
@Suite struct XMLPropertyListAcceptedFormsTests {
    static let sameAsFoundation: [(element: String, expected: DefaultsValue)] = [
        ("<integer>0x1F</integer>", .integer(31)),
        ("<integer>0X1f</integer>", .integer(31)),
        ("<integer>-0x10</integer>", .integer(-16)),
        ("<integer>+5</integer>", .integer(5)),
        ("<integer>007</integer>", .integer(7)),
        ("<integer>-9223372036854775808</integer>", .integer(.min)),
        ("<integer>0x7FFFFFFFFFFFFFFF</integer>", .integer(.max)),
        ("<real>5</real>", .double(5)),
        ("<real>.5</real>", .double(0.5)),
        ("<real>5.</real>", .double(5)),
        ("<real>+5</real>", .double(5)),
        ("<real>-1.5E-3</real>", .double(-0.0015)),
        ("<real>1e5</real>", .double(100_000)),
        ("<real>inf</real>", .double(.infinity)),
        ("<real>+inf</real>", .double(.infinity)),
        ("<real>-inf</real>", .double(-.infinity)),
        ("<real>Infinity</real>", .double(.infinity)),
        ("<real>-infinity</real>", .double(-.infinity)),
        ("<real>INF</real>", .double(.infinity)),
        ("<real>NaN</real>", .double(.nan)),
        ("<date>2024-02-29T12:00:00Z</date>", .date(Date(timeIntervalSince1970: 1_709_208_000))),
        ("<date>2016-12-31T23:59:60Z</date>", .date(Date(timeIntervalSince1970: 1_483_228_800))),
        ("<date>1066-10-14T09:00:00Z</date>", .date(Date(timeIntervalSince1970: -28_502_722_800))),
        ("<date>0001-01-01T00:00:00Z</date>", .date(Date(timeIntervalSince1970: -62_135_596_800))),
        ("<string><![CDATA[a<b & c]]></string>", .string("a<b & c")),
        ("<string>x<![CDATA[<y>]]>z&amp;</string>", .string("x<y>z&")),
        ("<string>a\r\nb\rc</string>", .string("a\r\nb\rc")),
        ("<string>a&#13;b&#x1F600;&#233;</string>", .string("a\rb😀é")),
        ("<string>&lt;&gt;&amp;&quot;&apos;</string>", .string("<>&\"'")),
        ("<string>  kept \t spaces  </string>", .string("  kept \t spaces  ")),
        ("<string>]]></string>", .string("]]>")),
        ("<string>a\u{1}\u{0}\u{1F}<![CDATA[\u{7F}\u{2}]]></string>", .string("a\u{1}\u{0}\u{1F}\u{7F}\u{2}")),
        ("<string></string >", .string("")),
        ("<string note=\"x\" other='y'>z</string>", .string("z")),
        ("<true></true>", .bool(true)),
        ("<true />", .bool(true)),
        ("<false/>", .bool(false)),
        ("<data></data>", .data(Data())),
        ("<data>\n\t\tAAEC\n\t\tAw==\n\t</data>", .data(Data([0, 1, 2, 3]))),
        ("<dict/>", .dictionary([:])),
        ("<array/>", .array([])),
        ("<dict ><key><![CDATA[k]]></key><integer>1</integer></dict >", .dictionary(["k": .integer(1)])),
        (
            "<array><!-- c --><integer>1</integer><?pi x?>\n<!-- d --><real>2</real></array>",
            .array([.integer(1), .double(2)])
        )
    ]

    @Test(arguments: sameAsFoundation)
    func aValueFormReadsAsFoundationReadsIt(element: String, expected: DefaultsValue) throws {
        let data = Data(XMLPlist.member(element).utf8)
        #expect(try XMLPlist.ours(data) == ["v": expected])
        #expect(XMLPlist.foundations(data) == ["v": expected], "Foundation differs on \(element)")
    }

    /// Forms Foundation rejects but XML allows (or that are unambiguous), read as the person meant them.
    @Test(arguments: [
        ("<string>a<!-- c -->b<?pi x?>c</string>", DefaultsValue.string("abc")),
        ("<data/>", .data(Data())),
        ("<date>-0044-03-15T12:00:00Z</date>", .date(Date(timeIntervalSince1970: -63_549_316_800)))
    ])
    func aFormFoundationRejectsReadsAsWritten(element: String, expected: DefaultsValue) throws {
        #expect(try XMLPlist.ours(Data(XMLPlist.member(element).utf8))["v"] == expected)
    }

    @Test func anEmptyKeyElementIsTheEmptyKey() throws {
        let text = "<plist><dict><key/><string>empty key</string><key>w</key><string/></dict></plist>"
        #expect(try XMLPlist.ours(Data(text.utf8)) == ["": .string("empty key"), "w": .string("")])
    }

    /// A date in the writer's form reads back as the date written, also before year 1 and after 9999's
    /// start (the writer's range).
    @Test func datesTheWriterWritesReadBack() throws {
        for seconds in [-377_705_116_800.0, -63_517_204_800, -62_135_596_801, 0, 1_714_566_600, 253_402_300_799] {
            let date = Date(timeIntervalSince1970: seconds)
            let text = XMLPlist.member("<date>\(ISO8601Text.secondString(for: date))</date>")
            #expect(try XMLPlist.ours(Data(text.utf8))["v"] == .date(date), "\(text)")
        }
    }

    /// Document-level forms: prolog variants, comments and processing instructions between elements, line
    /// ends, byte-order marks and UTF-16, a bare root element.
    @Test(arguments: [
        "<dict><key>v</key><string>é😀</string></dict>",
        "<?xml version='1.0' encoding='utf-8' standalone=\"yes\"?>\n<plist><dict><key>v</key><string>é😀</string></dict></plist>",
        "<?xml version=\"1.0\"?><!-- a --><?xml-stylesheet href=\"a\"?><!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\"><!-- b --><plist version = '1.0' ><!-- c --><dict><!-- d --><key>v</key><!-- e --><string>é😀</string><!-- f --></dict><!-- g --></plist><!-- h -->\n",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<plist version=\"1.0\">\r\n<dict>\r\n\t<key>v</key>\r\n\t<string>é😀</string>\r\n</dict>\r\n</plist>\r\n",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r<plist version=\"1.0\">\r<dict>\r\t<key>v</key>\r\t<string>é😀</string>\r</dict>\r</plist>\r",
        "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>v</key><string>é😀</string></dict></plist>",
        "<plist\nversion=\"1.0\"\n><dict\n><key\n>v</key\n><string\n>é😀</string\n></dict\n></plist\n>"
    ])
    func aDocumentFormReadsAsFoundationReadsIt(text: String) throws {
        let data = Data(text.utf8)
        #expect(try XMLPlist.ours(data) == ["v": .string("é😀")])
        #expect(XMLPlist.foundations(data) == ["v": .string("é😀")])
    }

    @Test(arguments: [true, false])
    func utf16WithAByteOrderMarkReads(bigEndian: Bool) throws {
        let text =
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<plist version=\"1.0\"><dict><key>v</key><string>é😀</string></dict></plist>\n"
        var data = Data(bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE])
        data.append(text.data(using: bigEndian ? .utf16BigEndian : .utf16LittleEndian)!)
        #expect(try XMLPlist.ours(data) == ["v": .string("é😀")])
        #expect(XMLPlist.foundations(data) == ["v": .string("é😀")])
    }

    /// Errors in a UTF-16 file name the line and column in characters, as in UTF-8.
    @Test func utf16ErrorsNameLineAndColumn() throws {
        let text = "<plist version=\"1.0\">\n<dict><key>é😀</key><integer>x</integer></dict></plist>\n"
        var data = Data([0xFF, 0xFE])
        data.append(text.data(using: .utf16LittleEndian)!)
        let error = try #require(throws: DefaultsError.self) { try XMLPlist.ours(data) }
        #expect((error.line, error.column) == (2, 29), "\(error)")
        #expect(error.message.hasPrefix("expected a digit in <integer>, found 'x'"))
    }
}

/// Every XML error names its line and column and says what was expected; the cases are the mistakes a
/// person editing a file by hand makes, and the values Foundation would misread.
@Suite struct XMLPropertyListErrorTests {
    /// The error for `element` as the value of `v` on line 5 (after a tab: column 2).
    static let valueErrors: [(element: String, column: Int, message: String)] = [
        (
            "<integer> 5 </integer>", 11,
            "expected a digit in <integer>, found ' ' (a decimal integer such as -42, or a hexadecimal one such as 0x2A)"
        ),
        (
            "<integer>5.0</integer>", 12,
            "expected a digit in <integer>, found '.0' (a decimal integer such as -42, or a hexadecimal one such as 0x2A)"
        ),
        (
            "<integer></integer>", 11,
            "empty <integer>: expected a decimal integer such as -42, or a hexadecimal one such as 0x2A"
        ),
        (
            "<integer/>", 2,
            "empty <integer/>: expected a decimal integer such as -42, or a hexadecimal one such as 0x2A"
        ),
        ("<integer>0x</integer>", 13, "expected a hexadecimal digit in <integer>, found '</integer>'"),
        (
            "<integer>0xFFFFFFFFFFFFFFFF</integer>", 11,
            "the integer 0xFFFFFFFFFFFFFFFF does not fit in 64 bits (from -9223372036854775808 to 9223372036854775807)"
        ),
        (
            "<integer>5<!-- c --></integer>", 12,
            "expected '</integer>' after a decimal integer such as -42, or a hexadecimal one such as 0x2A, found '<!-- c -->'"
        ),
        ("<real>1,5</real>", 8, "'1,5' is not a real: expected a number such as 2.5, -1e-3 or 5, or nan, inf, -inf"),
        ("<real>-nan</real>", 8, "'-nan' is not a real: expected a number such as 2.5, -1e-3 or 5, or nan, inf, -inf"),
        ("<real>0x10</real>", 8, "'0x10' is not a real: expected a number such as 2.5, -1e-3 or 5, or nan, inf, -inf"),
        ("<real></real>", 8, "empty <real>: expected a number such as 2.5, -1e-3 or 5, or nan, inf, -inf"),
        (
            "<date>2024-01-01</date>", 8,
            "'2024-01-01' is not a date: expected a date in the form YYYY-MM-DDTHH:MM:SSZ (UTC, whole seconds)"
        ),
        (
            "<date>2024-01-01T00:00:00.5Z</date>", 8,
            "'2024-01-01T00:00:00.5Z' is not a date: expected a date in the form YYYY-MM-DDTHH:MM:SSZ (UTC, whole seconds)"
        ),
        (
            "<date>12345-01-01T00:00:00Z</date>", 8,
            "'12345-01-01T00:00:00Z' is not a date: expected a date in the form YYYY-MM-DDTHH:MM:SSZ (UTC, whole seconds)"
        ),
        (
            "<date>2024-04-31T00:00:00Z</date>", 8,
            "'2024-04-31T00:00:00Z' is not a date: expected YYYY-MM-DDTHH:MM:SSZ with a month from 01 to 12, a day that month has, hours to 23, minutes and seconds to 59"
        ),
        (
            "<data>A</data>", 8,
            "the <data> element is not base64 (letters, digits, '+', '/', and '=' padding to a multiple of 4 characters)"
        ),
        (
            "<string>&nbsp;</string>", 10,
            "unknown entity '&nbsp;': expected &lt; &gt; &amp; &quot; &apos; or a character reference such as &#233; or &#xE9;"
        ),
        (
            "<string>a & b</string>", 12,
            "'&' does not start an entity or character reference ended by ';': write '&amp;' for a '&' in text"
        ),
        (
            "<string>&#xD800;</string>", 10,
            "character reference '&#xD800;' is not a character XML allows (expected U+9, U+A, U+D, U+20–U+D7FF, U+E000–U+FFFD or U+10000–U+10FFFF)"
        ),
        (
            "<string>&#0;</string>", 10,
            "character reference '&#0;' is not a character XML allows (expected U+9, U+A, U+D, U+20–U+D7FF, U+E000–U+FFFD or U+10000–U+10FFFF)"
        ),
        (
            "<string>&#xZZ;</string>", 10,
            "'&#xZZ;' is not a character reference: expected decimal digits after '&#' or hexadecimal digits after '&#x'"
        ),
        (
            "<string>a<b>c</b></string>", 11,
            "expected text or '</string>' in a <string>, found '<b>' (write '&lt;' for a '<' in text)"
        ),
        ("<string>x</strin>", 11, "expected '</string>' to close the <string>, found '</strin>'"),
        ("<string><![CDATA[x</string>", 10, "unterminated CDATA section: expected ']]>', found end of file"),
        ("<true>x</true>", 8, "expected '</true>' (it holds nothing; <true/> is the usual form), found 'x'"),
        (
            "<foo/>", 2,
            "expected a value (<string>, <integer>, <real>, <true/>, <false/>, <date>, <data>, <array> or <dict>) for the key 'v', found '<foo/>'"
        ),
        (
            "<String>x</String>", 2,
            "expected a value (<string>, <integer>, <real>, <true/>, <false/>, <date>, <data>, <array> or <dict>) for the key 'v', found '<String>'"
        ),
        (
            "<array><key>a</key></array>", 9,
            "expected a value in an <array>, found '<key>' (a <key> stands only in a <dict>, before its value)"
        ),
        ("<dict><string>x</string></dict>", 8, "expected '<key>' or '</dict>' in a <dict>, found '<string>'"),
        (
            "<dict><key>a</key></dict>", 20,
            "expected a value (<string>, <integer>, <real>, <true/>, <false/>, <date>, <data>, <array> or <dict>) for the key 'a', found '</dict>'"
        ),
        ("<array><integer>1</integer></dict>", 29, "expected '</array>' or a value in an <array>, found '</dict>'"),
        ("<string version=1>x</string>", 18, "expected a quoted value for the attribute 'version', found '1'"),
        ("<string/ >", 9, "expected '>' or '/>' to end the <string> tag (or an attribute after a space), found '/'")
    ]

    @Test(arguments: valueErrors)
    func aValueErrorNamesLineColumnAndExpectation(element: String, column: Int, message: String) throws {
        let error = try #require(throws: DefaultsError.self) { try XMLPlist.ours(Data(XMLPlist.member(element).utf8)) }
        #expect(error.kind == .malformedFile)
        #expect(error.message == message)
        #expect((error.line, error.column) == (5, column), "\(error)")
        #expect(error.description.hasPrefix("/tmp/x.plist:5:\(column): error: "), "\(error)")
    }

    /// Errors outside a member's value: the document's structure, prolog and encoding.
    static let documentErrors: [(text: String, line: Int, column: Int, message: String)] = [
        (
            "<plist version=\"1.0\">\n<dict>\n\t<key>a</key><integer>1</integer>\n\t<key>a</key><integer>2</integer>\n</dict>\n</plist>",
            4, 2,
            "duplicate key 'a' in a <dict> (first at line 3, column 2): each key may stand once; remove one of them"
        ),
        ("<plist><dict/>", 1, 15, "expected '</plist>' after the value (a <plist> holds one value), found end of file"),
        (
            "<plist><dict/></plist>\ntrailing", 2, 1,
            "expected end of file after the top-level element, found 'trailing'"
        ),
        (
            "<plist><dict/><dict/></plist>", 1, 15,
            "expected '</plist>' after the value (a <plist> holds one value), found '<dict/>'"
        ),
        ("<plist/>", 1, 1, "empty <plist/>: expected one value inside <plist>"),
        (
            "<plist></plist>", 1, 8,
            "expected a value (<string>, <integer>, <real>, <true/>, <false/>, <date>, <data>, <array> or <dict>) as the document's value, found '</plist>'"
        ),
        (
            "<!DOCTYPE plist [ <!ENTITY e \"x\"> ]>\n<plist><dict/></plist>", 1, 17,
            "a DOCTYPE with an internal subset ('[…]') is not supported: it could declare entities; remove the '[…]' part"
        ),
        (
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<plist><dict/></plist>", 1, 31,
            "the encoding 'ISO-8859-1' is not supported: expected UTF-8 (or UTF-16 with a byte-order mark); save the file as UTF-8"
        ),
        (
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<plist><dict/></plist>", 1, 31,
            "the XML declaration names the encoding 'UTF-16', but the file has no UTF-16 byte-order mark and reads as UTF-8: save it as UTF-8, or as UTF-16 with a byte-order mark"
        ),
        (
            "<plist><dict>\n<!-- never closed\n</dict></plist>", 2, 1,
            "unterminated comment: expected '-->', found end of file"
        ),
        (
            "<plist><dict/></plist>\n<?xml version=\"1.0\"?>", 2, 1,
            "an XML declaration ('<?xml … ?>') may stand only at the start of the file"
        ),
        (
            "<plist version=1.0><dict/></plist>", 1, 16,
            "expected a quoted value for the attribute 'version', found '1.0'"
        ),
        ("<plist><array/></plist>", 1, 8, "expected a dictionary at the top level of a suite file, found an array"),
        (
            "<plist>\r<dict>\r<key>k</key>\r<real>x</real>\r</dict></plist>", 4, 7,
            "'x' is not a real: expected a number such as 2.5, -1e-3 or 5, or nan, inf, -inf"
        ),
        (
            "<plist>\r\n<dict>\r\n<key>é</key><real>x</real>\r\n</dict></plist>", 3, 19,
            "'x' is not a real: expected a number such as 2.5, -1e-3 or 5, or nan, inf, -inf"
        )
    ]

    @Test(arguments: documentErrors)
    func aDocumentErrorNamesLineColumnAndExpectation(text: String, line: Int, column: Int, message: String) throws {
        let error = try #require(throws: DefaultsError.self) { try XMLPlist.ours(Data(text.utf8)) }
        #expect(error.message == message)
        #expect((error.line, error.column) == (line, column), "\(error)")
    }

    @Test func bytesThatAreNotUTF8AreAnErrorAtTheByte() throws {
        var data = Data("<plist><dict>\n<key>k</key><string>ab".utf8)
        data.append(contentsOf: [0xC3, 0x28])
        data.append(Data("</string></dict></plist>".utf8))
        let error = try #require(throws: DefaultsError.self) { try XMLPlist.ours(data) }
        #expect(error.message == "the text is not valid UTF-8 (byte 0xC3 here)")
        #expect((error.line, error.column) == (2, 23), "\(error)")
    }

    @Test func utf16WithoutAByteOrderMarkIsAnError() throws {
        let data = "<plist><dict/></plist>".data(using: .utf16LittleEndian)!
        let error = try #require(throws: DefaultsError.self) { try XMLPlist.ours(data) }
        #expect(
            error.message
                == "the file looks like UTF-16 without a byte-order mark: save it as UTF-8, or as UTF-16 with a byte-order mark"
        )
        #expect((error.line, error.column) == (1, 1))
    }

    @Test func anUnpairedSurrogateInUTF16IsAnErrorAtItsCharacter() throws {
        var data = Data([0xFF, 0xFE])
        data.append("<plist><dict><key>".data(using: .utf16LittleEndian)!)
        data.append(contentsOf: [0x00, 0xD8])  // a high surrogate, then no low one
        data.append("</key></dict></plist>".data(using: .utf16LittleEndian)!)
        let error = try #require(throws: DefaultsError.self) { try XMLPlist.ours(data) }
        #expect(error.message == "the UTF-16 text holds a high surrogate 0xD800 without its low surrogate")
        #expect((error.line, error.column) == (1, 19), "\(error)")
    }

    @Test func containersNestedTooDeepAreAnError() throws {
        let depth = PropertyListXMLReader.maximumDepth + 1
        let text =
            "<plist><dict><key>k</key>" + String(repeating: "<array>", count: depth)
            + String(repeating: "</array>", count: depth) + "</dict></plist>"
        let error = try #require(throws: DefaultsError.self) { try XMLPlist.ours(Data(text.utf8)) }
        #expect(error.message == "containers are nested more than 512 levels deep")
        #expect(error.line == 1 && error.column != nil)
    }
}

/// A value that does not read is an error, and the file stays as the person wrote it: the next write waits
/// for a file that reads instead of storing a guess.
@Suite struct XMLPropertyListWriteSafetyTests {
    let directory = TemporaryDirectory()

    @Test(arguments: [
        "<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t<integer>0xFFFFFFFFFFFFFFFF</integer>\n</dict>\n</plist>\n",
        "<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t<integer>1</integer>\n\t<key>v</key>\n\t<integer>2</integer>\n</dict>\n</plist>\n",
        "<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t<real>1,5</real>\n</dict>\n</plist>\n",
        "<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t<string>caf&eacute;</string>\n</dict>\n</plist>\n",
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t<string>x</string>\n</dict>\n</plist>\n",
        "<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t<date>2024-01-01T12:00:00+01:00</date>\n</dict>\n</plist>\n",
        "<plist version=\"1.0\">\n<dict>\n\t<key>v</key>\n\t<string>x</string>\n</dict>\n</plist>\ntrailing words\n"
    ])
    func aFileThatDoesNotReadIsNeverWrittenOver(text: String) throws {
        let file = directory.file("safety-\(abs(text.hashValue)).plist")
        try Data(text.utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        let error = try #require(suite.fileError)
        #expect(error.kind == .malformedFile)
        #expect(error.line != nil && error.column != nil, "\(error)")
        suite.set(1, forKey: "other")
        #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self) == text)
        #expect(suite.hasPendingChanges)
    }

    /// A file in a form the old fast reader left to Foundation (comments, CDATA, CRLF) reads, and a write
    /// keeps every value the person wrote.
    @Test func aHandWrittenFileReadsAndAWriteKeepsItsValues() throws {
        let file = directory.file("hand-written.plist")
        let text =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<!-- settings -->\r\n<plist version=\"1.0\">\r\n<dict>\r\n\t<key>name</key>\r\n\t<string><![CDATA[a <b> & c]]></string>\r\n\t<key>hex</key>\r\n\t<integer>0x10</integer>\r\n</dict>\r\n</plist>\r\n"
        try Data(text.utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        #expect(suite.fileError == nil)
        suite.set(true, forKey: "added")
        #expect(suite.lastError == nil)
        let written = try XMLPlist.ours(try Data(contentsOf: file))
        #expect(written == ["name": .string("a <b> & c"), "hex": .integer(16), "added": .bool(true)])
    }
}
