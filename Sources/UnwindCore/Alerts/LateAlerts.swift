/// What an alert becomes when it could not go out for a long time (the modem had no network,
/// the device was off with alerts in its outbox). A contact must never read "I'm having a panic
/// attack" as if it were new when it is hours old:
///
/// - up to `lateAfter` (10 min) after it was asked for, it goes as written;
/// - later, it goes with a first line saying how long before it went out PANIC was pressed
///   ("Sent late: PANIC was pressed 3 h 10 min before this text went out."), unless part of it
///   may already be on the phone (then the rest goes as it began: a second text would be joined
///   to the first by the phone);
/// - after `tooOldAfter` (a day) it is not sent: news that old is wrong news, and the contact
///   would act on it. The outbox keeps it, failed, and `unwind status` says why.
///
/// The age is the board's clock now minus the clock when the alert was asked for; a clock set
/// back in between (a board without a real-time clock before NTP) makes no alert late.
public enum LateAlerts {
    public static let lateAfter: Int64 = 600
    public static let tooOldAfter: Int64 = 86_400

    public enum Verdict: Equatable, Sendable {
        case asWritten
        case late(note: String)
        case tooOld(age: Int64)
    }

    public static func verdict(created: WallTime, now: WallTime, purpose: AlertPurpose) -> Verdict {
        let (age, overflow) = now.secondsSinceEpoch.subtractingReportingOverflow(created.secondsSinceEpoch)
        guard !overflow, age > lateAfter else { return .asWritten }
        if age > tooOldAfter { return .tooOld(age: age) }
        return .late(note: note(age: age, purpose: purpose))
    }

    static func note(age: Int64, purpose: AlertPurpose) -> String {
        let what = switch purpose {
        case .panic: "PANIC was pressed"
        case .checkIn: "the check-in was missed"
        case .allClear: "\"I'm OK now\" was pressed"
        case .test: "this test was asked for"
        }
        return "Sent late: \(what) \(durationText(age)) before this text went out."
    }
}
