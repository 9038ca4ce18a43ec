import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindModem

/// PDU encoding checked against independently published examples, then the part boundaries.
@Suite("SMS PDU encoder")
struct PDUTests {
    // MARK: Published vectors

    /// Lars Pettersson's "SMS and the PDU format" (dreamfabric.com/sms, mirrored at
    /// turbocontrol.com and subnets.ru): SMS-SUBMIT to +46708251358, TP-VP AA (4 days), "hellohello".
    @Test func dreamfabricHelloHello() throws {
        let p = try SMSPDU.encode("hellohello", to: PhoneNumber("+46708251358"), reference: 0,
                                  options: SMSSubmitOptions(validity: SMSValidityPeriod(octet: 0xAA)))
        #expect(p.count == 1)
        #expect(p[0].hexString == "0011000B916407281553F80000AA0AE8329BFD4697D9EC37")
        #expect(p[0].tpduLength == 23)
        #expect(SMSValidityPeriod(octet: 0xAA).duration == .seconds(4 * 24 * 3600))
    }

    /// python-gsmmodem, test/test_pdu.py, TestSmsPdu.test_encodeSmsSubmit: "Hello World!" to
    /// +27820001111, no validity period.
    @Test func pythonGsmmodemHelloWorld() throws {
        let p = try SMSPDU.encode("Hello World!", to: PhoneNumber("+27820001111"), reference: 0)
        #expect(p[0].hexString == "0001000B917228001011F100000CC8329BFD065DDF72363904")
    }

    /// python-gsmmodem, the same test: UCS-2 "世界您好！" to +123456789 with a 52-week validity
    /// (their PDU carries SMSC +44000000000, so only the TPDU after it is compared).
    @Test func pythonGsmmodemUCS2() throws {
        let p = try SMSPDU.encode("世界您好！", to: PhoneNumber("+123456789"), reference: 0,
                                  options: SMSSubmitOptions(validity: SMSValidityPeriod(atLeast: .seconds(52 * 7 * 24 * 3600))))
        #expect(Array(p[0].bytes.dropFirst()).hexString == "1100099121436587F90008F40A4E16754C60A8597DFF01")
        #expect(p[0].tpduLength == 23)
    }

    /// Perl Device::Gsm, t/20pdu.t: destination addresses (81 unknown, 91 international) and the
    /// packing of "The quick fox jumps over the lazy dog".
    @Test func perlDeviceGsm() throws {
        #expect(SMSPDU.address(try PhoneNumber("3289287791")).hexString == "0A812398827719")
        #expect(SMSPDU.address(try PhoneNumber("+393289287791")).hexString == "0C91932398827719")
        #expect(SMSPDU.address(try PhoneNumber("347101010")).hexString == "098143171010F0")
        #expect(SMSPDU.address(try PhoneNumber("+39347101010")).hexString == "0B919343171010F0")
        let s = GSM7.septets(of: "The quick fox jumps over the lazy dog")!
        let (ud, udl) = SMSPDU.packGSM7(s)
        #expect(udl == 0x25)
        #expect(ud.hexString == "54741914AFA7C76B90F98D07A9EB6DF81CF4B697E5203ABA0C6287F57910F97D06")
    }

    /// python-gsmmodem, TestGsm7.test_packSeptets: extension characters take an escape septet.
    @Test func pythonGsmmodemExtensionPacking() {
        let cases: [(String, String)] = [
            ("123", "31D90C"),
            ("a[]{}€", "E10D6FE3DBA036A94D19"),
            ("[{abc}]~", "1BDE0615168F37A98D6FD303"),
            ("{åΦΓΛΩΠΨΣΘ€}", "1BD44332A1542C174C6653DEA400"),
        ]
        for (text, expected) in cases {
            #expect(SMSPDU.packGSM7(GSM7.septets(of: text)!).userData.hexString == expected, "\(text)")
        }
        #expect(GSM7.septets(of: "a[]{}€") == [0x61, 0x1B, 0x3C, 0x1B, 0x3E, 0x1B, 0x28, 0x1B, 0x29, 0x1B, 0x65])
    }

    /// alt.cellular.gsm, "change SMS ID" (Nick Swan's explanation of UDH fill bits): an 11-octet
    /// header padded to 13 septets, then "Please reply".
    @Test func usenetHeaderFillBits() {
        let header = hex("0A22080B912143658709F1")
        let (ud, udl) = SMSPDU.packGSM7(GSM7.septets(of: "Please reply")!, header: header)
        #expect(udl == 0x19)
        #expect(ud.hexString == "0A22080B912143658709F180B2CBE17919242FC3D979")
    }

