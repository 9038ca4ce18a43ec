import Foundation
import Testing
import UnwindSimulatedHardware
import UnwindCore
import UnwindLinuxHardware
import UnwindModem

/// What a broken or hostile modem can say about incoming messages — indications, listings,
/// reads, inline PDUs — against the whole session: never a crash, never a command built from
/// its text (every command line has one of the device's own forms, indexes digits only), and
/// the panic path goes on.
@Suite("Hostile incoming lines (in memory, simulated time)")
struct HostileIncomingTests {
    /// Every command the device may write, as a pattern: nothing outside these.
    static let allowed = try! NSRegularExpression(pattern: #"""
        ^(AT|ATE0|AT\+CMEE=1|AT\+CPIN\?|AT\+CMGF=0|AT\+C(G|E)?REG\?|AT\+CSQ|AT\+COPS\?|AT\+CSCA\?|AT\+CSMS\?|AT\+CPMS="SM","SM","SM"|AT\+CNMI=[0-9],1,0,[0-9],0|AT\+CMGL=4|AT\+CMG[RD]=[0-9]{1,4}|AT\+CNMA|AT\+CMGS=[0-9]{1,3}|ATH|ATD\+?[0-9]{3,20};)$
        """#.trimmingCharacters(in: .whitespacesAndNewlines))

    static func expectOnlyOwnCommands(_ sim: any SimulatedModem, sourceLocation: SourceLocation = #_sourceLocation) {
        for c in sim.commands {
            let matched = allowed.firstMatch(in: c, range: NSRange(c.startIndex..., in: c)) != nil
            #expect(matched, "a command the device never builds: \(c.debugDescription)", sourceLocation: sourceLocation)
        }
    }

    static let unsolicited: [(String, [String])] = [
        ("index too large", ["+CMTI: \"SM\",99999"]),
        ("negative index", ["+CMTI: \"SM\",-1"]),
        ("a command in the index", ["+CMTI: \"SM\",1;ATD911"]),
        ("a quote in the index", ["+CMTI: \"SM\",\"1\""]),
        ("three fields", ["+CMTI: \"SM\",1,2"]),
        ("no fields", ["+CMTI:"]),
        ("another store", ["+CMTI: \"ME\",2"]),
        ("report index not a number", ["+CDSI: \"SM\",abc"]),
        ("report index beyond the store", ["+CDSI: \"SM\",4000"]),
        ("+CDS without its PDU", ["+CDS: 25", "OK"]),
        ("+CDS with text", ["+CDS: 25", "NOT HEX AT ALL"]),
        ("+CDS with odd hex", ["+CDS: 3", "ABC"]),
        ("+CDS with a wrong length", ["+CDS: 999", "0006170B915155100000F1621010214365006210102143650000"]),
        ("+CDS of a deliver", ["+CDS: 13", "00040B915155100000F1000062101021436500"]),
        ("+CDS of a huge hex line", ["+CDS: 255", String(repeating: "A", count: 1000)]),
        ("+CMT truncated", ["+CMT: ,5", "00"]),
        ("+CMT with a header overrun", ["+CMT: ,24", "00440B915155100000F1000862101021436500040F000300"]),
        ("a vendor's store-full", ["+QIND: \"smsfull\",\"SM\""]),
    ]

    @Test func hostileIndicationsChangeNothing() throws {
        let rig = try ModemRig()
        #expect(rig.ready())
        for (_, lines) in Self.unsolicited {
            rig.sim.inject(lines)
            rig.run(for: .milliseconds(30))
        }
        let a = alert()
        let id = rig.modem.send(a, slot: 1, at: rig.now)
        #expect(rig.settle())
        if case .sent = rig.modem.message(id)?.state {} else { Issue.record("\(String(describing: rig.modem.message(id)))") }
        Self.expectOnlyOwnCommands(rig.sim)
        #expect(!rig.sim.commands.contains { $0.contains("99999") || $0.contains("ATD911") })
        expectClean(rig.sim, texts: [a.message])
    }

    /// Listings and reads that are wrong in every way: the device reads what it can, keeps what it
    /// cannot read for the maintainer, and leaves the SIM clean.
    @Test func hostileListingsAndReads() throws {
        var script = ModemScript()
        script.replies["AT+CMGL=4"] = [[
            "+CMGL: 1;ATD911,0,,5", "+CMGL: 99999,0,,5", "+CMGL: -3,1,,4", "+CMGL: abc", "+CMGL:", "ZZZZ",
            "+CMGL: 2,0,,20", "00040B915155100000F1000062101021436500", "OK",
        ]]
        let rig = try ModemRig(script: script, configure: { $0.timeouts.storeSweep = .seconds(5) })
        let good = DeliverEncoder.encode(from: "+15550100001", text: "fine", reference: 1, time: 1_767_225_600)[0]
        rig.sim.plant(StoredSMS(pdu: good))                                   // 1
        rig.sim.plant(StoredSMS(pdu: Array(good.prefix(12))))                 // 2: cut short
        rig.sim.plant(StoredSMS(pdu: good, length: 200))                      // 3: a wrong length
        rig.sim.plant(StoredSMS(pdu: [0x00, 0x44] + Array(repeating: 0xFF, count: 30)))  // 4: nonsense
        rig.sim.plant(StoredSMS(stat: 3, pdu: [0x00, 0x01, 0x00]))            // 5: a stored outgoing message
        #expect(rig.ready())
        // The script's own listing named only index 2; the periodic sweep finds the rest.
        #expect(rig.run(until: { rig.sim.store.keys.sorted() == [5] }, within: .seconds(10)))
        #expect(rig.inbox.replies.map(\.text).contains("fine"))
        #expect(rig.inbox.replies.filter { $0.text.hasPrefix("(a message that could not be read") }.count == 3)
        Self.expectOnlyOwnCommands(rig.sim)
        expectClean(rig.sim)
    }

    /// A read answer with noise around the PDU, a +CMGR of a stored outgoing message, an
    /// empty index, +CMS ERROR 321: nothing is stored that was not read, nothing deleted that
    /// was not stored.
    @Test func oddReadAnswers() throws {
        var script = ModemScript()
        script.replies["AT+CMGR=7"] = [["+CMGR: 0,,5"]]           // no PDU line at all
        script.replies["AT+CMGR=8"] = [["+CMGR: 2,,5", "0001000B91", "OK"]]
        script.replies["AT+CMGR=9"] = [["+CMS ERROR: 321"]]
        let rig = try ModemRig(script: script)
        #expect(rig.ready())
        rig.sim.inject(["+CMTI: \"SM\",7", "+CMTI: \"SM\",8", "+CMTI: \"SM\",9"])
        rig.run(for: .seconds(2))
        #expect(!rig.sim.commands.contains { $0.hasPrefix("AT+CMGD") })
        #expect(rig.inbox.replies.isEmpty)
        Self.expectOnlyOwnCommands(rig.sim)
    }
}
