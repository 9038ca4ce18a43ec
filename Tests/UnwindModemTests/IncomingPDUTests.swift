import Foundation
import Testing
import UnwindSeams
import UnwindLinuxHardware
import UnwindSimulatedHardware
import UnwindCore
import UnwindModem

/// The decoder of what the modem reads from the network: a published vector, round trips
/// against the simulated network's own encoder, and a table of hostile PDUs that must each be
/// an answer (a value or a typed error), never a trap.
@Suite("Incoming PDUs (SMS-DELIVER, SMS-STATUS-REPORT)")
struct IncomingPDUTests {
    /// Lars Pettersson's "SMS and the PDU format" (dreamfabric.com/sms): SMS-DELIVER from
    /// 27838890001 (type of address C8), time stamp 99-03-29 15:16:59 +2 h, "hellohello".
    @Test func dreamfabricDeliver() throws {
        let t = try IncomingPDU.decode(hex: "07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37", announced: 28)
        guard case .deliver(let d) = t else { Issue.record("\(t)"); return }
        #expect(d.sender.digits == "27838890001")
        #expect(d.text == "hellohello")
        #expect(d.serviceCentreTime == WallTime(secondsSinceEpoch: 922_713_419))
        #expect(d.concatenation == nil && d.alphabet == .gsm7)
    }

    @Test func numberForms() throws {
        func sender(_ oa: String) throws -> SMSAddress {
            guard case .deliver(let d) = try IncomingPDU.decode(hex: "00" + "04" + oa + "0000" + "62101021436500" + "01" + "31", announced: nil)
            else { throw IncomingPDUProblem.malformed("not a deliver") }
            return d.sender
        }
        #expect(try sender("0B915177878246F1") == SMSAddress(kind: .international, text: "+15777828641"))
        #expect(try sender("0AA17778286451") == SMSAddress(kind: .national, text: "7787824615"))
        #expect(try sender("0A817778286451") == SMSAddress(kind: .unknown, text: "7787824615"))
        // "Operator" packed as GSM-7 in 14 semi-octets, type D0.
        #expect(try sender("0ED04FB819FE4EBBE5") .kind == .alphanumeric)
        let n = try PhoneNumber("+17787824615")
        #expect(SMSAddress(kind: .national, text: "7787824615").sameSubscriber(as: n))
        #expect(SMSAddress(kind: .unknown, text: "17787824615").sameSubscriber(as: n))
        #expect(!SMSAddress(kind: .unknown, text: "4615").sameSubscriber(as: n), "too few digits to say")
        #expect(!SMSAddress(kind: .alphanumeric, text: "7787824615").sameSubscriber(as: n))
        #expect(SMSAddress(kind: .national, text: "07700900123").sameSubscriber(as: try PhoneNumber("+447700900123")), "trunk zero")
    }

    @Test func roundTripsThroughTheNetworksEncoder() throws {
        let texts = ["On my way", "Ça va? J'arrive 🙏", "[]{}\\~€|^ on the extension table", String(repeating: "long ", count: 40),
                     String(repeating: "💙", count: 50), "line one\nline two"]
        for text in texts {
            for wide in [false, true] {
                let pdus = DeliverEncoder.encode(from: "+15550100001", text: text, reference: 300, wide: wide, time: 1_767_225_600)
                var payload: [UInt8] = []
                var alphabet: ReceivedAlphabet?
                for p in pdus {
                    guard case .deliver(let d) = try IncomingPDU.decode(hex: p.hexString, announced: p.count - 8) else {
                        Issue.record("not a deliver"); continue
                    }
                    #expect(d.serviceCentreTime == WallTime(secondsSinceEpoch: 1_767_225_600))
                    #expect(d.sender.text == "+15550100001")
                    if pdus.count > 1 {
                        #expect(d.concatenation?.parts == pdus.count && d.concatenation?.wide == wide)
                        #expect(d.concatenation?.reference == (wide ? 300 : 300 & 0xFF))
                    }
                    payload += d.payload
                    alphabet = d.alphabet
                }
                #expect(SMSText.decode(payload, alphabet ?? .data) == text, "\(text)")
            }
        }
    }

