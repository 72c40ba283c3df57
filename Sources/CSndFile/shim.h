#ifndef JUKEBOX_CSNDFILE_SHIM_H
#define JUKEBOX_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
