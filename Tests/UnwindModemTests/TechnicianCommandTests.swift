import Testing
import UnwindModem

/// The technician's AT commands a maintainer may send through the device: what only reads or
/// asks is let through, anything that could stop the panic path, change the line or scan the
/// network is refused.
@Suite struct TechnicianCommandTests {
    @Test func technicianCommands() throws {
        for ok in ["AT", "AT+CSQ", "at+creg?", "ATI", "ATI3", "AT&V", "AT+CMGF=?", "AT+CFUN?", "AT+IPR?", "AT+CMEE?", "AT^SYSINFO",
                   "AT+CGSN", "AT+COPS?", "AT+CSCA?", "AT+CPIN?", "AT+CEER"] {
            #expect((try? TechnicianCommand(ok)) != nil, "\(ok)")
        }
        for bad in ["", "CSQ", "AT+CMGS=12", "AT+cmgw", "AT+CMSS=1", "AT+CMGC=1", "ATD123;", "atd>1;", "ATA", "A/",
                    "AT+CSQ;+CMGS=1", "AT+CSCA=\"1\"", "AT+X='1'", "AT CSQ", "AT\r", "AT\u{1B}", "AT+CFUN=1,1", "AT+CPOWD=1",
                    "AT+QPOWD", "AT+Ç", "AT" + String(repeating: "E", count: 63), "ATV0", "ATQ1", "ATZ", "AT&F", "ATE1",
                    "AT+IPR=9600", "AT+CMEE=0", "AT+IFC=2,2", "ATH",
                    // Anything that can stop the panic path, and a network scan.
                    "AT+COPS=2", "AT+COPS=?", "AT+CLCK=SC,1,1234", "AT+CPIN=1234", "AT+CPWD=SC,1,2", "AT+CSCLK=2", "AT+CRESET",
                    "AT+CSCA=123", "AT+CMGF=1", "AT+CMGD=1,4", "AT+CUSD=1,*100#", "AT+CCFC=0,3", "AT+CGATT=0", "AT+CNMI=0,0"] {
            #expect(throws: TechnicianCommand.Refusal.self, "\(bad.debugDescription)") { try TechnicianCommand(bad) }
        }
        #expect(ATCommand.technician(try TechnicianCommand("AT+CSQ")).line == "AT+CSQ")
    }
}
