// The libgpiod shim behind CUnwindGPIO.h. Linux only; two implementations of the same small
// API: libgpiod v1 (1.6, Debian bookworm) and libgpiod v2 (2.x). Only the v1 branch is
// compiled on the development machine; the v2 branch follows the v2 gpiod.h.
#if defined(__linux__)

#ifndef _GNU_SOURCE
#define _GNU_SOURCE // scandir's versionsort
#endif

#include "CUnwindGPIO.h"

#include <gpiod.h>

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

#define UNWIND_GPIO_READ_BATCH 16u
#define UNWIND_GPIO_MAX_OUTPUTS 16

// ---------------------------------------------------------------------------------------------
// Small helpers shared by both implementations.

static int copy_string(char *out, size_t out_len, const char *s)
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
// Per-version primitives:
//   chip_info_at(path, name, label, num_lines)
//   chip_offset_of_name(path, name, &offset)    -1/ENOENT when the chip has no such line
//   request_output / request_input_edges / line_set / read_edges / line_release

#if defined(GPIOD_LINE_BULK_MAX_LINES)
// ============================== libgpiod v1 (1.x) ==============================

struct unwind_gpio_line {
    struct gpiod_chip *chip; // v1 lines live inside their chip: one chip per request
    struct gpiod_line *line;
    unsigned int offset;
    int fd;
    int is_output;
};

static int chip_info_at(const char *path, char *name, size_t name_len, char *label,
                        size_t label_len, unsigned int *num_lines)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return -1;
    int rc = 0;
    if (copy_string(name, name_len, gpiod_chip_name(chip)) < 0 ||
        copy_string(label, label_len, gpiod_chip_label(chip)) < 0)
        rc = -1;
    if (num_lines)
        *num_lines = gpiod_chip_num_lines(chip);
    int saved = errno;
    gpiod_chip_close(chip);
    errno = saved;
    return rc;
}

static int chip_offset_of_name(const char *path, const char *name, unsigned int *offset)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return -1;
    struct gpiod_line *line = gpiod_chip_find_line(chip, name); // NULL + ENOENT if absent
    int rc = -1;
    if (line) {
        *offset = gpiod_line_offset(line);
        rc = 0;
    }
    int saved = errno;
    gpiod_chip_close(chip);
    errno = saved;
    return rc;
}

/// Opens the chip and gets the line object; NULL with errno (EINVAL: offset out of range).
static struct unwind_gpio_line *open_line(const char *chip_path, unsigned int offset)
{
    struct unwind_gpio_line *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->fd = -1;
    l->offset = offset;
    l->chip = gpiod_chip_open(chip_path);
    if (!l->chip) {
        int saved = errno;
        free(l);
        errno = saved;
        return NULL;
    }
    l->line = gpiod_chip_get_line(l->chip, offset);
    if (!l->line) {
        int saved = errno;
        gpiod_chip_close(l->chip);
        free(l);
        errno = saved;
        return NULL;
    }
    return l;
}

static void close_line(struct unwind_gpio_line *l)
{
    int saved = errno;
    gpiod_chip_close(l->chip); // also releases the line if it was requested
    free(l);
    errno = saved;
}

static struct unwind_gpio_line *request_output(const char *chip_path, unsigned int offset,
                                               const char *consumer, int initial_value)
{
    struct unwind_gpio_line *l = open_line(chip_path, offset);
    if (!l)
        return NULL;
    if (gpiod_line_request_output(l->line, consumer, initial_value ? 1 : 0) < 0) {
        close_line(l);
        return NULL;
    }
    l->is_output = 1;
    return l;
}

static struct unwind_gpio_line *request_input_edges(const char *chip_path, unsigned int offset,
                                                    const char *consumer, unwind_gpio_bias bias)
{
    int flags = 0;
    switch (bias) {
    case UNWIND_GPIO_BIAS_AS_IS: flags = 0; break;
    case UNWIND_GPIO_BIAS_DISABLED: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
    case UNWIND_GPIO_BIAS_PULL_UP: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
    case UNWIND_GPIO_BIAS_PULL_DOWN: flags = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
    default: errno = EINVAL; return NULL;
    }
    struct unwind_gpio_line *l = open_line(chip_path, offset);
    if (!l)
        return NULL;
    if (gpiod_line_request_both_edges_events_flags(l->line, consumer, flags) < 0) {
        close_line(l);
        return NULL;
    }
    l->fd = gpiod_line_event_get_fd(l->line);
    if (l->fd < 0) {
        close_line(l);
        return NULL;
    }
    return l;
}

