// Linux headers the Glibc module does not export to Swift. Declarations only.
#pragma once
#include <stddef.h>
#ifdef __linux__
#include <sys/timerfd.h>
#include <sys/prctl.h>
#include <pty.h>
#include <sys/vfs.h>
#endif

/// TIOCGWINSZ on `fd` (ioctl is variadic, which Swift cannot call): 0 and the size, or -1 and errno.
int unwind_terminal_size(int fd, unsigned short *columns, unsigned short *rows);

/// Unblocks `signals` in the calling thread and installs a handler for each that only write(2)s
/// the signal's number to a non-blocking self-pipe (async-signal-safe, on whichever thread the
/// signal lands); returns the pipe's read end for poll(2), or -1 and errno. Calling it again
/// adds signals to the same pipe.
int unwind_stop_signals_install(const int *signals, size_t count);

/// open(2) of an unnamed regular file in `directory` (O_TMPFILE | O_WRONLY | O_CLOEXEC, whose
/// value differs between architectures and is a macro Swift does not import): the descriptor,
/// or -1 and errno (EOPNOTSUPP, EISDIR or EINVAL where the file system has no unnamed files).
int unwind_open_unnamed(const char *directory, unsigned int mode);

/// Names the calling thread (prctl PR_SET_NAME, which is variadic; at most 15 bytes are kept):
/// what ps -L, top -H and a core dump show. 0, or -1 and errno.
int unwind_name_thread(const char *name);
