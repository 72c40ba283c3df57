#ifndef JUKEBOX_CSOXR_SHIM_H
#define JUKEBOX_CSOXR_SHIM_H

#include <soxr.h>

#endif
