/// After the alerts went out: replies, readiness, follow-ups (issue 15; filled in step by step).
extension DeviceCore {
    mutating func followUpUpdate(slot: Int, purpose: AlertPurpose, delivery: AlertDelivery, at now: Moment, effects: inout [Effect]) {}

    mutating func replyReceived(_ reply: IncomingReply, at now: Moment, effects: inout [Effect]) {}

    mutating func readinessChanged(_ readiness: AlertReadiness, at now: Moment, effects: inout [Effect]) {}
}