static int line_set(struct unwind_gpio_line *l, int value)
{
    return gpiod_line_set_value(l->line, value ? 1 : 0);
}

static int read_edges(struct unwind_gpio_line *l, unwind_gpio_edge *edges, unsigned int max)
{
    struct gpiod_line_event events[UNWIND_GPIO_READ_BATCH];
    if (max > UNWIND_GPIO_READ_BATCH)
        max = UNWIND_GPIO_READ_BATCH;
    int n = gpiod_line_event_read_fd_multiple(l->fd, events, max);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        edges[i].offset = l->offset;
        edges[i].rising = events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
        edges[i].timestamp_ns = (uint64_t)events[i].ts.tv_sec * 1000000000ull +
                                (uint64_t)events[i].ts.tv_nsec;
    }
    return n;
}

static void line_release(struct unwind_gpio_line *l)
{
    int saved = errno;
    gpiod_line_release(l->line);
    gpiod_chip_close(l->chip);
    free(l);
    errno = saved;
}

#else
// ============================== libgpiod v2 (2.x) ==============================

struct unwind_gpio_line {
    struct gpiod_line_request *request; // independent of the chip, which is closed at once
    struct gpiod_edge_event_buffer *buffer; // inputs only
    unsigned int offset;
    int fd;
    int is_output;
};

static int chip_info_at(const char *path, char *name, size_t name_len, char *label,
                        size_t label_len, unsigned int *num_lines)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return -1;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    int rc = -1;
    if (info) {
        rc = 0;
        if (copy_string(name, name_len, gpiod_chip_info_get_name(info)) < 0 ||
            copy_string(label, label_len, gpiod_chip_info_get_label(info)) < 0)
            rc = -1;
        if (num_lines)
            *num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
        gpiod_chip_info_free(info);
    }
    int saved = errno;
    gpiod_chip_close(chip);
    errno = saved;
    return rc;
}

static int chip_offset_of_name(const char *path, const char *name, unsigned int *offset)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return -1;
    int found = gpiod_chip_get_line_offset_from_name(chip, name); // -1 + ENOENT if absent
    int saved = errno;
    gpiod_chip_close(chip);
    errno = saved;
    if (found < 0)
        return -1;
    *offset = (unsigned int)found;
    return 0;
}

/// One line requested with `settings`; the chip is opened for the request only.
static struct gpiod_line_request *request_one(const char *chip_path, unsigned int offset,
                                              const char *consumer,
                                              struct gpiod_line_settings *settings)
{
    struct gpiod_chip *chip = gpiod_chip_open(chip_path);
    if (!chip)
        return NULL;
    struct gpiod_line_request *request = NULL;
    struct gpiod_line_config *line_cfg = gpiod_line_config_new();
    struct gpiod_request_config *req_cfg = gpiod_request_config_new();
    if (line_cfg && req_cfg &&
        gpiod_line_config_add_line_settings(line_cfg, &offset, 1, settings) == 0) {
        gpiod_request_config_set_consumer(req_cfg, consumer);
        request = gpiod_chip_request_lines(chip, req_cfg, line_cfg);
    }
    int saved = errno;
    if (req_cfg)
        gpiod_request_config_free(req_cfg);
    if (line_cfg)
        gpiod_line_config_free(line_cfg);
    gpiod_chip_close(chip);
    errno = saved;
    return request;
}

static struct unwind_gpio_line *request_output(const char *chip_path, unsigned int offset,
                                               const char *consumer, int initial_value)
{
    struct unwind_gpio_line *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->fd = -1;
    l->offset = offset;
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    if (!settings) {
        free(l);
        errno = ENOMEM;
        return NULL;
    }
    if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) == 0 &&
        gpiod_line_settings_set_output_value(settings, initial_value ? GPIOD_LINE_VALUE_ACTIVE
                                                                     : GPIOD_LINE_VALUE_INACTIVE) == 0)
        l->request = request_one(chip_path, offset, consumer, settings);
    int saved = errno;
    gpiod_line_settings_free(settings);
    if (!l->request) {
        free(l);
        errno = saved;
        return NULL;
    }
    l->is_output = 1;
    return l;
}

