// The libgpiod shim behind CUnwindGPIO.h, Linux only: chip lookup, the outputs to drive low on
// the way out, and the public API. What differs between libgpiod v1 (1.6, Debian bookworm) and
// v2 (2.x) is in gpiod_v1.c and gpiod_v2.c, behind gpiod_impl.h.
#if defined(__linux__)

#ifndef _GNU_SOURCE
#define _GNU_SOURCE // scandir's versionsort
#endif

#include "gpiod_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNWIND_GPIO_MAX_OUTPUTS 16

// ---------------------------------------------------------------------------------------------
// Small helpers shared by both implementations.

int unwind_gpiod_copy_string(char *out, size_t out_len, const char *s)
{
    if (!out || out_len == 0)
        return 0;
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (n >= out_len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(out, s, n + 1);
    return 0;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static int is_gpiochip_entry(const struct dirent *d)
{
    return strncmp(d->d_name, "gpiochip", 8) == 0 && all_digits(d->d_name + 8);
}

/// Every /dev/gpiochipN, in version order (gpiochip2 before gpiochip10). Returns the count, or
/// -1 with errno; the caller frees each entry and the list.
static int list_chips(struct dirent ***list)
{
    return scandir("/dev", list, is_gpiochip_entry, versionsort);
}

static void free_chip_list(struct dirent **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

// ---------------------------------------------------------------------------------------------
// Outputs to drive low on the way out: lock-free slots a signal handler can read.

static unwind_gpio_line *_Atomic outputs[UNWIND_GPIO_MAX_OUTPUTS];

static int register_output(unwind_gpio_line *line)
{
    for (int i = 0; i < UNWIND_GPIO_MAX_OUTPUTS; i++) {
        unwind_gpio_line *expected = NULL;
        if (atomic_compare_exchange_strong(&outputs[i], &expected, line))
            return 0;
    }
    errno = ENOSPC;
    return -1;
}

static void unregister_output(unwind_gpio_line *line)
{
    for (int i = 0; i < UNWIND_GPIO_MAX_OUTPUTS; i++) {
        unwind_gpio_line *expected = line;
        atomic_compare_exchange_strong(&outputs[i], &expected, NULL);
    }
}

void unwind_gpio_drive_all_low(void)
{
    int saved = errno;
    for (int i = 0; i < UNWIND_GPIO_MAX_OUTPUTS; i++) {
        unwind_gpio_line *line = atomic_load(&outputs[i]);
        if (line)
            (void)unwind_gpiod_line_set(line, 0);
    }
    errno = saved;
}

static struct sigaction previous_actions[NSIG];
static atomic_int handler_installed[NSIG];
static atomic_int atexit_installed;

static void drive_low_at_exit(void)
{
    unwind_gpio_drive_all_low();
}

static void drive_low_on_signal(int sig)
{
    int saved = errno;
    unwind_gpio_drive_all_low();
    if (sig > 0 && sig < NSIG)
        sigaction(sig, &previous_actions[sig], NULL);
    errno = saved;
    // Pending until this handler returns, then delivered to the previous disposition.
    raise(sig);
}

static int install_signal(int sig)
{
    if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) {
        errno = EINVAL;
        return -1;
    }
    if (atomic_exchange(&handler_installed[sig], 1))
        return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = drive_low_on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK; // runs on the alternate stack if one exists (stack overflow)
    if (sigaction(sig, &sa, &previous_actions[sig]) != 0) {
        atomic_store(&handler_installed[sig], 0);
        return -1;
    }
    return 0;
}

int unwind_gpio_install_exit_handlers(const int *extra_signals, size_t count)
{
    static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
    if (!atomic_exchange(&atexit_installed, 1) && atexit(drive_low_at_exit) != 0) {
        atomic_store(&atexit_installed, 0);
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
        if (install_signal(crash_signals[i]) < 0)
            return -1;
    for (size_t i = 0; extra_signals && i < count; i++)
        if (install_signal(extra_signals[i]) < 0)
            return -1;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The public API.

int unwind_gpio_resolve_chip(const char *chip, char *path, size_t path_len)
{
    if (!chip || !*chip || !path) {
        errno = ENOENT;
        return -1;
    }
    char candidate[256];
    int n;
    if (chip[0] == '/')
        n = snprintf(candidate, sizeof(candidate), "%s", chip);
    else if (all_digits(chip))
        n = snprintf(candidate, sizeof(candidate), "/dev/gpiochip%s", chip);
    else if (strchr(chip, '/'))
        n = snprintf(candidate, sizeof(candidate), "/dev/%s", chip);
    else {
        n = snprintf(candidate, sizeof(candidate), "/dev/%s", chip);
        struct stat st;
        if (n > 0 && (size_t)n < sizeof(candidate) && stat(candidate, &st) != 0 && errno == ENOENT) {
            // Not a device name: perhaps the chip's label (gpiodetect shows it in brackets).
            struct dirent **list = NULL;
            int count = list_chips(&list);
            int found = 0;
            for (int i = 0; i < count && !found; i++) {
                char dev[300], label[64];
                snprintf(dev, sizeof(dev), "/dev/%s", list[i]->d_name);
                if (unwind_gpiod_chip_info(dev, NULL, 0, label, sizeof(label), NULL) == 0 &&
                    strcmp(label, chip) == 0) {
                    n = snprintf(candidate, sizeof(candidate), "%s", dev);
                    found = 1;
                }
            }
            if (count >= 0)
                free_chip_list(list, count);
            if (!found) {
                errno = ENOENT;
                return -1;
            }
        }
    }
    if (n < 0 || (size_t)n >= sizeof(candidate)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return unwind_gpiod_copy_string(path, path_len, candidate);
}

int unwind_gpio_chip_info(const char *path, char *name, size_t name_len, char *label,
                          size_t label_len, unsigned int *num_lines)
{
    return unwind_gpiod_chip_info(path, name, name_len, label, label_len, num_lines);
}

int unwind_gpio_find_line(const char *name, char *chip_path, size_t chip_path_len,
                          unsigned int *offset)
{
    if (!name || !*name || !offset) {
        errno = ENOENT;
        return -1;
    }
    struct dirent **list = NULL;
    int count = list_chips(&list);
    if (count < 0)
        return -1;
    int rc = -1, first_error = 0;
    for (int i = 0; i < count; i++) {
        char dev[300];
        snprintf(dev, sizeof(dev), "/dev/%s", list[i]->d_name);
        if (unwind_gpiod_offset_of_name(dev, name, offset) == 0) {
            rc = unwind_gpiod_copy_string(chip_path, chip_path_len, dev);
            break;
        }
        // A chip we could not open might hold the line: that is the better error to report.
        if (errno != ENOENT && first_error == 0)
            first_error = errno;
    }
    free_chip_list(list, count);
    if (rc < 0 && errno != ENAMETOOLONG)
        errno = first_error ? first_error : ENOENT;
    return rc;
}

unwind_gpio_line *unwind_gpio_request_output(const char *chip_path, unsigned int offset,
                                             const char *consumer, int initial_value)
{
    unwind_gpio_line *line = unwind_gpiod_request_output(chip_path, offset, consumer, initial_value);
    if (line && register_output(line) < 0) {
        unwind_gpiod_line_release(line);
        errno = ENOSPC;
        return NULL;
    }
    return line;
}

unwind_gpio_line *unwind_gpio_request_input_edges(const char *chip_path, unsigned int offset,
                                                  const char *consumer, unwind_gpio_bias bias)
{
    unwind_gpio_line *line = unwind_gpiod_request_input_edges(chip_path, offset, consumer, bias);
    if (!line)
        return NULL;
    // The loop reads only after poll(2) says readable, but a read must never block it anyway.
    int flags = fcntl(line->fd, F_GETFL);
    if (flags < 0 || fcntl(line->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        int saved = errno;
        unwind_gpiod_line_release(line);
        errno = saved;
        return NULL;
    }
    return line;
}

int unwind_gpio_line_set(unwind_gpio_line *line, int value)
{
    if (!line || !line->is_output) {
        errno = EPERM;
        return -1;
    }
    return unwind_gpiod_line_set(line, value);
}

int unwind_gpio_line_get(unwind_gpio_line *line)
{
    if (!line) {
        errno = EPERM;
        return -1;
    }
    return unwind_gpiod_line_get(line);
}

int unwind_gpio_line_fd(const unwind_gpio_line *line)
{
    return line ? line->fd : -1;
}

unsigned int unwind_gpio_line_offset(const unwind_gpio_line *line)
{
    return line ? line->offset : 0;
}

int unwind_gpio_line_read_edges(unwind_gpio_line *line, unwind_gpio_edge *edges,
                                unsigned int max_edges)
{
    if (!line || line->fd < 0 || !edges) {
        errno = EPERM;
        return -1;
    }
    if (max_edges == 0)
        return 0;
    int n = unwind_gpiod_read_edges(line, edges, max_edges);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    return n;
}

void unwind_gpio_line_release(unwind_gpio_line *line)
{
    if (!line)
        return;
    if (line->is_output)
        unregister_output(line);
    unwind_gpiod_line_release(line);
}

#endif // __linux__