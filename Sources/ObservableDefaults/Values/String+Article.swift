extension String {
    /// The word or type name with its indefinite article, chosen by how it is said: "an Int", "an array",
    /// "an NSNumber" (en-es), but "a URL" and "a UInt8" (you-), "a Limits", "a dictionary".
    var withIndefiniteArticle: String {
        guard let first = first else { return self }
        let isInitialism = dropFirst().first.map(\.isUppercase) == true && first.isUppercase
        // Spelt letter by letter, an initialism starts with the sound of its first letter's name.
        let vowelSound = isInitialism ? "AEFHILMNORSX".contains(first) : "aeiouAEIOU".contains(first)
        return (vowelSound ? "an " : "a ") + self
    }
}
