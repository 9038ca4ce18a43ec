import UnwindModem

/// Short timeouts and backoffs for a modem that answers at once (the scripted modem in memory or
/// over a pseudo-terminal), so a scenario runs in tens of milliseconds: every suite's one fast
/// configuration. `change` adjusts it for one suite or test.
public func fastModemConfiguration(_ change: (inout ModemConfiguration) -> Void = { _ in }) -> ModemConfiguration {
    var t = ModemTimeouts()
    t.command = .milliseconds(300)
    t.syncAttempt = .milliseconds(100)
    t.prompt = .milliseconds(200)
    t.submit = .milliseconds(400)
    t.dial = .milliseconds(300)
    t.dialPatience = .seconds(2)
    t.drain = .milliseconds(50)
    t.resultGrace = .milliseconds(100)
    t.simBusyRetry = .milliseconds(40)
    t.simProblemRetry = .milliseconds(100)
    t.registrationPoll = .milliseconds(100)
    t.registrationPatience = .milliseconds(300)
    t.statusRefresh = .seconds(60)
    t.reset = .milliseconds(400)
    t.bootSettle = .milliseconds(200)
    var b = ModemBackoff()
    b.first = .milliseconds(30)
    b.maximum = .milliseconds(200)
    b.reopenFirst = .milliseconds(30)
    b.reopenMaximum = .milliseconds(100)
    var c = ModemConfiguration(timeouts: t, backoff: b)
    change(&c)
    return c
}
