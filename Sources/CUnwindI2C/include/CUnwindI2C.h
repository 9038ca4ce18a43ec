#pragma once
// Tiny shim over the i2c-dev ioctls: typed wrappers for the variadic ioctl(2), which Swift cannot
// call. Every function returns 0 on success and -1 with errno set on failure; none retries EINTR
// (the Swift side does). Declarations use plain C types so Swift never sees the kernel headers.
#include <stddef.h>
#include <stdint.h>

#ifdef __linux__

/// ioctl(fd, I2C_SLAVE, address): the 7-bit address later read(2)/write(2) and SMBus calls use.
int unwind_i2c_set_slave(int fd, uint16_t address);

/// ioctl(fd, I2C_FUNCS, &funcs): the adapter's I2C_FUNC_* bit mask.
int unwind_i2c_functionality(int fd, unsigned long *funcs);

/// The I2C_FUNC_* bits the Swift side asks about (the kernel header's values).
unsigned long unwind_i2c_func_plain_i2c(void);
unsigned long unwind_i2c_func_smbus_write_i2c_block(void);

/// ioctl(fd, I2C_RDWR) with one or two write messages to `address` in one combined transaction
/// (START addr W first... [repeated START addr W second...] STOP). `second` may be NULL (then
/// `second_length` must be 0): one message. Lengths are 1...8192 (the i2c-dev limit; EINVAL otherwise).
int unwind_i2c_write_messages(int fd, uint16_t address,
                              const uint8_t *first, size_t first_length,
                              const uint8_t *second, size_t second_length);

/// i2c_smbus_write_i2c_block_data(fd, reg, length, bytes), i.e. ioctl(fd, I2C_SMBUS) with
/// I2C_SMBUS_I2C_BLOCK_DATA: START addr W reg bytes... STOP. `length` is 1...32 (EINVAL
/// otherwise: libi2c would silently truncate).
int unwind_i2c_smbus_write_block(int fd, uint8_t reg, const uint8_t *bytes, size_t length);

#endif
