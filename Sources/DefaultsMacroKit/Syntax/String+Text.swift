extension String {
    var trimmed: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    func replacingArrows() -> String {
        var result = ""
        var iterator = makeIterator()
        var pending: Character?
        while let character = pending ?? iterator.next() {
            pending = nil
            if character == "-", let next = iterator.next() {
                if next == ">" { continue }
                result.append(character)
                pending = next
                continue
            }
            result.append(character)
        }
        return result
    }
}
