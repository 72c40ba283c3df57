#ifndef JUKEBOX_CALSA_SHIM_H
#define JUKEBOX_CALSA_SHIM_H

#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>
/* The sink wakes a write waiting in poll() through an eventfd (skip, pause, stop). */
#include <sys/eventfd.h>

/* libasound reports some problems by printing to stderr through a variadic handler,
 * which Swift cannot implement. This shim formats the message and hands it to a
 * plain callback so the messages reach the daemon's logger instead of stderr. */
typedef void (*jb_alsa_log_fn)(const char *file, int line, const char *function, int err, const char *message);

static jb_alsa_log_fn jb_alsa_log_target = 0;

static void jb_alsa_error_trampoline(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    char message[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    if (jb_alsa_log_target) jb_alsa_log_target(file, line, function, err, message);
}

static inline void jb_alsa_install_error_handler(jb_alsa_log_fn target) {
    jb_alsa_log_target = target;
    snd_lib_error_set_handler(target ? jb_alsa_error_trampoline : 0);
}

#endif
