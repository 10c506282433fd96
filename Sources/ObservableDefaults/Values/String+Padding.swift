extension String {
    /// The string padded on the left to `width` characters (`"7".leftPadded(to: 3)` is `"007"`).
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
