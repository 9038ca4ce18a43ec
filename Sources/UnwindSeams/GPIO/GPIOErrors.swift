#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The start-up messages for GPIO failures: each names the chip and line and says what to do.
/// Shared by the libgpiod lines and the simulated chip, so a test of one reads like the other.
package enum GPIOErrors {
    /// "gpiochip0 line 17 (SELECT button)": the `device` of every GPIO DeviceError.
    package static func place(chip: String, offset: Int?, purpose: String) -> String {
        if let offset { return "\(chip) line \(offset) (\(purpose))" }
        return "\(chip) (\(purpose))"
    }

    /// The chip could not be found or opened.
    package static func openChip(chip: String, path: String, offset: Int?, purpose: String, errno e: Int32) -> DeviceError {
        let hint: String
        switch e {
        case ENOENT: hint = "\(chip) not found: check the chip name (gpiodetect lists the chips)"
        case EACCES, EPERM: hint = permission(path)
        case ENODEV, ENOTTY: hint = "\(path) is not a GPIO chip: check the chip name (gpiodetect lists the chips)"
        default: hint = ""
        }
        return DeviceError(device: place(chip: chip, offset: offset, purpose: purpose), operation: "open \(path)", errno: e, hint: hint)
    }

    /// The kernel refused to hand over the line.
    package static func request(chip: String, path: String, offset: Int, purpose: String, operation: String,
                                errno e: Int32, lineCount: Int?) -> DeviceError {
        let hint: String
        switch e {
        case EBUSY:
            hint = "GPIO line \(offset) on \(chip) is held by another consumer (see gpioinfo): stop the other program or choose another line"
        case EACCES, EPERM: hint = permission(path)
        case ENOENT: hint = "\(chip) not found: check the chip name (gpiodetect lists the chips)"
        case EINVAL:
            if let lineCount, offset < 0 || offset >= lineCount {
                hint = "\(chip) has no line \(offset): its lines are 0 to \(lineCount - 1) (gpioinfo \(chip) lists them)"
            } else {
                hint = "the kernel refused the line settings (pull-up bias and edge events need Linux 5.5 or later)"
            }
        case ENOSPC: hint = "this process already holds the most output lines the GPIO shim tracks"
        default: hint = ""
        }
        return DeviceError(device: place(chip: chip, offset: offset, purpose: purpose), operation: operation, errno: e, hint: hint)
    }

    /// A line name that no chip has (or a chip that could not be searched).
    package static func lineName(_ name: String, purpose: String, errno e: Int32, chipsPresent: Bool) -> DeviceError {
        let hint: String
        switch e {
        case ENOENT where chipsPresent:
            hint = "no GPIO line is named \"\(name)\" on any chip (gpioinfo lists the line names): fix the name, or give the line as chip:offset like gpiochip0:17"
        case ENOENT:
            hint = "no GPIO line is named \"\(name)\": there is no GPIO chip at all (no /dev/gpiochip*; gpiodetect lists the chips)"
        case EACCES, EPERM: hint = permission("/dev/gpiochip*")
        default: hint = ""
        }
        return DeviceError(device: "GPIO line \"\(name)\" (\(purpose))", operation: "find line by name", errno: e, hint: hint)
    }

    /// Setting or reading a line that is already held failed.
    package static func io(chip: String, offset: Int, purpose: String, operation: String, errno e: Int32) -> DeviceError {
        let hint = e == EBADF ? "the line was released" : ""
        return DeviceError(device: place(chip: chip, offset: offset, purpose: purpose), operation: operation, errno: e, hint: hint)
    }

    static func permission(_ path: String) -> String {
        "permission denied on \(path): add the service user to the gpio group (or a udev rule granting it)"
    }
}