    /// python-gsmmodem, TestSmsPdu.test_encodeSmsSubmit_concatenated: three parts with an 8-bit
    /// reference (0), TP-RD set. Checks the 153-septet split and the one fill bit after a
    /// 6-octet header.
    @Test func pythonGsmmodemConcatenated() throws {
        let text = "Lorem ipsum dolor sit amet, consectetur adipisicing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.Ut enim ad minim veniam, quinostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.Duis aute irure dolor in reprehenderit in voluptate velit esse cillum doloe eu fugiat nulla pariatur.Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum"
        let expected = [
            "0045000B915121551532F40000A0050003000301986F79B90D4AC3E7F53688FC66BFE5A0799A0E0AB7CB741668FC76CFCB637A995E9783C2E4343C3D4F8FD3EE33A8CC4ED359A079990C22BF41E5747DDE7E9341F4721BFE9683D2EE719A9C26D7DD74509D0E6287C56F791954A683C86FF65B5E06B5C36777181466A7E3F5B0AB4A0795DDE936284C06B5D3EE741B642FBBD3E1360B14AFA7DD",
            "0045000B915121551532F40000A0050003000302DE73BABC4E0695F165F9384D0FD3D36F37A8CE6687DBE337881D16BFE5E939C89D9EA741753A28CC4EC7EB6938A88C0795C3A0F1BBDD7E93DFA0F1DB3D2FC7EB61BA8B584FCF41E13ABD0C4ACBEBF23288FC66BFE5A0B41B242FC3E56574D94D2ECBD37450DA0DB2BFD975383D4C2F83EC65769A0E2ACFE765D038CD66D7DB20F29BFD2E83CA",
            "0045000B915121551532F400008C050003000303EA2073FD9C0ED341EE3A9B1D06C1C3F274985E97BB8AF871194E2FD7E5A079DA4D07BDC7E370791CA683C675789A1CA687E920F7DB0D82CBDF6972D94D6781E675371D947683C675363C0C8AD7D3A0B7D99C1EA7C32072795E96D7DD7450FBCD66A7E9A0B03BDD06A5C9A0F29C0E6287C56F79BD0D",
        ]
        let p = try SMSPDU.encode(text, to: PhoneNumber("+15125551234"), reference: 0,
                                  options: SMSSubmitOptions(rejectDuplicates: true, concatenation: .reference8))
        #expect(p.map(\.hexString) == expected)
    }

    /// python-gsmmodem, TestUdhConcatenation: the 16-bit reference element for reference 384,
    /// part 2 of 4 is 08 04 01 80 04 02.
    @Test func sixteenBitReferenceElement() {
        #expect(SMSPDU.header(reference: 384, part: 2, of: 4) == [0x06] + hex("080401800402"))
        #expect(SMSPDU.header(reference: 23, part: 1, of: 3, .reference8) == [0x05] + hex("0003170301"))
    }

    /// python-gsmmodem, TestRelativeValidityPeriod.
    @Test func relativeValidity() {
        #expect(SMSValidityPeriod(atLeast: .seconds(30 * 60)).octet == 5)
        #expect(SMSValidityPeriod(atLeast: .seconds(16 * 3600)).octet == 151)
        #expect(SMSValidityPeriod(atLeast: .seconds(3 * 86400)).octet == 169)
        #expect(SMSValidityPeriod(atLeast: .seconds(5 * 7 * 86400)).octet == 197)
        #expect(SMSValidityPeriod(atLeast: .seconds(1000 * 7 * 86400)).octet == 255)
    }

    // MARK: Boundaries

    private func parts(_ text: String, _ number: String = "+15550100001", reference: UInt16 = 0xBEEF) throws -> [DecodedSubmit] {
        let p = try SMSPDU.encode(text, to: PhoneNumber(number), reference: reference)
        return try p.map { pdu in
            #expect(pdu.bytes.count - 1 == pdu.tpduLength)
            #expect(pdu.bytes.count <= 1 + 13 + 140, "TPDU within 140 octets of user data")
            return try DecodedSubmit.decode(pdu.bytes, announced: pdu.tpduLength)
        }
    }

    private func septetCounts(_ d: [DecodedSubmit]) -> [Int] {
        d.map { $0.concatenation == nil ? $0.userDataLength : $0.userDataLength - 8 }
    }

    @Test func gsm7At160And161Septets() throws {
        let one = try parts(String(repeating: "a", count: 160))
        #expect(one.count == 1 && one[0].userDataLength == 160 && one[0].concatenation == nil && one[0].firstOctet == 0x01)
        let two = try parts(String(repeating: "a", count: 161))
        #expect(two.count == 2)
        #expect(septetCounts(two) == [152, 9])
        #expect(two.allSatisfy { $0.firstOctet == 0x41 && $0.dataCoding == 0x00 })
        #expect(two.map { $0.concatenation?.part } == [1, 2])
        #expect(two.allSatisfy { $0.concatenation?.reference == 0xBEEF && $0.concatenation?.parts == 2 && $0.concatenation?.wide == true })
        #expect(two.map(\.text).joined() == String(repeating: "a", count: 161))
    }

