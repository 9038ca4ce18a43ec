import UnwindModem

/// Short waits for a modem that answers at once (the scripted modem in memory or over a
/// pseudo-terminal): an answer, a prompt, a submit's confirmation and the retries after a
/// failure take tens of milliseconds, not the seconds a real network needs. The device's own
/// cadences (registration, status refresh, SIM retries, a restart's settling) stay its own;
/// `change` adjusts the rest for a suite or a test.
public func fastModemConfiguration(_ change: (inout ModemConfiguration) -> Void = { _ in }) -> ModemConfiguration {
    var t = ModemTimeouts()
    t.command = .milliseconds(300)
    t.syncAttempt = .milliseconds(100)
    t.prompt = .milliseconds(200)
    t.submit = .milliseconds(400)
    t.drain = .milliseconds(50)
    t.resultGrace = .milliseconds(100)
    var b = ModemBackoff()
    b.first = .milliseconds(30)
    b.maximum = .milliseconds(200)
    b.reopenFirst = .milliseconds(30)
    b.reopenMaximum = .milliseconds(100)
    var c = ModemConfiguration(timeouts: t, backoff: b)
    change(&c)
    return c
}

/// The fast configuration with more patience for an answer: a modem simulator on a
/// pseudo-terminal, the loop and the maintainer's processes share the machine on the real clock.
public var patientModemConfiguration: ModemConfiguration {
    fastModemConfiguration {
        $0.timeouts.command = .milliseconds(500)
        $0.timeouts.syncAttempt = .milliseconds(200)
        $0.timeouts.prompt = .milliseconds(500)
        $0.timeouts.submit = .seconds(2)
    }
}
