// Devices.
