#ifndef JUKEBOX_CEBUR128_SHIM_H
#define JUKEBOX_CEBUR128_SHIM_H

#include <ebur128.h>

#endif
