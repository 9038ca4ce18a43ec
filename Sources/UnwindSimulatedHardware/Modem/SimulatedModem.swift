import UnwindCore
import UnwindSeams

/// A scripted modem plugged in somewhere — on a pseudo-terminal (`ModemSimulator`) or on a line
/// in memory (`SimulatedModemLine`) — that a test drives and reads back the same way wherever
/// it is: the same scenario runs on both.
public protocol SimulatedModem: AnyObject {
    /// Runs `body` on the modem (under the host's lock when it has a thread).
    func withScriptedModem<R: Sendable>(_ body: (inout ScriptedModem) -> R) -> R
    /// Sends lines now (framed CR LF … CR LF), e.g. an unsolicited code at a chosen moment.
    func inject(_ lines: [String])
    /// Restarts: forgets ATE0 and everything in flight, prints the boot messages.
    func restart()
    /// The USB modem goes away: the line is gone and its path with it.
    func unplug()
    /// …and comes back (at the same path, booting).
    func replug() throws(DeviceError)
    /// The modem's time now (the simulated clock, or the monotonic one on a pty).
    var modemNow: Instant { get }
}

extension SimulatedModem {
    public func setScript(_ change: (inout ModemScript) -> Void) {
        withScriptedModem { change(&$0.script) }
    }

    /// Every byte the device wrote, in order, across replugs.
    public var received: [UInt8] { withScriptedModem { $0.received } }
    /// Every command line (without CR), in order.
    public var commands: [String] { withScriptedModem { $0.commands } }
    /// Everything typed into each prompt, and whether it ended in Ctrl-Z (sent) or ESC.
    public var prompts: [(text: [UInt8], sent: Bool)] { withScriptedModem { $0.prompts } }
    /// Parts accepted (`+CMGS` answered) or swallowed (`silence`).
    public var parts: [SimulatedPart] { withScriptedModem { $0.parts } }
    /// Rules the device broke. A correct device leaves this empty.
    public var violations: [String] { withScriptedModem { $0.violations } }
    public var calls: [String] { withScriptedModem { $0.calls } }
    /// Every number that picked up a call, in order.
    public var answeredCalls: [String] { withScriptedModem { $0.answeredCalls } }
    public var serviceCentre: String? { withScriptedModem { $0.serviceCentre } }
    /// When the first byte of the first `AT+CMGS` arrived.
    public var firstSubmitAt: Instant? { withScriptedModem { $0.firstSubmitAt } }
    public var submitCount: Int { withScriptedModem { $0.submitCount } }
    /// Complete messages accepted with `+CMGS`, parts joined by their concatenation reference.
    public var delivered: [SimulatedSMS] { withScriptedModem { $0.delivered } }
    /// Also counting parts that got no answer (in doubt: a real network may have sent them).
    public var possiblyDelivered: [SimulatedSMS] { withScriptedModem { $0.possiblyDelivered } }

    // Receiving.

    /// Someone sends the device an SMS now (see `ScriptedModem.receiveSMS`).
    public func receiveSMS(from: String, text: String, reference: Int? = nil, wide: Bool = false) {
        let now = modemNow
        withScriptedModem { $0.receiveSMS(from: from, text: text, at: now, reference: reference, wide: wide) }
    }

    /// A raw PDU (SMSC field first) arrives now.
    public func receivePDU(_ pdu: [UInt8]) {
        let now = modemNow
        withScriptedModem { $0.receivePDU(pdu, at: now) }
    }

    /// A message put straight into the SIM's store; its index (nil: the store is full).
    @discardableResult
    public func plant(_ message: StoredSMS) -> Int? { withScriptedModem { $0.plant(message) } }

    /// The SIM's store, by index.
    public var store: [Int: StoredSMS] { withScriptedModem { $0.store } }
    public var reportStore: [Int: StoredSMS] { withScriptedModem { $0.reportStore } }
    public var heldByNetwork: Int { withScriptedModem { $0.heldByNetwork.count } }
    public var reportsSent: [SentReport] { withScriptedModem { $0.reportsSent } }
    public var deletions: [Int] { withScriptedModem { $0.deletions } }
    public var acknowledgementsDue: Int { withScriptedModem { $0.acknowledgementsDue } }
    /// The call in progress (nil: none).
    public var callNumber: String? { withScriptedModem { $0.callNumber } }
}
