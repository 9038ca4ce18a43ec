import Foundation
import Glibc
import Testing
import UnwindTestSupport
import UnwindSimulatedHardware
import UnwindLinuxHardware
import UnwindSeams

@Suite("Serial port")
struct SerialPortTests {
    @Test func unknownBaudIsAClearError() {
        #expect(throws: DeviceError.self) { try SerialPort(SerialConfiguration(path: "/dev/ttyS0", baud: 12345)) }
        do { _ = try SerialPort(SerialConfiguration(path: "/dev/ttyS0", baud: 12345)) } catch {
            #expect(error.description.contains("set baud rate 12345"))
            #expect(error.hint.contains("9600") && error.hint.contains("115200"))
        }
        for b in SerialConfiguration.supportedBauds { #expect((try? SerialConfiguration.speed(forBaud: b)) != nil) }
    }

    @Test func missingDeviceNamesThePathAndSuggestsByID() throws {
        let port = try SerialPort(SerialConfiguration(path: "/dev/serial/by-id/usb-nothing-here"))
        do { try port.open(); Issue.record("opened a missing device") } catch {
            #expect(error.errno == ENOENT)
            #expect(error.description.contains("/dev/serial/by-id/usb-nothing-here"))
            #expect(error.hint.contains("/dev/serial/by-id/"))
        }
        #expect(port.descriptor == nil)
    }

    @Test func notATerminal() throws {
        let port = try SerialPort(SerialConfiguration(path: "/dev/null"))
        #expect(throws: DeviceError.self) { try port.open() }
        do { try port.open() } catch { #expect(error.errno == ENOTTY) }
    }

    @Test func secondOpenIsBusy() throws {
        let sim = try ModemSimulator()
        let a = try SerialPort(SerialConfiguration(path: sim.path))
        try a.open()
        let b = try SerialPort(SerialConfiguration(path: sim.path))
        do { try b.open(); Issue.record("two programs on one modem") } catch {
            #expect(error.errno == EBUSY)
            #expect(error.hint.contains("ModemManager"))
        }
        a.close()
        try b.open()  // released on close
        b.close()
    }

    @Test func rawNonBlockingIO() throws {
        let sim = try ModemSimulator()
        let port = try SerialPort(SerialConfiguration(path: sim.path, baud: 9600, hardwareFlowControl: false))
        try port.open()
        var bytes: [UInt8] = []
        #expect(try port.read(into: &bytes) == 0, "nothing there: returns at once")
        // Raw mode: no echo, no CR/LF translation, every byte value passes.
        #expect(try port.write(Array("AT\r".utf8)[...]) == 3)
        sim.step()
        #expect(sim.commands == ["AT"])
        sim.step()
        // Until the whole answer has crossed the pseudo-terminal (it may come in pieces).
        let answer = Array("AT\r\r\nOK\r\n".utf8)
        _ = try waitUntil(.seconds(10), every: .milliseconds(1)) {
            _ = try port.read(into: &bytes)
            return bytes.count >= answer.count
        }
        #expect(bytes == answer, "echo from the modem, CR kept as CR")
        sim.unplug()
        #expect(throws: DeviceError.self) { _ = try port.read(into: &bytes) }
    }
}
