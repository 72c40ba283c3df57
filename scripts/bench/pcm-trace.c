/* LD_PRELOAD shim for the benchmarks: notes, with CLOCK_MONOTONIC timestamps, when a
 * process opens an ALSA PCM, first writes frames to it after each open, prepare, drain or
 * drop (after any of them the next write starts a new stream), and drops or rewinds it. The same shim goes into jukeboxd, MPD and aplay, so "first frame reaching
 * ALSA" is observed at the same call in each, from outside the player.
 *
 *   PCM_TRACE=/path/trace.log LD_PRELOAD=pcm-trace.so player ...
 *
 * Each line: "<event> <nanoseconds>" with event open, first-write, drop or rewind.
 */
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int written_since_start = 1;

static long long now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void note_at(const char *event, long long when) {
    const char *path = getenv("PCM_TRACE");
    if (!path) return;
    char line[64];
    int length = snprintf(line, sizeof line, "%s %lld\n", event, when);
    /* O_APPEND with one write per line keeps lines whole when several threads note. */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t ignored = write(fd, line, (size_t)length);
    (void)ignored;
    close(fd);
}

static void note(const char *event) { note_at(event, now_ns()); }

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

int snd_pcm_open(snd_pcm_t **pcm, const char *name, snd_pcm_stream_t stream, int mode) {
    int result = NEXT(snd_pcm_open)(pcm, name, stream, mode);
    if (result == 0 && stream == SND_PCM_STREAM_PLAYBACK) {
        atomic_store(&written_since_start, 0);
        note("open");
    }
    return result;
}

snd_pcm_sframes_t snd_pcm_writei(snd_pcm_t *pcm, const void *buffer, snd_pcm_uframes_t size) {
    /* The frames reach ALSA when the call is made; a first write may block until the
     * stream starts, which is not part of the figure. */
    long long called = now_ns();
    snd_pcm_sframes_t result = NEXT(snd_pcm_writei)(pcm, buffer, size);
    if (result > 0 && atomic_exchange(&written_since_start, 1) == 0) note_at("first-write", called);
    return result;
}

int snd_pcm_drop(snd_pcm_t *pcm) {
    atomic_store(&written_since_start, 0);
    note("drop");
    return NEXT(snd_pcm_drop)(pcm);
}

int snd_pcm_drain(snd_pcm_t *pcm) {
    int result = NEXT(snd_pcm_drain)(pcm);
    atomic_store(&written_since_start, 0);
    return result;
}

int snd_pcm_prepare(snd_pcm_t *pcm) {
    atomic_store(&written_since_start, 0);
    return NEXT(snd_pcm_prepare)(pcm);
}

snd_pcm_sframes_t snd_pcm_rewind(snd_pcm_t *pcm, snd_pcm_uframes_t frames) {
    note("rewind");
    return NEXT(snd_pcm_rewind)(pcm, frames);
}
