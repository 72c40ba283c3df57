#include "jukebox_build.h"

/* Package.swift defines JUKEBOX_VERSION, a string, from the environment variable of that name;
   only this file is compiled again when it changes, and the programs are linked again. */
const char *jukebox_build_version(void) {
#ifdef JUKEBOX_VERSION
    return JUKEBOX_VERSION;
#else
    return 0;
#endif
}
