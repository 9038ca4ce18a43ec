#pragma once
// What gpio.c needs from the libgpiod it is built against: one implementation per libgpiod
// major version, gpiod_v1.c (1.6, Debian bookworm) and gpiod_v2.c (2.x), chosen by
// `#if defined(GPIOD_LINE_BULK_MAX_LINES)` (a v1-only macro). Internal to the shim: Swift sees
// only include/CUnwindGPIO.h. Conventions as there: -1 or NULL with errno set on failure.

#include "CUnwindGPIO.h"

#include <gpiod.h>

#include <stddef.h>

#define UNWIND_GPIO_READ_BATCH 16u

#define UNWIND_GPIOD_INTERNAL __attribute__((visibility("hidden")))

#if defined(GPIOD_LINE_BULK_MAX_LINES)
struct unwind_gpio_line {
    struct gpiod_chip *chip; // v1 lines live inside their chip: one chip per request
    struct gpiod_line *line;
    unsigned int offset;
    int fd;
    int is_output;
};
#else
struct unwind_gpio_line {
    struct gpiod_line_request *request; // independent of the chip, which is closed at once
    struct gpiod_edge_event_buffer *buffer; // inputs only
    unsigned int offset;
    int fd;
    int is_output;
};
#endif

/// Copies `s` into `out` (NULL `out` or zero `out_len`: nothing to do); ENAMETOOLONG if it does not fit.
UNWIND_GPIOD_INTERNAL int unwind_gpiod_copy_string(char *out, size_t out_len, const char *s);

/// Opens the chip just long enough to read its kernel name, label and line count.
UNWIND_GPIOD_INTERNAL int unwind_gpiod_chip_info(const char *path, char *name, size_t name_len, char *label,
                                                 size_t label_len, unsigned int *num_lines);
/// The offset of the line named `name` on the chip at `path`; -1 with ENOENT if it has none.
UNWIND_GPIOD_INTERNAL int unwind_gpiod_offset_of_name(const char *path, const char *name, unsigned int *offset);
UNWIND_GPIOD_INTERNAL struct unwind_gpio_line *unwind_gpiod_request_output(const char *chip_path, unsigned int offset,
                                                                           const char *consumer, int initial_value);
UNWIND_GPIOD_INTERNAL struct unwind_gpio_line *unwind_gpiod_request_input_edges(const char *chip_path,
                                                                                unsigned int offset,
                                                                                const char *consumer,
                                                                                unwind_gpio_bias bias);
UNWIND_GPIOD_INTERNAL int unwind_gpiod_line_set(struct unwind_gpio_line *l, int value);
/// The line's level: 1 high, 0 low, -1 with errno.
UNWIND_GPIOD_INTERNAL int unwind_gpiod_line_get(struct unwind_gpio_line *l);
UNWIND_GPIOD_INTERNAL int unwind_gpiod_read_edges(struct unwind_gpio_line *l, unwind_gpio_edge *edges, unsigned int max);
UNWIND_GPIOD_INTERNAL void unwind_gpiod_line_release(struct unwind_gpio_line *l);
