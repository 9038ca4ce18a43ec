// The shim's primitives on libgpiod v1 (1.6, Debian bookworm): see gpiod_impl.h.
#if defined(__linux__)

#include "gpiod_impl.h"

#if defined(GPIOD_LINE_BULK_MAX_LINES)

#include <errno.h>
#include <stdlib.h>

int unwind_gpiod_chip_info(const char *path, char *name, size_t name_len, char *label,
                           size_t label_len, unsigned int *num_lines)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return -1;
    int rc = 0;
    if (unwind_gpiod_copy_string(name, name_len, gpiod_chip_name(chip)) < 0 ||
        unwind_gpiod_copy_string(label, label_len, gpiod_chip_label(chip)) < 0)
        rc = -1;
    if (num_lines)
        *num_lines = gpiod_chip_num_lines(chip);
    int saved = errno;
    gpiod_chip_close(chip);
    errno = saved;
    return rc;
}

int unwind_gpiod_offset_of_name(const char *path, const char *name, unsigned int *offset)
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

struct unwind_gpio_line *unwind_gpiod_request_output(const char *chip_path, unsigned int offset,
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

struct unwind_gpio_line *unwind_gpiod_request_input_edges(const char *chip_path, unsigned int offset,
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

int unwind_gpiod_line_set(struct unwind_gpio_line *l, int value)
{
    return gpiod_line_set_value(l->line, value ? 1 : 0);
}

int unwind_gpiod_line_get(struct unwind_gpio_line *l)
{
    return gpiod_line_get_value(l->line);
}

int unwind_gpiod_read_edges(struct unwind_gpio_line *l, unwind_gpio_edge *edges, unsigned int max)
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

void unwind_gpiod_line_release(struct unwind_gpio_line *l)
{
    int saved = errno;
    gpiod_line_release(l->line);
    gpiod_chip_close(l->chip);
    free(l);
    errno = saved;
}

#endif // GPIOD_LINE_BULK_MAX_LINES
#endif // __linux__
