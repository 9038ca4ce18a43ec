/// Which alert contact an SMS came from: a network writes one phone number in many forms, and a
/// reply or a STATUS request is matched to the contact who sent it, never to a stranger.
extension PhoneNumber {
    /// Whether an SMS from `sender` came from this number. Networks give the same phone as
    /// `+17785551234`, `17785551234`, `0017785551234`, `01117785551234` or national
    /// `7785551234` / `07785551234`. A national form is the *whole* national significant
    /// number — what follows the country code (ITU-T E.164: the codes are prefix-free, so the
    /// digits say where it ends) — alone or after one trunk prefix (`0`; `1` under +1, `8`
    /// under +7): never a shorter ending (`85551234` is not +1 778 555 1234).
    ///
    /// `known`: the digits of the international numbers the device has (the contacts stored with
    /// "+", the counselling line). A contact stored in national form has no country of its own:
    /// when there are known numbers, an international sender matches it only under one of their
    /// country codes — a stranger abroad whose number ends in a national contact's digits
    /// (`+44 604 555 7654` for a contact stored as `604 555 7654` next to `+1…` numbers) is not
    /// taken for the contact. With none, the country cannot be known and any code is accepted.
    public func isSameNumber(asSender sender: String, known: [String] = []) -> Bool {
        var plus = false
        var digits: [UInt8] = []
        for (i, b) in sender.utf8.enumerated() {
            if i == 0 && b == UInt8(ascii: "+") { plus = true; continue }
            guard b >= 0x30 && b <= 0x39 else { return false }
            digits.append(b)
        }
        guard digits.count >= 3 else { return false }
        func canonical(_ d: [UInt8], plus: Bool) -> (international: Bool, digits: [UInt8]) {
            if plus { return (true, d) }
            // An international call prefix written out: 00 (most of the world), 011 (North America).
            if d.starts(with: [0x30, 0x31, 0x31]) && d.count > 10 { return (true, Array(d.dropFirst(3))) }
            if d.starts(with: [0x30, 0x30]) { return (true, Array(d.dropFirst(2))) }
            return (false, d)
        }
        let a = canonical(digits, plus: plus)
        let b = canonical(Array(self.digits.utf8), plus: isInternational)
        if a.digits == b.digits { return true }
        let homes = known.compactMap { Self.countryCode(Array($0.utf8)) }
        // `national` is the national form of the international `full` (country code and number).
        func isNational(_ national: [UInt8], of full: [UInt8], codeKnown: Bool) -> Bool {
            guard let code = Self.countryCode(full), full.count - code.count >= 4 else { return false }
            if !codeKnown && !homes.isEmpty && !homes.contains(code) { return false }
            let number = Array(full.dropFirst(code.count))
            // Where the country code is a guess (no "+" said so), a national number is 7 digits or more.
            if !codeKnown && number.count < 7 { return false }
            if national == number { return true }
            guard national.count == number.count + 1, Array(national.dropFirst()) == number else { return false }
            return Self.trunkPrefixes(code).contains(national[0])
        }
        switch (a.international, b.international) {
        case (false, true): return isNational(a.digits, of: b.digits, codeKnown: true)
        case (true, false):
            // A contact stored in national form, perhaps with its trunk prefix.
            return isNational(b.digits, of: a.digits, codeKnown: false)
        case (false, false):
            // Both without "+": one may carry the country code (17785551234 and 7785551234), or
            // both a trunk prefix or not (07785551234 and 7785551234).
            if a.digits.first == 0x30, Array(a.digits.dropFirst()) == b.digits { return true }
            if b.digits.first == 0x30, Array(b.digits.dropFirst()) == a.digits { return true }
            return isNational(a.digits, of: b.digits, codeKnown: false) || isNational(b.digits, of: a.digits, codeKnown: false)
        case (true, true):
            return false
        }
    }

    /// The E.164 country code `digits` begin with (1 to 3 digits; nil when they begin with 0).
    /// The assigned codes are prefix-free: +1 and +7 alone; two digits for 20, 27, 30–34, 36,
    /// 39, 40, 41, 43–49, 51–58, 60–66, 81, 82, 84, 86, 90–95, 98; three for every other.
    static func countryCode(_ digits: [UInt8]) -> [UInt8]? {
        guard let f = digits.first.map({ Int($0) - 0x30 }), (1...9).contains(f) else { return nil }
        if f == 1 || f == 7 { return [digits[0]] }
        guard digits.count >= 3 else { return nil }
        let s = Int(digits[1]) - 0x30
        let two: Bool = switch f {
        case 2: s == 0 || s == 7
        case 3: [0, 1, 2, 3, 4, 6, 9].contains(s)
        case 4: s != 2
        case 5: (1...8).contains(s)
        case 6: (0...6).contains(s)
        case 8: [1, 2, 4, 6].contains(s)
        default: [0, 1, 2, 3, 4, 5, 8].contains(s)  // 9
        }
        return Array(digits.prefix(two ? 2 : 3))
    }

    /// The trunk prefixes a national number may be dialled with under `code`: 0 everywhere a
    /// network writes it, 1 in North America (+1), 8 in Russia and Kazakhstan (+7).
    static func trunkPrefixes(_ code: [UInt8]) -> [UInt8] {
        switch code {
        case [0x31]: [0x30, 0x31]
        case [0x37]: [0x30, 0x38]
        default: [0x30]
        }
    }
}

extension AlertSlotState {
    /// Every slot (0-based) whose contact an SMS from `sender` may have come from.
    public static func slots(sending sender: String, in slots: [AlertSlotState], counselling: PhoneNumber?) -> [Int] {
        var known: [String] = []
        for s in slots { if case .ready(let a) = s, a.number.isInternational { known.append(a.number.digits) } }
        if let line = counselling, line.isInternational { known.append(line.digits) }
        return slots.indices.filter { i in
            if case .ready(let a) = slots[i] { a.number.isSameNumber(asSender: sender, known: known) } else { false }
        }
    }

    /// The slot (0-based) whose contact an SMS from `sender` came from, judged one way wherever
    /// it is asked (the person's status screen, `unwind replies`): the device's international
    /// numbers — its contacts stored with "+", the counselling line — say which country a
    /// national form belongs to (see `PhoneNumber.isSameNumber(asSender:known:)`).
    public static func slot(sending sender: String, in slots: [AlertSlotState], counselling: PhoneNumber?) -> Int? {
        Self.slots(sending: sender, in: slots, counselling: counselling).first
    }

    /// The slot whose contact sent `reply`: as `slot(sending:)`, and never for a sender that is
    /// a name (an alphanumeric sender may spell any number).
    public static func slot(of reply: IncomingReply, in slots: [AlertSlotState], counselling: PhoneNumber?) -> Int? {
        reply.fromName ? nil : slot(sending: reply.from, in: slots, counselling: counselling)
    }
}
