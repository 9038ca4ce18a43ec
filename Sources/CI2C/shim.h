// libi2c ships no pkg-config file: the headers are found on the default include path.
#include <linux/i2c.h>
#include <linux/i2c-dev.h>
#include <i2c/smbus.h>
