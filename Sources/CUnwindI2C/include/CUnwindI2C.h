#pragma once
// Tiny shim over the i2c-dev ioctls, filled in by the I2C work.