static struct unwind_gpio_line *request_input_edges(const char *chip_path, unsigned int offset,
                                                    const char *consumer, unwind_gpio_bias bias)
{
    enum gpiod_line_bias b;
    switch (bias) {
    case UNWIND_GPIO_BIAS_AS_IS: b = GPIOD_LINE_BIAS_AS_IS; break;
    case UNWIND_GPIO_BIAS_DISABLED: b = GPIOD_LINE_BIAS_DISABLED; break;
    case UNWIND_GPIO_BIAS_PULL_UP: b = GPIOD_LINE_BIAS_PULL_UP; break;
    case UNWIND_GPIO_BIAS_PULL_DOWN: b = GPIOD_LINE_BIAS_PULL_DOWN; break;
    default: errno = EINVAL; return NULL;
    }
    struct unwind_gpio_line *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->fd = -1;
    l->offset = offset;
    l->buffer = gpiod_edge_event_buffer_new(UNWIND_GPIO_READ_BATCH);
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    if (l->buffer && settings &&
        gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) == 0 &&
        gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH) == 0 &&
        gpiod_line_settings_set_bias(settings, b) == 0 &&
        gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC) == 0)
        l->request = request_one(chip_path, offset, consumer, settings);
    else if (!l->buffer || !settings)
        errno = ENOMEM;
    int saved = errno;
    if (settings)
        gpiod_line_settings_free(settings);
    if (!l->request) {
        if (l->buffer)
            gpiod_edge_event_buffer_free(l->buffer);
        free(l);
        errno = saved;
        return NULL;
    }
    l->fd = gpiod_line_request_get_fd(l->request); // never fails
    return l;
}

static int line_set(struct unwind_gpio_line *l, int value)
{
    return gpiod_line_request_set_value(l->request, l->offset,
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

static int read_edges(struct unwind_gpio_line *l, unwind_gpio_edge *edges, unsigned int max)
{
    if (max > UNWIND_GPIO_READ_BATCH)
        max = UNWIND_GPIO_READ_BATCH;
    int n = gpiod_line_request_read_edge_events(l->request, l->buffer, max);
    if (n < 0)
        return -1;
    int out = 0;
    for (int i = 0; i < n; i++) {
        struct gpiod_edge_event *e = gpiod_edge_event_buffer_get_event(l->buffer, (unsigned long)i);
        if (!e)
            break;
        edges[out].offset = gpiod_edge_event_get_line_offset(e);
        edges[out].rising = gpiod_edge_event_get_event_type(e) == GPIOD_EDGE_EVENT_RISING_EDGE;
        edges[out].timestamp_ns = gpiod_edge_event_get_timestamp_ns(e);
        out++;
    }
    return out;
}

static void line_release(struct unwind_gpio_line *l)
{
    int saved = errno;
    gpiod_line_request_release(l->request);
    if (l->buffer)
        gpiod_edge_event_buffer_free(l->buffer);
    free(l);
    errno = saved;
}

#endif

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
            (void)line_set(line, 0);
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
                if (chip_info_at(dev, NULL, 0, label, sizeof(label), NULL) == 0 &&
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
    return copy_string(path, path_len, candidate);
}

int unwind_gpio_chip_info(const char *path, char *name, size_t name_len, char *label,
                          size_t label_len, unsigned int *num_lines)
{
    return chip_info_at(path, name, name_len, label, label_len, num_lines);
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
        if (chip_offset_of_name(dev, name, offset) == 0) {
            rc = copy_string(chip_path, chip_path_len, dev);
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
    unwind_gpio_line *line = request_output(chip_path, offset, consumer, initial_value);
    if (line && register_output(line) < 0) {
        line_release(line);
        errno = ENOSPC;
        return NULL;
    }
    return line;
}

unwind_gpio_line *unwind_gpio_request_input_edges(const char *chip_path, unsigned int offset,
                                                  const char *consumer, unwind_gpio_bias bias)
{
    unwind_gpio_line *line = request_input_edges(chip_path, offset, consumer, bias);
    if (!line)
        return NULL;
    // The loop reads only after poll(2) says readable, but a read must never block it anyway.
    int flags = fcntl(line->fd, F_GETFL);
    if (flags < 0 || fcntl(line->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        int saved = errno;
        line_release(line);
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
    return line_set(line, value);
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
    int n = read_edges(line, edges, max_edges);
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
    line_release(line);
}

#endif // __linux__
