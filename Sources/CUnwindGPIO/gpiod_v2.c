// The shim's primitives on libgpiod v2 (2.x): see gpiod_impl.h. Not compiled on the development
// machine (it has v1); written against the v2 gpiod.h.
#if defined(__linux__)

#include "gpiod_impl.h"

#if !defined(GPIOD_LINE_BULK_MAX_LINES)

#include <errno.h>
#include <stdlib.h>

int unwind_gpiod_chip_info(const char *path, char *name, size_t name_len, char *label,
                           size_t label_len, unsigned int *num_lines)
{
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip)
        return -1;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    int rc = -1;
    if (info) {
        rc = 0;
        if (unwind_gpiod_copy_string(name, name_len, gpiod_chip_info_get_name(info)) < 0 ||
            unwind_gpiod_copy_string(label, label_len, gpiod_chip_info_get_label(info)) < 0)
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

int unwind_gpiod_offset_of_name(const char *path, const char *name, unsigned int *offset)
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

struct unwind_gpio_line *unwind_gpiod_request_output(const char *chip_path, unsigned int offset,
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

struct unwind_gpio_line *unwind_gpiod_request_input_edges(const char *chip_path, unsigned int offset,
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

int unwind_gpiod_line_set(struct unwind_gpio_line *l, int value)
{
    return gpiod_line_request_set_value(l->request, l->offset,
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

int unwind_gpiod_line_get(struct unwind_gpio_line *l)
{
    enum gpiod_line_value v = gpiod_line_request_get_value(l->request, l->offset);
    if (v == GPIOD_LINE_VALUE_ERROR)
        return -1;
    return v == GPIOD_LINE_VALUE_ACTIVE ? 1 : 0;
}

int unwind_gpiod_read_edges(struct unwind_gpio_line *l, unwind_gpio_edge *edges, unsigned int max)
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

void unwind_gpiod_line_release(struct unwind_gpio_line *l)
{
    int saved = errno;
    gpiod_line_request_release(l->request);
    if (l->buffer)
        gpiod_edge_event_buffer_free(l->buffer);
    free(l);
    errno = saved;
}

#endif // !GPIOD_LINE_BULK_MAX_LINES
#endif // __linux__
