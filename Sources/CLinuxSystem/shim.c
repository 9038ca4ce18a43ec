#include "CLinuxSystem.h"
#include <sys/ioctl.h>

int unwind_terminal_size(int fd, unsigned short *columns, unsigned short *rows) {
    struct winsize w;
    if (ioctl(fd, TIOCGWINSZ, &w) != 0) return -1;
    *columns = w.ws_col;
    *rows = w.ws_row;
    return 0;
}
