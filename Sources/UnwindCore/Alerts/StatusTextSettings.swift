/// The device's texts that are not alerts, as configuration sets them.
public struct StatusTextSettings: Equatable, Sendable {
    /// How the device signs its texts (`device.name`).
    public var deviceName: String
    /// Words besides STATUS that ask for the status (`sms.status_words`), e.g. ESTADO, ÉTAT.
    public var statusWords: [String]
    /// Who is texted when the device cannot do its job (`maintainer.number`); nil: nobody.
    public var maintainer: PhoneNumber?
    /// How long a problem lasts before the maintainer is texted (`maintainer.alert_after_minutes`).
    public var maintainerAfter: Duration

    public static let defaultName = "Unwind"
    public static let nameLimit = 24
    public static let wordLimit = 20
    public static let wordsLimit = 10

    public init(deviceName: String = StatusTextSettings.defaultName, statusWords: [String] = [],
                maintainer: PhoneNumber? = nil, maintainerAfter: Duration = .seconds(3600)) {
        self.deviceName = deviceName
        self.statusWords = statusWords
        self.maintainer = maintainer
        self.maintainerAfter = maintainerAfter
    }

    /// Why `name` cannot sign the device's texts, or nil: it goes into every answer, so it
    /// follows an alert message's rules and stays short enough to leave room for the news.
    public static func nameProblem(_ name: String) -> String? {
        if name.count > nameLimit { return "at most \(nameLimit) characters" }
        do { try AlertSlot.validateMessage(name) } catch { return error.description }
        return nil
    }

    /// Why `word` cannot ask for the status, or nil: one word of letters or digits.
    public static func wordProblem(_ word: String) -> String? {
        if word.isEmpty || word.count > wordLimit { return "each word has 1 to \(wordLimit) letters" }
        if !word.allSatisfy({ $0.isLetter || $0.isNumber }) { return "\(String(reflecting: word)): letters and digits only, one word" }
        return nil
    }
}

extension StatusTextSettings {
    /// Whether `text` asks for the status: exactly STATUS or one of the configured words, in any
    /// case, with spaces and line breaks around it. Anything more ("status please", "Status?")
    /// is an ordinary reply and shown to the person as one: a contact's real words are never
    /// swallowed because they begin like a command.
    public func isStatusRequest(_ text: String) -> Bool {
        // Far longer than any word: not one (and a flood of long texts costs no folding).
        guard text.utf8.count <= 64 else { return false }
        let word = text.trimmingSpaces.lowercased()
        if word == "status" { return true }
        return statusWords.contains { $0.lowercased() == word }
    }
}
