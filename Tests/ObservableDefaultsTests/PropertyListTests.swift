import Foundation
import Testing
@testable import ObservableDefaults

@Suite struct PropertyListTests {
    func parse(_ text: String) throws -> [String: DefaultsValue] {
        try SuiteFormat.propertyList.decode(Data(text.utf8), fileURL: URL(fileURLWithPath: "/tmp/test.plist"))
            .stringKeyed
    }

    func plist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        \(body)
        </plist>
        """
    }

    @Test func booleansIntegersAndRealsStayApart() throws {
        let values = try parse(
            plist(
                """
                <dict>
                <key>t</key><true/><key>f</key><false/><key>one</key><integer>1</integer><key>zero</key><integer>0</integer>
                <key>five</key><real>5</real><key>half</key><real>0.5</real><key>max</key><integer>9223372036854775807</integer>
                <key>min</key><integer>-9223372036854775808</integer>
                </dict>
                """))
        #expect(
            values == [
                "t": .bool(true), "f": .bool(false), "one": .integer(1), "zero": .integer(0), "five": .double(5),
                "half": .double(0.5), "max": .integer(.max), "min": .integer(.min)
            ])
    }

    @Test func writesSortedXMLWithTabs() throws {
        let data = try SuiteFormat.propertyList.encode([
            "b": .integer(1), "a": .array([.bool(true), .double(5)]), "c": .dictionary([:]),
            "d": .date(Date(timeIntervalSince1970: 1_714_566_600.7)),
            "e": .string("<&>"), "f": .data(Data([0, 1, 2])), "g": .array([])
        ])
        #expect(
            String(decoding: data, as: UTF8.self) == """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>a</key>
                \t<array>
                \t\t<true/>
                \t\t<real>5.0</real>
                \t</array>
                \t<key>b</key>
                \t<integer>1</integer>
                \t<key>c</key>
                \t<dict/>
                \t<key>d</key>
                \t<date>2024-05-01T12:30:00Z</date>
                \t<key>e</key>
                \t<string>&lt;&amp;&gt;</string>
                \t<key>f</key>
                \t<data>AAEC</data>
                \t<key>g</key>
                \t<array/>
                </dict>
                </plist>

                """)
    }

    @Test func emptyFileIsAnEmptySuite() throws {
        #expect(try parse("") == [:])
        #expect(try parse("\n  \n") == [:])
    }

    @Test func topLevelMustBeADictionary() throws {
        let error = try #require(throws: DefaultsError.self) { try parse(plist("<array><integer>1</integer></array>")) }
        #expect(error.kind == .malformedFile)
        #expect(error.message == "expected a dictionary at the top level of a suite file, found an array")
    }

    @Test func parseErrorsNameTheLineAndColumn() throws {
        let error = try #require(throws: DefaultsError.self) {
            try parse(plist("<dict>\n<key>a</key>\n<integer>x</integer>\n</dict>"))
        }
        #expect(error.kind == .malformedFile)
        #expect((error.line, error.column) == (6, 10))
        #expect(error.message.hasPrefix("expected a digit in <integer>, found 'x'"))
        #expect(error.fileURL?.path == "/tmp/test.plist")
    }

    @Test func readsBinaryPropertyListsWrittenByFoundation() throws {
        let object: [String: Any] = ["b": true, "i": 7, "d": 5.0, "s": "é", "a": [1, 2], "x": Data([9])]
        let binary = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        let values = try SuiteFormat.propertyList.decode(binary, fileURL: URL(fileURLWithPath: "/tmp/b.plist"))
        #expect(
            values == [
                "b": .bool(true), "i": .integer(7), "d": .double(5), "s": .string("é"),
                "a": .array([.integer(1), .integer(2)]), "x": .data(Data([9]))
            ])
    }

    /// What Foundation reads from the document, converted to the value model.
    func foundationReads(_ text: String) throws -> [String: DefaultsValue] {
        try #require(XMLPlist.foundations(Data(text.utf8)), "Foundation rejects the document")
    }

    /// What the library's XML reader reads from the document.
    func readerReads(_ text: String) throws -> DefaultsValue {
        try PropertyListXMLReader.parse(Data(text.utf8))
    }

    /// The plain layout writers emit reads exactly as PropertyListSerialization reads it.
    @Test func readerAgreesWithFoundation() throws {
        let document = plist(
            """
            <dict>
            	<key>string</key>
            	<string>plain text</string>
            	<key>spaces</key>
            	<string>  leading and trailing	and a tab  </string>
            	<key>lines</key>
            	<string>one
            two</string>
            	<key>entities</key>
            	<string>&lt;a href=&quot;x&quot;&gt; &amp; &apos;q&apos; &#65;&#x42;&#x1F600; &gt;</string>
            	<key>raw &gt; and ]]</key>
            	<string>&gt;]]&gt;></string>
            	<key>unicode é 😀</key>
            	<string>ünïcødé 日本</string>
            	<key>empty</key>
            	<string></string>
            	<key>emptyTag</key>
            	<string/>
            	<key>integers</key>
            	<array>
            		<integer>0</integer>
            		<integer>-0</integer>
            		<integer>42</integer>
            		<integer>007</integer>
            		<integer>-17</integer>
            		<integer>9223372036854775807</integer>
            		<integer>-9223372036854775808</integer>
            	</array>
            	<key>reals</key>
            	<array>
            		<real>5</real>
            		<real>0.5</real>
            		<real>-0</real>
            		<real>-0.0</real>
            		<real>1e-07</real>
            		<real>1.5E+20</real>
            		<real>0.1</real>
            		<real>123456789.123456789</real>
            		<real>1e999</real>
            		<real>nan</real>
            		<real>+infinity</real>
            		<real>-infinity</real>
            	</array>
            	<key>booleans</key>
            	<array><true/><false/></array>
            	<key>dates</key>
            	<array>
            		<date>2024-05-01T12:30:00Z</date>
            		<date>2001-01-01T00:00:00Z</date>
            		<date>1970-01-01T00:00:00Z</date>
            		<date>1969-12-31T23:59:59Z</date>
            		<date>1900-02-28T01:02:03Z</date>
            		<date>2000-02-29T23:59:59Z</date>
            		<date>1601-01-01T00:00:00Z</date>
            		<date>2999-12-31T23:59:59Z</date>
            	</array>
            	<key>data</key>
            	<array>
            		<data>AAEC</data>
            		<data>
            		SGVsbG8sIHdvcmxkIQ==
            		</data>
            		<data></data>
            	</array>
            	<key>nested</key>
            	<dict>
            		<key>empty dict</key>
            		<dict/>
            		<key>empty array</key>
            		<array/>
            		<key>deeper</key>
            		<dict><key>a</key><array><dict><key>b</key><integer>1</integer></dict></array></dict>
            	</dict>
            </dict>
            """)
        #expect(try readerReads(document) == .dictionary(try foundationReads(document)))
        #expect(try parse(document) == (try foundationReads(document)))
        // Without the prolog and doctype, and with attributes on <plist>.
        let bare = "<plist version=\"1.0\"><dict><key>a</key><integer>1</integer></dict></plist>"
        #expect(try readerReads(bare) == .dictionary(try foundationReads(bare)))
    }
}
