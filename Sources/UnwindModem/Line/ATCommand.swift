import UnwindCore

/// Every command the device sends. There is no case carrying free text: the only parameters are
/// numbers and validated `PhoneNumber`s, so no user text can reach an AT command line.
public enum ATCommand: Equatable, Sendable {
    /// `AT`: is anyone there (and, on an autobauding modem, learn the rate).
    case attention
    /// `ATE0`: no echo.
    case echoOff
    /// `AT+CMEE=1`: numeric +CME ERROR codes.
    case numericErrors
    /// `AT+CPIN?`
    case pinStatus
    /// `AT+CREG?`, `AT+CGREG?`, `AT+CEREG?`
    case registration(RegistrationDomain)
    /// `AT+CSQ`
    case signalQuality
    /// `AT+COPS?`
    case operatorName
    /// `AT+CMGF=0`: PDU mode (the only mode the device uses).
    case pduMode
    /// `AT+COPS=0`: automatic operator selection (after someone deregistered the modem or
    /// pinned an operator by hand).
    case automaticOperator
    /// `AT+CSCA?`: the SMS service centre the SIM holds.
    case serviceCentreQuery
    /// `AT+CSCA="<number>",<145|129>`: the SMS service centre.
    case setServiceCentre(PhoneNumber)
    /// `AT+CMGS=<length>`, then after the `> ` prompt the PDU in hex and Ctrl-Z.
    case submit(SMSSubmitPDU)
    /// `ATD<number>;`: a voice call.
    case dial(PhoneNumber)
    /// `ATH`: hang up.
    case hangUp
    /// `AT+CLCC`: the calls and their states (27.007 §7.18), asked while a call is up so that a
    /// contact picking up is told apart from a phone still ringing.
    case listCalls
    /// `AT+CFUN=1,1`: restart the modem.
    case reset
    /// A technician's command (`unwind modem at`): validated text that can neither send, store
    /// nor dial anything, and holds no control character or quote (see `TechnicianCommand`).
    case technician(TechnicianCommand)
    /// `AT+CPIN="<pin>"`: unlock the SIM (digits only, validated by `SIMPin`).
    case enterPIN(SIMPin)
    /// `AT+CSMS?`: the message service; with service 1 (phase 2+) every +CDS and +CMT must be
    /// acknowledged with AT+CNMA.
    case messageService
    /// `AT+CPMS="SM","SM","SM"`: read, delete and receive in the SIM's store, so every index a
    /// +CMTI or +CDSI names is one AT+CMGR and AT+CMGD reach.
    case messageStorage
    /// `AT+CPMS="SR"` or `AT+CPMS="SM"`: which memory AT+CMGR and AT+CMGD reach — the modem's
    /// own status-report memory, or back to the SIM's store.
    case readFrom(ReadMemory)
    /// `AT+CNMI=…`: how new messages and status reports are announced.
    case messageIndications(MessageIndications)
    /// `AT+CMGL=4`: every stored message (PDU mode).
    case listMessages
    /// `AT+CMGR=<index>`
    case readMessage(StoreIndex)
    /// `AT+CMGD=<index>`
    case deleteMessage(StoreIndex)
    /// `AT+CNMA`: a +CDS or +CMT taken (phase 2+ only).
    case acknowledgeMessage

    /// The command line, without the final CR.
    public var line: String {
        switch self {
        case .attention: "AT"
        case .echoOff: "ATE0"
        case .numericErrors: "AT+CMEE=1"
        case .pinStatus: "AT+CPIN?"
        case .registration(let d): "AT+\(d.rawValue)?"
        case .signalQuality: "AT+CSQ"
        case .operatorName: "AT+COPS?"
        case .pduMode: "AT+CMGF=0"
        case .automaticOperator: "AT+COPS=0"
        case .serviceCentreQuery: "AT+CSCA?"
        case .setServiceCentre(let n): "AT+CSCA=\"\(n.text)\",\(n.isInternational ? 145 : 129)"
        case .submit(let pdu): "AT+CMGS=\(pdu.tpduLength)"
        case .dial(let n): "ATD\(n.text);"
        case .hangUp: "ATH"
        case .listCalls: "AT+CLCC"
        case .reset: "AT+CFUN=1,1"
        case .technician(let c): c.text
        case .enterPIN(let pin): "AT+CPIN=\"\(pin.digits)\""
        case .messageService: "AT+CSMS?"
        case .messageStorage: "AT+CPMS=\"SM\",\"SM\",\"SM\""
        case .readFrom(let m): "AT+CPMS=\"\(m.rawValue)\""
        case .messageIndications(let m): "AT+CNMI=\(m.parameters)"
        case .listMessages: "AT+CMGL=4"
        case .readMessage(let i): "AT+CMGR=\(i.value)"
        case .deleteMessage(let i): "AT+CMGD=\(i.value)"
        case .acknowledgeMessage: "AT+CNMA"
        }
    }

    /// The prefix of the information lines that answer this command (they are never taken for
    /// unsolicited codes while it is in flight).
    var responsePrefix: String? {
        switch self {
        case .pinStatus: "+CPIN:"
        case .registration(let d): "+\(d.rawValue):"
        case .signalQuality: "+CSQ:"
        case .operatorName: "+COPS:"
        case .submit: "+CMGS:"
        case .setServiceCentre, .serviceCentreQuery: "+CSCA:"
        case .messageService: "+CSMS:"
        case .messageStorage, .readFrom: "+CPMS:"
        case .listMessages: "+CMGL:"
        case .readMessage: "+CMGR:"
        case .listCalls: "+CLCC:"
        case .technician(let c): c.responsePrefix
        default: nil
        }
    }

    /// The line as logs may show it: a PIN never reaches the journal.
    public var logged: String {
        if case .enterPIN = self { return "AT+CPIN=\"****\"" }
        return line
    }

    public var isSubmit: Bool {
        if case .submit = self { return true }
        return false
    }
}

/// A message memory AT+CPMS can name for reading: the SIM's store, or the status-report memory
/// some modems keep stored reports in (`+CDSI: "SR",<n>`).
public enum ReadMemory: String, Equatable, Sendable {
    case sim = "SM"
    case reports = "SR"
}