    @Test func statusReport() throws {
        let t = try IncomingPDU.decode(hex: "0006170B915155100000F1621010214365006210102143650046", announced: 25)
        #expect(t == .statusReport(SMSStatusReport(messageReference: 0x17, recipient: SMSAddress(kind: .international, text: "+15550100001"),
                                                   status: 0x46)))
    }

    @Test func eightBitDataIsShownAsData() throws {
        guard case .deliver(let d) = try IncomingPDU.decode(hex: "00040B915155100000F10004621010214365000401020304", announced: nil) else {
            Issue.record("not a deliver"); return
        }
        #expect(d.alphabet == .data)
        #expect(d.text == "(data message, 4 octets: 01020304)")
    }

    /// Every one an answer: a value or a typed error. None crashes, none loops, none is trusted.
    static let hostile: [(String, String)] = [
        ("empty", ""),
        ("one digit", "0"),
        ("odd digits", "07917283010010F5040"),
        ("not hex", "ZZ"),
        ("SMSC longer than the PDU", "0F91"),
        ("SMSC of 255", "FF" + String(repeating: "00", count: 20)),
        ("ends in the first octet", "00"),
        ("ends in the address", "00040B91"),
        ("address of 255 digits", "0004FF91" + String(repeating: "11", count: 150)),
        ("ends in the time stamp", "00040B915155100000F100006210"),
        ("no user data length", "00040B915155100000F10000621010214365 00".replacingOccurrences(of: " ", with: "")),
        ("UDL beyond the data", "00040B915155100000F1000062101021436500A0C8"),
        ("UDL of 255 septets", "00040B915155100000F1000062101021436500FF" + String(repeating: "41", count: 223)),
        ("UCS-2 UDL of 255", "00040B915155100000F1000862101021436500FF0041"),
        ("UDHL beyond the data", "00440B915155100000F1000862101021436500040F000300"),
        ("UDH element overruns", "00440B915155100000F10008621010214365000A05000902010041004200"),
        ("UDH longer than the UDL", "00440B915155100000F100086210102143650002050003010201"),
        ("concatenation with 0 parts", "00440B915155100000F1000862101021436500080500030100010041"),
        ("part beyond the count", "00440B915155100000F1000862101021436500080500030102050041"),
        ("255 parts", "00440B915155100000F1000862101021436500080500030AFF010041"),
        ("lone surrogates", "00040B915155100000F1000862101021436500060041D800DC00"),
        ("odd UCS-2", "00040B915155100000F10008621010214365000300410A"),
        ("escape at the end", "00040B915155100000F10000621010214365000241 0D".replacingOccurrences(of: " ", with: "")),
        ("escape escape", "00040B915155100000F1000062101021436500031B8D01"),
        ("all ones", "00040B915155100000F1000062101021436500A0" + String(repeating: "FF", count: 140)),
        ("a time of 99/99/99", "00040B915155100000F10000999999999999990141"),
        ("a submit, not for us", "0001000B915155100000F100000141"),
        ("reserved type", "0003"),
        ("status report cut short", "0006170B915155100000F1621010"),
        ("longer than any SMS", String(repeating: "00", count: 260)),
        ("control characters in the text", "00040B915155100000F100006210102143650005" + "1B0D1A0A00"),
        ("alphanumeric sender of 20 semi-octets", "000414D0" + String(repeating: "FF", count: 10) + "0000621010214365000141"),
    ]

    @Test func hostileFormsAreAnswersNeverTraps() {
        for (what, hex) in Self.hostile {
            for announced in [nil, 0, 25, 9999] as [Int?] {
                do {
                    let t = try IncomingPDU.decode(hex: hex, announced: announced)
                    if case .deliver(let d) = t {
                        #expect(!d.text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(what): control character kept")
                        #expect(!d.sender.text.unicodeScalars.contains { $0.value < 0x20 }, "\(what)")
                        if let c = d.concatenation { #expect(c.parts >= 2 && (1...c.parts).contains(c.part), "\(what)") }
                    }
                } catch {
                    #expect(!error.description.isEmpty, "\(what)")
                }
            }
        }
    }

    /// A sender playing with headers (a new 255-part message each time, one part of each) cannot
    /// make the card hold more than a few dozen groups: the oldest are shown as far as they came.
    @Test func hugeConcatenationCountsAreBounded() throws {
        let dir = ScratchDirectory()
        let inbox = Inbox(storage: try DirectoryStore(directory: dir.path))
        var shown = 0
        for k in 0..<(Inbox.maximumGroups + 8) {
            let hex = "00440B915155100000F100086210102143650008050003" + String(format: "%02X", k) + "FF010041"
            guard case .deliver(let d) = try IncomingPDU.decode(hex: hex, announced: nil) else { continue }
            shown += try inbox.accept(d, at: WallTime(secondsSinceEpoch: 1), instant: Instant(nanoseconds: Int64(k))).count
        }
        #expect(shown == 8)
        #expect(inbox.waitingParts == Inbox.maximumGroups)
        #expect(inbox.replies.allSatisfy { $0.text == "A…" && $0.missingParts == 254 })
    }
}
