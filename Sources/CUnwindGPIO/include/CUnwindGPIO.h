#pragma once
// A tiny, stable shim over libgpiod for Unwind's Swift code.
//
// Swift sees only this header: opaque line handles, one small edge struct and plain ints, the
// same whichever libgpiod is installed (v1 on Debian bookworm, v2 elsewhere): gpiod_v1.c or
// gpiod_v2.c, picked with `#if defined(GPIOD_LINE_BULK_MAX_LINES)` (a v1-only macro).
//
// Conventions: functions returning int return -1 with errno set on failure; functions returning
// a pointer return NULL with errno set. Nothing here aborts, prints or retries: the Swift side
// (GPIOMotor / GPIOButtons over LibgpiodBackend) calls again on EINTR and turns errno into a
// message a person can act on.
//
// Levels are physical (1 = high): the shim never asks the kernel to invert a line (no
// ACTIVE_LOW), so the edge kinds are what a scope on the pin would show.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A requested line: an output, or an input with both-edge events. Owns everything libgpiod
/// needs to keep the request alive (v1: the chip and line; v2: the request and an event buffer).
typedef struct unwind_gpio_line unwind_gpio_line;

#if defined(__has_attribute)
#if __has_attribute(enum_extensibility)
#define UNWIND_GPIO_CLOSED_ENUM __attribute__((enum_extensibility(closed)))
#endif
#endif
#ifndef UNWIND_GPIO_CLOSED_ENUM
#define UNWIND_GPIO_CLOSED_ENUM
#endif
#if defined(__has_attribute)
#if __has_attribute(swift_name)
#define UNWIND_GPIO_SWIFT_NAME(n) __attribute__((swift_name(#n)))
#endif
#endif
#ifndef UNWIND_GPIO_SWIFT_NAME
#define UNWIND_GPIO_SWIFT_NAME(n)
#endif

/// The pull resistor an input asks for. Imported into Swift as a closed enum.
typedef enum UNWIND_GPIO_CLOSED_ENUM {
    UNWIND_GPIO_BIAS_AS_IS UNWIND_GPIO_SWIFT_NAME(asIs) = 0,
    UNWIND_GPIO_BIAS_DISABLED UNWIND_GPIO_SWIFT_NAME(disabled) = 1,
    UNWIND_GPIO_BIAS_PULL_UP UNWIND_GPIO_SWIFT_NAME(pullUp) = 2,
    UNWIND_GPIO_BIAS_PULL_DOWN UNWIND_GPIO_SWIFT_NAME(pullDown) = 3,
} unwind_gpio_bias;

/// One edge event as the kernel recorded it.
typedef struct {
    /// The line's offset on its chip.
    unsigned int offset;
    /// 1: the pin went low → high; 0: high → low.
    int rising;
    /// When the kernel saw the edge, CLOCK_MONOTONIC nanoseconds (v2 asks for the monotonic
    /// event clock explicitly; the v1 uAPI stamps with ktime_get_ns, monotonic since Linux 5.7).
    uint64_t timestamp_ns;
} unwind_gpio_edge;

/// Turns a chip description into a device path: "/dev/gpiochip0" as is, "0" → /dev/gpiochip0,
/// "gpiochip0" → /dev/gpiochip0, otherwise /dev/<name> if it exists, else the chip whose label
/// is `chip` (e.g. "pinctrl-bcm2711"). -1 with ENOENT when nothing matches; ENAMETOOLONG if
/// `path_len` is too small.
int unwind_gpio_resolve_chip(const char *chip, char *path, size_t path_len);

/// Opens the chip at `path` just long enough to read its kernel name, label and line count.
int unwind_gpio_chip_info(const char *path, char *name, size_t name_len,
                          char *label, size_t label_len, unsigned int *num_lines);

/// Finds a line by its name (e.g. "GPIO17") on every /dev/gpiochip*, in version order; the
/// first match wins. Writes the chip's device path and the line's offset. -1 with ENOENT when
/// no chip has such a line (also when there is no chip at all).
int unwind_gpio_find_line(const char *name, char *chip_path, size_t chip_path_len,
                          unsigned int *offset);

/// Requests `offset` on the chip at `chip_path` as a push-pull output driven to
/// `initial_value` (0 or 1) from the first instant. The line is also registered for
/// unwind_gpio_drive_all_low. EBUSY: another consumer holds it; EINVAL: no such offset.
unwind_gpio_line *unwind_gpio_request_output(const char *chip_path, unsigned int offset,
                                             const char *consumer, int initial_value);

/// Requests `offset` as an input with `bias`, reporting both edges with monotonic timestamps.
/// The event descriptor is made O_NONBLOCK, so reads never wait.
unwind_gpio_line *unwind_gpio_request_input_edges(const char *chip_path, unsigned int offset,
                                                  const char *consumer, unwind_gpio_bias bias);

/// Drives an output line: 0 low, anything else high.
int unwind_gpio_line_set(unwind_gpio_line *line, int value);

/// An output's or an input's physical level: 1 high, 0 low; -1 with errno.
int unwind_gpio_line_get(unwind_gpio_line *line);

/// The descriptor that becomes readable when edge events wait (inputs), or -1 (outputs).
int unwind_gpio_line_fd(const unwind_gpio_line *line);

/// The line's offset on its chip.
unsigned int unwind_gpio_line_offset(const unwind_gpio_line *line);

/// Reads up to `max_edges` pending edge events, oldest first, without blocking.
/// Returns how many were read; 0 when none is waiting (EAGAIN is not an error here).
int unwind_gpio_line_read_edges(unwind_gpio_line *line, unwind_gpio_edge *edges,
                                unsigned int max_edges);

/// Releases the line (and for v1 its chip) and frees the handle. Does not change an output's
/// level first: callers that want it low set it low before releasing. NULL is ignored.
void unwind_gpio_line_release(unwind_gpio_line *line);

/// Drives every output line this process holds through the shim low. Async-signal-safe in
/// practice: no locks, no allocation, one ioctl per line; errno is preserved.
void unwind_gpio_drive_all_low(void);

/// Installs "drive every output low" for process exit (atexit) and for the crash signals
/// (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS) plus `extra_signals`. Each
/// handler drives the outputs low, puts back the handler that was there before and re-raises,
/// so core dumps, Swift's backtracer and default actions still happen. Idempotent per signal.
int unwind_gpio_install_exit_handlers(const int *extra_signals, size_t count);

#ifdef __cplusplus
}
#endif
