// Linux headers the Glibc module does not export to Swift. Declarations only.
#pragma once
#ifdef __linux__
#include <sys/timerfd.h>
#include <sys/prctl.h>
#include <pty.h>
#endif

/// TIOCGWINSZ on `fd` (ioctl is variadic, which Swift cannot call): 0 and the size, or -1 and errno.
int unwind_terminal_size(int fd, unsigned short *columns, unsigned short *rows);
