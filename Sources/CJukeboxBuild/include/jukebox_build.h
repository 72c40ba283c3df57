#ifndef JUKEBOX_BUILD_H
#define JUKEBOX_BUILD_H

/* The version this build was given (JUKEBOX_VERSION=… swift build), or NULL when it was given
   none and the programs are the version their source says. */
const char *jukebox_build_version(void);

#endif
