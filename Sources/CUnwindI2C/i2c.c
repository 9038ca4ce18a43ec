#include "CUnwindI2C.h"
