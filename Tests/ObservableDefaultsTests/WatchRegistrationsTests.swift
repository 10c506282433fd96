import Testing
@testable import ObservableDefaults

/// The watcher's index of registrations: an event's name finds exactly the files a look at every
/// registration would find, through registrations added, re-pointed (a symlink's new target) and removed.
@Suite struct WatchRegistrationsTests {
    private typealias Name = FileWatcher.WatchedName

    private func registration(_ names: [Name], symlink: Bool = false) -> FileWatcher.Registration {
        FileWatcher.Registration(
            file: names[0].directory + "/" + names[0].name, onEvent: { _ in }, names: Set(names), isSymlink: symlink)
    }

    /// What the watcher's event handling found before the index: every registration asked in turn.
    private func reference(_ registrations: [WatchToken: FileWatcher.Registration], _ name: Name) -> (
        exact: Set<WatchToken>, others: Set<WatchToken>
    ) {
        var exact = Set<WatchToken>(), others = Set<WatchToken>()
        for (token, registration) in registrations {
            if registration.names.contains(name) {
                exact.insert(token)
            } else if registration.isSymlink && registration.names.contains(where: { $0.directory == name.directory }) {
                others.insert(token)
            }
        }
        return (exact, others)
    }

    @Test func plainFilesAndASymlinkAreFoundByTheirNamesAndDirectories() {
        var registrations = WatchRegistrations()
        let (a, b, link) = (WatchToken(id: 1), WatchToken(id: 2), WatchToken(id: 3))
        registrations[a] = registration([Name(directory: "/d", name: "a.json")])
        registrations[b] = registration([Name(directory: "/d", name: "b.json")])
        registrations[link] = registration(
            [Name(directory: "/config", name: "app.json"), Name(directory: "/config/..data", name: "app.json")],
            symlink: true)

        #expect(registrations.concerned(by: Name(directory: "/d", name: "a.json")) == ([a], []))
        #expect(registrations.concerned(by: Name(directory: "/d", name: ".a.json.tmp")) == ([], []))
        #expect(registrations.concerned(by: Name(directory: "/config", name: "app.json")) == ([link], []))
        // The ConfigMap swap renames `..data`: any name in either directory may have re-pointed the link.
        #expect(registrations.concerned(by: Name(directory: "/config", name: "..data")) == ([], [link]))
        #expect(registrations.concerned(by: Name(directory: "/config/..data", name: "other")) == ([], [link]))

        // Re-pointed to another target directory: the old one no longer concerns it.
        registrations[link] = registration(
            [Name(directory: "/config", name: "app.json"), Name(directory: "/config/..2026", name: "app.json")],
            symlink: true)
        #expect(registrations.concerned(by: Name(directory: "/config/..data", name: "app.json")) == ([], []))
        #expect(registrations.concerned(by: Name(directory: "/config/..2026", name: "x")) == ([], [link]))

        #expect(registrations.removeValue(forKey: a) != nil)
        #expect(registrations.concerned(by: Name(directory: "/d", name: "a.json")) == ([], []))
        #expect(registrations.removeValue(forKey: a) == nil)
        #expect(Set(registrations.keys) == [b, link])
    }

    /// Random registrations (plain and symlinked, sharing directories and names), changed and removed at
    /// random: after every step, every name gives what asking each registration gives.
    @Test func theIndexAgreesWithAskingEveryRegistration() {
        var generator = SystemRandomNumberGenerator()
        let directories = ["/a", "/b", "/a/sub", "/c"]
        let names = ["x.json", "y.json", "..data", "z.plist"]
        func randomName() -> Name {
            Name(
                directory: directories.randomElement(using: &generator)!, name: names.randomElement(using: &generator)!)
        }
        var registrations = WatchRegistrations()
        var reference: [WatchToken: FileWatcher.Registration] = [:]
        for step in 0..<2_000 {
            let token = WatchToken(id: UInt64.random(in: 1...40, using: &generator))
            if Int.random(in: 0..<4, using: &generator) == 0 {
                #expect(
                    (registrations.removeValue(forKey: token) == nil) == (reference.removeValue(forKey: token) == nil))
            } else {
                let symlink = Bool.random(using: &generator)
                let new = registration((0..<(symlink ? 2 : 1)).map { _ in randomName() }, symlink: symlink)
                registrations[token] = new
                reference[token] = new
            }
            for directory in directories {
                for name in names {
                    let found = registrations.concerned(by: Name(directory: directory, name: name))
                    let expected = self.reference(reference, Name(directory: directory, name: name))
                    #expect(
                        Set(found.exact) == expected.exact && Set(found.others) == expected.others,
                        "step \(step): \(directory)/\(name)")
                    #expect(found.exact.count == expected.exact.count && found.others.count == expected.others.count)
                }
            }
        }
        #expect(Set(registrations.keys) == Set(reference.keys))
    }
}
