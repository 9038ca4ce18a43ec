#include "CUnwindI2C.h"

#ifdef __linux__
#include <errno.h>
#include <sys/ioctl.h>
#include <linux/i2c.h>
#include <linux/i2c-dev.h>
#include <i2c/smbus.h>

int unwind_i2c_set_slave(int fd, uint16_t address) {
    return ioctl(fd, I2C_SLAVE, (unsigned long)address) < 0 ? -1 : 0;
}

int unwind_i2c_functionality(int fd, unsigned long *funcs) {
    return ioctl(fd, I2C_FUNCS, funcs) < 0 ? -1 : 0;
}

unsigned long unwind_i2c_func_plain_i2c(void) { return I2C_FUNC_I2C; }
unsigned long unwind_i2c_func_smbus_write_i2c_block(void) { return I2C_FUNC_SMBUS_WRITE_I2C_BLOCK; }

int unwind_i2c_write_messages(int fd, uint16_t address,
                              const uint8_t *first, size_t first_length,
                              const uint8_t *second, size_t second_length) {
    if (first == NULL || first_length == 0 || first_length > 8192 ||
        (second == NULL) != (second_length == 0) || second_length > 8192) {
        errno = EINVAL;
        return -1;
    }
    // The kernel only reads write messages: casting away const is safe.
    struct i2c_msg messages[2] = {
        { .addr = address, .flags = 0, .len = (__u16)first_length, .buf = (__u8 *)first },
        { .addr = address, .flags = 0, .len = (__u16)second_length, .buf = (__u8 *)second },
    };
    struct i2c_rdwr_ioctl_data data = { .msgs = messages, .nmsgs = second == NULL ? 1 : 2 };
    return ioctl(fd, I2C_RDWR, &data) < 0 ? -1 : 0;
}

int unwind_i2c_smbus_write_block(int fd, uint8_t reg, const uint8_t *bytes, size_t length) {
    if (bytes == NULL || length == 0 || length > I2C_SMBUS_BLOCK_MAX) {
        errno = EINVAL;
        return -1;
    }
    // libi2c 4.x returns -errno; older versions return -1 with errno set. Handle both.
    __s32 r = i2c_smbus_write_i2c_block_data(fd, reg, (__u8)length, bytes);
    if (r < 0) {
        if (r != -1) errno = -r;
        return -1;
    }
    return 0;
}

#endif
