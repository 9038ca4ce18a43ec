#include "CUnwindGPIO.h"
