// Linux headers the Glibc module does not export to Swift. Declarations only.
#pragma once
#ifdef __linux__
#include <sys/timerfd.h>
#include <sys/prctl.h>
#include <pty.h>
#endif
