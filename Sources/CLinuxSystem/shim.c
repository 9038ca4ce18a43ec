#define _GNU_SOURCE
#include "CLinuxSystem.h"
#include <sys/ioctl.h>

int unwind_terminal_size(int fd, unsigned short *columns, unsigned short *rows) {
    struct winsize w;
    if (ioctl(fd, TIOCGWINSZ, &w) != 0) return -1;
    *columns = w.ws_col;
    *rows = w.ws_row;
    return 0;
}

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>

static int stop_pipe[2] = {-1, -1};

static void unwind_stop_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    // A full pipe already says "stop": losing this byte loses nothing.
    ssize_t r = write(stop_pipe[1], &b, 1);
    (void)r;
    errno = saved;
}

int unwind_stop_signals_install(const int *signals, size_t count)
{
    if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
        return -1;
    // A parent may hand the signals over blocked (or ignored): stop signals must reach the
    // handler whatever the process inherited. Threads started later inherit this mask.
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < count; i++)
        sigaddset(&set, signals[i]);
    if (pthread_sigmask(SIG_UNBLOCK, &set, NULL) != 0)
        return -1;
    for (size_t i = 0; i < count; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = unwind_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        if (sigaction(signals[i], &sa, NULL) != 0)
            return -1;
    }
    return stop_pipe[0];
}

int unwind_open_unnamed(const char *directory, unsigned int mode) {
#ifdef O_TMPFILE
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)mode);
#else
    (void)directory; (void)mode;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int unwind_name_thread(const char *name) {
#ifdef __linux__
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
#else
    (void)name;
    return 0;
#endif
}