    @Test func euroAt80And81() throws {
        let one = try parts(String(repeating: "€", count: 80))
        #expect(one.count == 1 && one[0].userDataLength == 160)
        let two = try parts(String(repeating: "€", count: 81))
        #expect(septetCounts(two) == [152, 10])
        #expect(two.map(\.text) == [String(repeating: "€", count: 76), String(repeating: "€", count: 5)])
        // An escape pair is never split: with one odd septet in front, part 1 stops at 151.
        let odd = try parts("a" + String(repeating: "€", count: 80))
        #expect(septetCounts(odd) == [151, 10])
        #expect(odd.map(\.text) == ["a" + String(repeating: "€", count: 75), String(repeating: "€", count: 5)])
    }

    @Test func ucs2At70And71() throws {
        let one = try parts(String(repeating: "ж", count: 70))
        #expect(one.count == 1 && one[0].userDataLength == 140 && one[0].dataCoding == 0x08)
        let two = try parts(String(repeating: "ж", count: 71))
        #expect(two.count == 2)
        #expect(two.map { ($0.userDataLength - 7) / 2 } == [66, 5])
        #expect(two.map(\.text).joined() == String(repeating: "ж", count: 71))
    }

    /// 134 and 135 UCS-2 characters: three parts either way with the 16-bit reference's 66 units
    /// per part (with an 8-bit reference, 134 would fit in two parts of 67).
    @Test func ucs2At132To135() throws {
        #expect(try parts(String(repeating: "ж", count: 132)).count == 2)
        #expect(try parts(String(repeating: "ж", count: 133)).count == 3)
        let p134 = try parts(String(repeating: "ж", count: 134))
        #expect(p134.map { ($0.userDataLength - 7) / 2 } == [66, 66, 2])
        let p135 = try parts(String(repeating: "ж", count: 135))
        #expect(p135.map { ($0.userDataLength - 7) / 2 } == [66, 66, 3])
        #expect(p135.map(\.text).joined() == String(repeating: "ж", count: 135))
        let eight = try SMSPDU.encode(String(repeating: "ж", count: 134), to: PhoneNumber("123"), reference: 1,
                                      options: SMSSubmitOptions(concatenation: .reference8))
        #expect(eight.count == 2)
        #expect(SMSEncoding(String(repeating: "ж", count: 134)).parts == 3)
        #expect(SMSEncoding(String(repeating: "ж", count: 135)).parts == 3)
    }

    @Test func surrogatePairsAreNeverSplit() throws {
        let text = String(repeating: "ж", count: 65) + "😀" + String(repeating: "ж", count: 10)
        let p = try parts(text)
        #expect(p.map { ($0.userDataLength - 7) / 2 } == [65, 12])
        #expect(p[0].text == String(repeating: "ж", count: 65))
        #expect(p[1].text.hasPrefix("😀"))
        #expect(!p.contains { $0.text.contains("\u{FFFD}") })
    }

    @Test func nationalNumbersUseTypeUnknown() throws {
        let p = try parts("hi", "7787824615")
        #expect(p[0].number == "7787824615" && p[0].typeOfAddress == 0x81)
        let q = try parts("hi", "+17787824615")
        #expect(q[0].number == "+17787824615" && q[0].typeOfAddress == 0x91)
    }

    /// Quotes, semicolons and the like are ordinary message text: they leave only as hex digits.
    @Test func messageTextOnlyEverLeavesAsHex() throws {
        let p = try SMSPDU.encode("Call me; \"now\" [ok]", to: PhoneNumber("+15550100001"), reference: 9)
        #expect(p[0].hex.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) })
        #expect(try DecodedSubmit.decode(hex: p[0].hex, announced: p[0].tpduLength).text == "Call me; \"now\" [ok]")
        #expect(ATCommand.submit(p[0]).line == "AT+CMGS=\(p[0].tpduLength)")
    }

    @Test func randomTextsRoundTrip() throws {
        var rng = SeededRandom(seed: 2024)
        let gsm = Array("@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCXYZÄÖÑÜ§¿abcxyzäöñüà^{}\\[~]|€")
        let wide: [Character] = ["ж", "✋", "😀", "中", "é", "€", "a", "👩‍👧", "ç"]
        for round in 0..<300 {
            let n = Int.random(in: 1...400, using: &rng)
            let pool = round % 2 == 0 ? gsm : wide + gsm
            let text = String((0..<n).map { _ in pool.randomElement(using: &rng)! })
            let reference = UInt16.random(in: 0...UInt16.max, using: &rng)
            let p = try parts(text, reference: reference)
            #expect(p.map(\.text).joined() == text)
            #expect(p.count == SMSEncoding(text).parts)
            if p.count > 1 {
                #expect(p.allSatisfy { $0.concatenation?.reference == Int(reference) && $0.concatenation?.parts == p.count })
            }
            // A split escape pair would decode as a space and a stray letter: the join above catches it.
        }
    }

    @Test func commandLinesCarryNoFreeText() throws {
        #expect(ATCommand.dial(try PhoneNumber("+17787824615")).line == "ATD+17787824615;")
        #expect(ATCommand.setServiceCentre(try PhoneNumber("+15550000000")).line == "AT+CSCA=\"+15550000000\",145")
        #expect(ATCommand.setServiceCentre(try PhoneNumber("5550000")).line == "AT+CSCA=\"5550000\",129")
    }
}
