#ifndef JUKEBOX_CICAL_SHIM_H
#define JUKEBOX_CICAL_SHIM_H

#include <libical/ical.h>

#endif
