#pragma once
// Tiny shim over libgpiod, filled in by the GPIO work.
